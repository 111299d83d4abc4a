// CSV files for download that open correctly in a spreadsheet: UTF-8 with a
// byte-order mark (Excel reads UTF-8 without one as the local code page),
// every field quoted, CRLF line ends (RFC 4180), and formula injection
// neutralised (OWASP's advice): a cell that starts with = + - @ (or a tab or
// carriage return, which some spreadsheets skip before reading a formula) is
// prefixed with an apostrophe, so it is read as text and never run.
export const CSV_BOM = '\uFEFF';

const FORMULA_START = /^[=+\-@\t\r]/;

export function csvCell(value: unknown): string {
  let text = value === null || value === undefined ? '' : typeof value === 'string' ? value : String(value);
  if (FORMULA_START.test(text)) text = `'${text}`;
  return `"${text.replace(/"/g, '""')}"`;
}

export function csvLine(values: readonly unknown[]): string {
  return `${values.map(csvCell).join(',')}\r\n`;
}

/** A file name for Content-Disposition (ASCII, and RFC 5987's UTF-8 form). */
export function attachment(fileName: string): string {
  const ascii = fileName.replace(/[^\w.-]+/g, '_');
  return `attachment; filename="${ascii}"; filename*=UTF-8''${encodeURIComponent(fileName)}`;
}
