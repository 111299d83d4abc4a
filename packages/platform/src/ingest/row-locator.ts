// Which rows of a spreadsheet or CSV a chunk holds, for citations ("rows 4–8").
// Their chunks hold whole rows, in order (chunk-stream.ts: no overlap, a few
// rows each), so each chunk's rows are found from where the last one's ended:
// the rows whose text the chunk holds, one after another; a row longer than a
// chunk (cut) is the row that holds the chunk's last words. Only a window of
// rows past the last chunk's is looked at, so a sheet of 200,000 rows costs
// no more per chunk than a short one.
import type { Chunk } from './chunker.js';

/** A row as read: the text it became, and its number in its sheet or file (1-based, the header row 1). */
export interface RowText {
  text: string;
  row: number;
}

const norm = (s: string) => s.replace(/\s+/g, ' ').trim();
/** Rows past the last chunk's that a chunk's first row is looked for among. */
const WINDOW = 64;

/** A locator for the chunks of one document, asked in document order: the first and last row numbers. */
export function rowLocator(rows: RowText[]): (chunk: Chunk) => [number, number] | undefined {
  const texts = rows.map((r) => norm(r.text));
  let cursor = 0;
  return (chunk) => {
    // The chunk's own text, without the headings written at its top (a sheet's name).
    let body = chunk.text;
    for (const heading of chunk.titlePath) if (body.startsWith(heading)) body = body.slice(heading.length).replace(/^\n+/, '');
    const text = norm(body);
    if (!text) return undefined;
    const end = Math.min(texts.length, cursor + WINDOW);
    let first = -1;
    for (let i = cursor; i < end; i++) {
      if (texts[i] && text.includes(texts[i]!)) {
        first = i;
        break;
      }
    }
    if (first < 0) {
      // A row cut across chunks: the row holding this chunk's last words.
      const tail = text.slice(-30);
      for (let i = Math.max(0, cursor - 1); i < end; i++) {
        if (texts[i]!.includes(tail)) {
          cursor = i;
          return [rows[i]!.row, rows[i]!.row];
        }
      }
      return undefined;
    }
    const start = text.indexOf(texts[first]!);
    let last = first;
    let at = start + texts[first]!.length;
    for (let i = first + 1; i < texts.length; i++) {
      const found = texts[i] ? text.indexOf(texts[i]!, at) : -1;
      if (found < 0) break;
      last = i;
      at = found + texts[i]!.length;
    }
    cursor = last + 1;
    // The end of a row cut before it, and the start of one cut after it, are held too.
    const before = text.slice(0, start).trim();
    if (before && first > 0 && texts[first - 1]!.endsWith(before.slice(-30))) first--;
    const after = text.slice(at).trim();
    if (after && last + 1 < texts.length && texts[last + 1]!.startsWith(after.slice(0, 30))) cursor = ++last;
    return [rows[first]!.row, rows[last]!.row];
  };
}
