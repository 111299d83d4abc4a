// CSV -> one "header: value" block per row, blocks separated by a blank line.
//
// Why not a markdown table: a row is the unit people ask about (FastGPT imports
// each row as its own data item), and a block that names its columns stays
// meaningful wherever the chunker cuts, even when one row is split, while a
// table row without its header is just values. It is also cheaper in tokens
// than pipes and a repeated header, which matters for a 128-token embedder.
// Multi-line cells keep their line breaks, continuation lines indented by four
// spaces so that no cell line can read as a heading or a code fence.

import type { RowText } from '../row-locator.js';

export interface CsvOptions {
  /** Field delimiter; by default sniffed from the first line among , ; tab |. */
  delimiter?: string;
}

/** RFC 4180 parsing: quoted fields, doubled quotes, delimiters and newlines inside quotes. */
export function parseCsv(text: string, opts: CsvOptions = {}): string[][] {
  if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
  const delim = opts.delimiter ?? sniffDelimiter(text);
  const rows: string[][] = [];
  let row: string[] = [];
  let field = '';
  let inQuotes = false;
  let i = 0;
  const n = text.length;
  while (i < n) {
    const c = text[i];
    if (inQuotes) {
      if (c === '"') {
        if (text[i + 1] === '"') {
          field += '"';
          i += 2;
          continue;
        }
        inQuotes = false;
        i++;
        continue;
      }
      field += c;
      i++;
      continue;
    }
    if (c === '"' && field.trim() === '') {
      field = '';
      inQuotes = true;
      i++;
    } else if (text.startsWith(delim, i)) {
      row.push(field);
      field = '';
      i += delim.length;
    } else if (c === '\n' || c === '\r') {
      row.push(field);
      rows.push(row);
      row = [];
      field = '';
      i += c === '\r' && text[i + 1] === '\n' ? 2 : 1;
    } else {
      field += c;
      i++;
    }
  }
  if (field !== '' || row.length > 0) {
    row.push(field);
    rows.push(row);
  }
  // Blank lines are not rows.
  return rows.filter((r) => r.some((f) => f.trim() !== ''));
}

function sniffDelimiter(text: string): string {
  const firstLine = text.slice(0, text.search(/\r?\n|$/));
  let best = ',';
  let bestCount = 0;
  for (const d of [',', ';', '\t', '|']) {
    const count = firstLine.split(d).length - 1;
    if (count > bestCount) {
      best = d;
      bestCount = count;
    }
  }
  return best;
}

function cellText(value: string): string {
  const lines = value
    .replace(/\r\n?/g, '\n')
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l !== ''); // a blank line would split the row's block in two
  return lines.join('\n    ');
}

/**
 * Renders parsed rows: the first row is the header. Empty cells are left out;
 * a column without a header name is called `column N`.
 */
/**
 * Rows as text: the header (first row), then each row as a block of
 * `header: value` lines, blocks a blank line apart; `rowNumbers[i]` is row
 * i's number where it came from (default: its position, the header 1).
 * With each block's row number, for citations (row-locator.ts).
 */
export function csvRowBlocks(rows: string[][], rowNumbers?: number[]): { text: string; rows: RowText[] } {
  if (rows.length === 0) return { text: '', rows: [] };
  // A header such as "# of items" must not read as a markdown heading at the start of a line.
  const header = rows[0].map((h, i) => (h.trim().replace(/\s+/g, ' ') || `column ${i + 1}`).replace(/^(?=#|```|~~~|\|)/, '\\'));
  if (rows.length === 1) return { text: header.join(', '), rows: [] };
  const blocks: RowText[] = [];
  rows.slice(1).forEach((row, k) => {
    const lines: string[] = [];
    row.forEach((value, i) => {
      const cell = cellText(value);
      if (cell) lines.push(`${header[i] ?? `column ${i + 1}`}: ${cell}`);
    });
    if (lines.length) blocks.push({ text: lines.join('\n'), row: rowNumbers?.[k + 1] ?? k + 2 });
  });
  return { text: blocks.map((b) => b.text).join('\n\n'), rows: blocks };
}

export function csvRowsToText(rows: string[][]): string {
  return csvRowBlocks(rows).text;
}

export function csvToText(text: string, opts: CsvOptions = {}): string {
  return csvRowsToText(parseCsv(text, opts));
}

/** A CSV file as text, with each row block's record number (the header 1). */
export function csvToRows(text: string, opts: CsvOptions = {}): { text: string; rows: RowText[] } {
  return csvRowBlocks(parseCsv(text, opts));
}
