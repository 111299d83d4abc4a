// XLSX -> Markdown with ExcelJS: each sheet under its own heading (`# Sheet:
// Revenue`, so that every chunk of it carries the sheet's name in its title
// path), and each table row as one block of "header: value" lines, as CSV
// files are read (csv.ts says why rows, not a Markdown table). The chunker
// packs whole blocks, so a row is never cut unless it alone is over a chunk.
//
// What a spreadsheet holds besides plain values: a formula gives the value
// Excel cached for it; a cell inside a merged range gives the range's value
// (told once in a row when the range spans columns); rich text and
// links give their text; dates an ISO date. Empty rows and sheets are left
// out. A first row with a single cell above a wider one is a caption, not
// the header.
//
// A workbook that unpacks past 16 MiB of XML is read as a stream, sheet by
// sheet (its merged ranges then give their value in their first cell only):
// loaded whole, 200,000 rows took 800 MB; streamed, 250 MB.
//
// A workbook is a zip: a password-protected one, one that is no zip and one
// whose entries would expand too far are refused before ExcelJS opens it
// (zip-entries.ts), so that a small file cannot take gigabytes.

import { Readable } from 'node:stream';
import ExcelJS from 'exceljs';
import { IngestError } from '../errors.js';
import { csvRowBlocks } from './csv.js';
import type { RowText } from '../row-locator.js';
import { withParseTimeout } from './parse-timeout.js';
import { checkZip } from './zip-entries.js';

export interface XlsxReadOptions {
  filename?: string;
  /** Refuse a workbook whose entries expand past this (default 256 MiB). */
  maxExpandedBytes?: number;
  /** Give up after this long (default 120 s). */
  timeoutMs?: number;
  /** Read as a stream above this much unpacked XML (default 16 MiB). */
  streamAboveBytes?: number;
}

/** Above this much unpacked XML a workbook is read as a stream: rows a sheet at a time, not a whole object model. */
const STREAM_ABOVE = 16 * 1024 * 1024;

/** A row as read: its cells' text, and which cells continue a range merged across columns. */
interface Row {
  cells: string[];
  mergedLeft: boolean[];
  /** Its number in its sheet (1-based). */
  number: number;
}

export async function readXlsx(buf: Uint8Array, opts: XlsxReadOptions = {}): Promise<{ text: string; title?: string; rows: RowText[] }> {
  const filename = opts.filename ?? 'The workbook';
  const data = Buffer.from(buf.buffer, buf.byteOffset, buf.byteLength);
  const expanded = checkZip(data, filename, 'an Excel workbook (.xlsx)', opts.maxExpandedBytes);
  let book: { title?: string; sheets: { name: string; rows: Row[] }[] };
  try {
    book = await withParseTimeout(
      expanded > (opts.streamAboveBytes ?? STREAM_ABOVE) ? streamedSheets(data) : loadedSheets(data),
      opts.timeoutMs ?? 120_000,
      filename,
    );
  } catch (err) {
    if (err instanceof IngestError) throw err;
    throw new IngestError('corrupt_file', `${filename} could not be read as an Excel workbook (.xlsx): ${(err as Error)?.message ?? err}`, { cause: err });
  }
  const parts = book.sheets.map((sheet) => ({ name: sheet.name, ...sheetText(sheet.rows) })).filter((s) => s.text);
  const title = book.title?.trim();
  return { text: parts.map((s) => `# Sheet: ${s.name}\n\n${s.text}`).join('\n\n'), rows: parts.flatMap((s) => s.rows), ...(title ? { title } : {}) };
}

