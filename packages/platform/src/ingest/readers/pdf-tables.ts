// Tables on a PDF page, found from where the text stands: a PDF has no table
// markup, only text drawn at positions. A line whose items stand far apart
// (a gap wider than its text is tall) has cells (pdf.ts's pageLines); two or
// more such lines in a row, close together, whose cells fall into the same
// columns, are a table. Columns are the spans where the rows' cells overlap
// (left-aligned text shares its start, right-aligned figures their end, so
// overlap, not a shared edge, decides), and a row with two cells in one span
// is no table row. The first row is the header.

import type { PdfLine } from './pdf-line.js';

/** Rows further apart than this many line heights end a table. */
const ROW_GAP = 2.6;

/** The Markdown table the lines `rows` make, or undefined when they are no table. */
export function tableOf(rows: PdfLine[]): string | undefined {
  if (rows.length < 2 || rows.some((r) => !r.cells || r.cells.length < 2)) return undefined;
  const spans = columnSpans(rows);
  if (spans.length < 2) return undefined;
  const grid: string[][] = [];
  for (const row of rows) {
    const cells: string[] = Array(spans.length).fill('');
    for (const cell of row.cells!) {
      const col = spans.findIndex((s) => cell.x < s.endX && cell.endX > s.x);
      if (col < 0 || cells[col]) return undefined; // two cells of one row in one column: no table
      cells[col] = cell.text.replace(/\|/g, '\\|');
    }
    grid.push(cells);
  }
  const line = (cells: string[]) => `| ${cells.join(' | ')} |`;
  return [line(grid[0]!), line(spans.map(() => '---')), ...grid.slice(1).map(line)].join('\n');
}

/** The columns: the cells' x ranges merged where they overlap, left to right. */
function columnSpans(rows: PdfLine[]): { x: number; endX: number }[] {
  const ranges = rows.flatMap((r) => r.cells!.map((c) => ({ x: c.x, endX: c.endX }))).sort((a, b) => a.x - b.x);
  const spans: { x: number; endX: number }[] = [];
  for (const r of ranges) {
    const last = spans.at(-1);
    if (last && r.x < last.endX) last.endX = Math.max(last.endX, r.endX);
    else spans.push({ ...r });
  }
  return spans;
}

/**
 * The tables among a page's lines: for each that starts a table, the
 * Markdown and how many lines it takes. A table is the longest run of lines
 * with cells, each close below the one before, that makes one.
 */
export function findTables(lines: PdfLine[]): Map<number, { markdown: string; lines: number }> {
  const found = new Map<number, { markdown: string; lines: number }>();
  let i = 0;
  while (i < lines.length) {
    let end = i;
    while (end < lines.length && (lines[end]!.cells?.length ?? 0) >= 2 && (end === i || closeBelow(lines[end - 1]!, lines[end]!))) end++;
    // The longest run from i that is a table (a run whose last rows break the columns may still start with one).
    let made = false;
    for (let stop = end; stop - i >= 2; stop--) {
      const markdown = tableOf(lines.slice(i, stop));
      if (markdown) {
        found.set(i, { markdown, lines: stop - i });
        i = stop;
        made = true;
        break;
      }
    }
    if (!made) i = Math.max(i + 1, end);
  }
  return found;
}

function closeBelow(prev: PdfLine, line: PdfLine): boolean {
  const gap = prev.y - line.y;
  return gap > 0 && gap <= Math.max(prev.height, line.height) * ROW_GAP;
}