/** The whole workbook loaded: merged ranges known. */
async function loadedSheets(data: Buffer): Promise<{ title?: string; sheets: { name: string; rows: Row[] }[] }> {
  const workbook = new ExcelJS.Workbook();
  await workbook.xlsx.load(data as unknown as ArrayBuffer);
  const sheets: { name: string; rows: Row[] }[] = [];
  workbook.eachSheet((sheet) => {
    const rows: Row[] = [];
    sheet.eachRow({ includeEmpty: false }, (row) => {
      const cells: string[] = [];
      const mergedLeft: boolean[] = [];
      for (let c = 1; c <= row.cellCount; c++) {
        const cell = row.getCell(c);
        cells.push(cellText(cell.value));
        // A cell of a range merged across columns: its value is the range's, already told by the range's first cell.
        mergedLeft.push(cell.isMerged && cell.master.row === cell.row && cell.master.col !== cell.col);
      }
      rows.push({ cells, mergedLeft, number: row.number });
    });
    sheets.push({ name: sheet.name, rows });
  });
  return { title: workbook.title, sheets };
}

/** A large workbook as a stream (measured: 200,000 rows in 250 MB instead of 800 MB); a merged range's value is in its first cell only. */
async function streamedSheets(data: Buffer): Promise<{ sheets: { name: string; rows: Row[] }[] }> {
  const reader = new ExcelJS.stream.xlsx.WorkbookReader(Readable.from([data]), {
    sharedStrings: 'cache',
    hyperlinks: 'ignore',
    styles: 'cache', // dates are numbers with a date format
    worksheets: 'emit',
    entries: 'emit',
  });
  const sheets: { name: string; rows: Row[] }[] = [];
  for await (const sheet of reader) {
    const rows: Row[] = [];
    for await (const row of sheet) {
      const values = row.values as ExcelJS.CellValue[];
      const cells = Array.from({ length: Math.max(0, values.length - 1) }, (_, i) => cellText(values[i + 1]));
      rows.push({ cells, mergedLeft: cells.map(() => false), number: row.number });
    }
    sheets.push({ name: (sheet as unknown as { name?: string }).name ?? `Sheet ${sheets.length + 1}`, rows });
  }
  return { sheets };
}

/** A sheet's rows as text: an optional caption, then the header and one block per row (with its row number); empty rows left out. */
function sheetText(all: Row[]): { text: string; rows: RowText[] } {
  const rows = all.filter((r) => r.cells.some((v) => v !== ''));
  const filled = (r: Row | undefined) => r?.cells.filter((v) => v !== '').length ?? 0;
  const caption = rows.length > 1 && filled(rows[0]) === 1 && filled(rows[1]) > 1 ? rows.shift()!.cells.find((v) => v !== '') : undefined;
  // The header keeps a merged name over each of its columns; a row tells a value merged across columns once.
  const table = csvRowBlocks(
    rows.map((r, i) => (i === 0 ? r.cells : r.cells.map((v, c) => (r.mergedLeft[c] ? '' : v)))),
    rows.map((r) => r.number),
  );
  return { text: [caption, table.text].filter(Boolean).join('\n\n'), rows: table.rows };
}

/** A cell's value as text: formulas their cached result, rich text and links their text, dates ISO. */
export function cellText(value: ExcelJS.CellValue): string {
  if (value === null || value === undefined) return '';
  if (value instanceof Date) return isoDate(value);
  if (typeof value !== 'object') return String(value).trim();
  if ('richText' in value)
    return value.richText
      .map((r) => r.text)
      .join('')
      .trim();
  if ('formula' in value || 'sharedFormula' in value) return cellText((value as ExcelJS.CellFormulaValue).result as ExcelJS.CellValue);
  if ('error' in value) return String(value.error);
  if ('text' in value) return cellText((value as ExcelJS.CellHyperlinkValue).text);
  return '';
}

/** A date as Excel shows a date: the day alone when it has no time of day. */
function isoDate(d: Date): string {
  if (Number.isNaN(d.getTime())) return '';
  const iso = d.toISOString();
  return iso.endsWith('T00:00:00.000Z') ? iso.slice(0, 10) : iso.slice(0, 19).replace('T', ' ');
}
