// PDF -> text per page with pdf.js (legacy build: the one that runs in Node 20).
//
// Reading order is the content stream's order, with text items grouped into
// lines by baseline: Word, LaTeX and browsers write text in reading order, and
// sorting by coordinates instead would interleave the columns of a two-column
// page. A larger vertical gap starts a new paragraph; inside one, lines that
// were only wrapped are joined into one line (see linesToText), so a line end
// is never read as a sentence end. Running headers, footers and page numbers
// go first (pdf-running-lines.ts); a paragraph cut by a page break is joined
// again. Lines set in a monospaced font, in a document whose text is not,
// are code: fenced, line by line as set (comment lines, "# ...", never become
// headings: comment-lines.ts). Rows of text whose parts stand in columns are
// a table, written as a Markdown table (pdf-tables.ts).

import { createRequire } from 'node:module';
import { dirname, join, sep } from 'node:path';
import { IngestError } from '../errors.js';
import { fenceCommentLines } from './comment-lines.js';
import { DocumentWords, LineAssembler, breaksWord, isWide, listMarker, wrapJoint } from './line-joins.js';
import type { PdfLine } from './pdf-line.js';
import { withoutRunningLines } from './pdf-running-lines.js';
import { findTables } from './pdf-tables.js';
import { withParseTimeout } from './parse-timeout.js';

export type { PdfLine };

export interface PdfReadOptions {
  filename?: string;
  /** Refuse documents with more pages than this (default 1000). */
  maxPages?: number;
  /** Give up after this long (default 120 s): pdf.js can crawl on hostile files. */
  timeoutMs?: number;
}

export interface PdfReadResult {
  pages: string[];
  text: string;
  title?: string;
}

export interface PdfTextItem {
  str: string;
  transform: number[];
  height: number;
  width: number;
  hasEOL?: boolean;
  fontName?: string;
}

/** A gap wider than this many line heights between two parts of a line makes them two cells. */
const CELL_GAP = 1.2;

type PdfJs = typeof import('pdfjs-dist/legacy/build/pdf.mjs');
let pdfjsModule: Promise<PdfJs> | undefined;
// Character maps (CJK fonts) and standard font metrics ship inside pdfjs-dist;
// pdf.js in Node reads them from these directories (never from the network).
const pdfjsDataDirs = (() => {
  try {
    const root = dirname(createRequire(import.meta.url).resolve('pdfjs-dist/package.json'));
    return { cMapUrl: join(root, 'cmaps') + sep, cMapPacked: true, standardFontDataUrl: join(root, 'standard_fonts') + sep };
  } catch {
    return {};
  }
})();

function loadPdfJs(): Promise<PdfJs> {
  pdfjsModule ??= import('pdfjs-dist/legacy/build/pdf.mjs');
  return pdfjsModule;
}

/**
 * Groups one page's text items into lines by baseline, in content-stream
 * order. `monoFonts`: the page's monospaced fonts (pdf.js's font names); a
 * line set only in them is `mono`.
 */
export function pageLines(items: PdfTextItem[], monoFonts: ReadonlySet<string> = new Set()): PdfLine[] {
  const lines: PdfLine[] = [];
  let current: PdfLine | undefined;
  for (const item of items) {
    const x = item.transform[4];
    const y = item.transform[5];
    const height = Math.abs(item.height) || Math.abs(item.transform[3]) || 10;
    const mono = !item.str.trim() || monoFonts.has(item.fontName ?? '');
    if (current && Math.abs(y - current.y) <= height * 0.4) {
      // Same line: insert a space where the generator left a visible gap but no space character.
      const gap = x - current.endX;
      if (gap > height * 0.15 && !/\s$/.test(current.text) && !/^\s/.test(item.str)) current.text += ' ';
      current.text += item.str;
      if (item.str.trim()) {
        // Text further from the line's last text than the line is tall stands apart: a table's next cell.
        const cell = current.cells!.at(-1);
        if (!cell || x - cell.endX > height * CELL_GAP) current.cells!.push({ text: item.str, x, endX: x + item.width });
        else Object.assign(cell, { text: `${cell.text} ${item.str}`, endX: Math.max(cell.endX, x + item.width) });
      }
      current.endX = Math.max(current.endX, x + item.width);
      current.mono &&= mono;
    } else {
      if (current) lines.push(current);
      current = { text: item.str, x, y, height, endX: x + item.width, mono, cells: item.str.trim() ? [{ text: item.str, x, endX: x + item.width }] : [] };
    }
  }
  if (current) lines.push(current);
  for (const line of lines) {
    line.text = line.text.replace(/\s+/g, ' ').trim();
    for (const cell of line.cells!) cell.text = cell.text.replace(/\s+/g, ' ').trim();
    if (line.cells!.length < 2 || line.mono) delete line.cells;
  }
  return lines.filter((line) => line.text);
}

/**
 * How far right text in this line's column reaches: the furthest end of the
 * page's lines beside it (on a page of more than 2,000 lines, of any line: the
 * search is quadratic).
 */
function columnEdge(line: PdfLine, page: PdfLine[], pageEdge: number): number {
  if (page.length > 2000) return pageEdge;
  let edge = line.endX;
  for (const other of page) if (other.x < line.endX && other.endX > line.x && other.endX > edge) edge = other.endX;
  return edge;
}

/**
 * Whether `prev` ends only because `next`'s first word would not fit after it
 * in the column (a wrap), judged with `next`'s average character width.
 */
function isFull(prev: PdfLine, next: PdfLine, edge: number): boolean {
  const charWidth = (next.endX - next.x) / Math.max(1, Array.from(next.text).length);
  const first = String.fromCodePoint(next.text.codePointAt(0)!);
  const word = isWide(first) ? 1 : 1 + (/^\S+/.exec(next.text)?.[0].length ?? 0);
  return prev.endX + word * charWidth >= edge - charWidth;
}

/**
 * One page's lines as text: paragraphs (a gap larger than 1.8 lines, or a
 * move up the page: a new column) are separated by a blank line; inside a
 * paragraph a line that was only wrapped joins the one before (line-joins.ts:
 * hyphenated words, CJK). A line stays a line of its own when it starts a
 * list item, starts indented (a first-line indent; not a list item's hanging
 * indent), or follows a line that ended short of its column's right edge with
 * room for its first word (a heading, a paragraph's last line, a list).
 */
export function linesToText(lines: PdfLine[], words: DocumentWords): string {
  const out = new LineAssembler(words);
  const pageEdge = lines.reduce((max, l) => Math.max(max, l.endX), 0);
  let inItem = false;
  let code: PdfLine[] = [];
  const tables = findTables(lines);
  let tableRowsLeft = 0;
  let afterTable = false;
  const start = (line: PdfLine, separator: string) => {
    out.line(line.text, separator);
    inItem = !!listMarker(line.text);
  };
  const endCode = () => {
    if (code.length) out.line(codeBlock(code), out.empty ? '' : '\n\n');
    code = [];
  };
  lines.forEach((line, i) => {
    const table = tables.get(i);
    if (table) {
      endCode();
      out.line(table.markdown, out.empty ? '' : '\n\n');
      tableRowsLeft = table.lines;
    }
    if (tableRowsLeft > 0) {
      tableRowsLeft--;
      afterTable = true;
      return;
    }
    if (afterTable && !line.mono) {
      afterTable = false;
      return start(line, '\n\n');
    }
    afterTable = false;
    const prev = lines[i - 1];
    const gap = prev ? prev.y - line.y : 0;
    const newBlock = !prev || gap > Math.max(prev.height, line.height) * 1.8 || gap < 0;
    // Code starts a block of its own (a monospaced word that only wrapped onto a line of its own stays in its sentence).
    if (line.mono && (code.length ? gap >= 0 : newBlock || /[:.!?]$/.test(prev!.text))) {
      code.push(line);
      return;
    }
    if (code.length) {
      endCode();
      return start(line, '\n\n');
    }
    if (!prev) return start(line, '');
    const charWidth = (line.endX - line.x) / Math.max(1, Array.from(line.text).length);
    if (newBlock) start(line, '\n\n');
    else if (listMarker(line.text) || (!inItem && line.x > prev.x + 1.5 * charWidth)) start(line, '\n');
    else if (breaksWord(out.lastLine, line.text) || isFull(prev, line, columnEdge(prev, lines, pageEdge))) out.wrap(line.text);
    else start(line, '\n');
  });
  endCode();
  return out.toString().replace(/\u00ad/g, '');
}

/**
 * Lines of code as set: each line's indent from the block's left edge in
 * characters of its font, an empty line where the gap holds one, in a fence
 * longer than any backtick run inside.
 */
function codeBlock(lines: PdfLine[]): string {
  const left = Math.min(...lines.map((l) => l.x));
  const widths = lines.map((l) => (l.endX - l.x) / Math.max(1, Array.from(l.text).length)).sort((a, b) => a - b);
  const charWidth = widths[Math.floor(widths.length / 2)]! || 1;
  const body: string[] = [];
  lines.forEach((line, i) => {
    const prev = lines[i - 1];
    if (prev && prev.y - line.y > Math.max(prev.height, line.height) * 1.8) body.push('');
    body.push(' '.repeat(Math.max(0, Math.round((line.x - left) / charWidth))) + line.text);
  });
  const longest = body.reduce((max, line) => Math.max(max, ...(line.match(/`+/g) ?? []).map((run) => run.length)), 0);
  const fence = '`'.repeat(Math.max(3, longest + 1));
  return [fence, ...body, fence].join('\n');
}

/**
 * Whether a page's text goes on from the page before's last line: that line
 * is not code, does not end a sentence and is full to its column's edge (or
 * ends in a word broken by a hyphen), and the next page does not open with
 * a list item.
 */
function continuesAcrossPages(before: PdfLine[], after: PdfLine[]): boolean {
  const last = before.at(-1);
  const first = after[0];
  if (!last || !first || last.mono || first.mono || listMarker(first.text)) return false;
  if (breaksWord(last.text, first.text)) return true;
  const pageEdge = before.reduce((max, l) => Math.max(max, l.endX), 0);
  return !/[.!?:;。！？：；]["'”’)\]]*$/.test(last.text) && isFull(last, first, columnEdge(last, before, pageEdge));
}

/** The pages' texts as one: a paragraph a page break cut is joined again (line-joins.ts), other pages are paragraphs apart. */
function joinPages(pages: { lines: PdfLine[]; text: string }[], words: DocumentWords): string {
  let text = '';
  let before: PdfLine[] = [];
  for (const page of pages) {
    if (!page.text) continue;
    if (text && continuesAcrossPages(before, page.lines)) {
      const last = before.at(-1)!.text;
      // A soft hyphen is gone from the page's text already (linesToText).
      const { drop, glue } = last.endsWith('\u00ad') ? { drop: 0, glue: '' } : wrapJoint(last, page.lines[0]!.text, words);
      text = text.slice(0, text.length - drop) + glue + page.text;
    } else text += (text ? '\n\n' : '') + page.text;
    before = page.lines;
  }
  return text;
}

/** Joins one page's text items into lines and paragraphs (the page's own words decide hyphens). */
export function pageItemsToText(items: PdfTextItem[]): string {
  const lines = pageLines(items);
  return linesToText(lines, new DocumentWords(lines.map((l) => l.text).join('\n'), true));
}

/** A PDF's pages (1-based) without text: a scan's, which OCR reads. */
export function blankPages(pages: readonly string[]): number[] {
  return pages.flatMap((text, i) => (text.trim() ? [] : [i + 1]));
}

/** pdf.js opening a document, as every reader of PDFs here opens one. */
async function pdfLoadingTask(buf: Uint8Array) {
  const pdfjs = await loadPdfJs();
  // pdf.js takes ownership of (detaches) the buffer it is given: pass a copy.
  return pdfjs.getDocument({
    data: new Uint8Array(buf),
    isEvalSupported: false,
    disableFontFace: true,
    useSystemFonts: false,
    stopAtErrors: false,
    verbosity: 0,
    ...pdfjsDataDirs,
  });
}

/** A PDF opened with pdf.js (for drawing its pages: ocr/page-images.ts); the caller destroys it. */
export async function openPdf(buf: Uint8Array) {
  return (await pdfLoadingTask(buf)).promise;
}

export async function readPdf(buf: Uint8Array, opts: PdfReadOptions = {}): Promise<PdfReadResult> {
  const filename = opts.filename ?? 'The PDF';
  const maxPages = opts.maxPages ?? 1000;
  const task = await pdfLoadingTask(buf);
  const work = (async (): Promise<PdfReadResult> => {
    const doc = await task.promise;
    if (doc.numPages > maxPages) {
      throw new IngestError('too_many_pages', `${filename} has ${doc.numPages} pages; the limit is ${maxPages}. Split the document.`);
    }
    let pageLineLists: PdfLine[][] = [];
    for (let i = 1; i <= doc.numPages; i++) {
      const page = await doc.getPage(i);
      const content = await page.getTextContent();
      const monoFonts = new Set(
        Object.entries(content.styles)
          .filter(([, style]) => style.fontFamily === 'monospace')
          .map(([name]) => name),
      );
      pageLineLists.push(pageLines(content.items.filter((it) => 'str' in it) as PdfTextItem[], monoFonts));
      page.cleanup();
    }
    pageLineLists = withoutRunningLines(pageLineLists);
    // A document set in a monospaced font throughout (a typewriter face, a printed terminal) is text, not code.
    const chars = (lines: PdfLine[]) => lines.reduce((n, l) => n + l.text.length, 0);
    const all = pageLineLists.flat();
    if (chars(all.filter((l) => l.mono)) * 2 > chars(all)) for (const line of all) line.mono = false;
    // Every page's words decide a hyphen at any line end ("exam-"/"ple" is "example" if the document says so).
    const words = new DocumentWords(pageLineLists.map((lines) => lines.map((l) => l.text).join('\n')).join('\n'), true);
    const texts = pageLineLists.map((lines) => linesToText(lines, words));
    const pages = texts.map((text) => fenceCommentLines(text, { headings: false }));
    const meta = await doc.getMetadata().catch(() => undefined);
    const rawTitle = (meta?.info as { Title?: unknown } | undefined)?.Title;
    const title = typeof rawTitle === 'string' && rawTitle.trim() ? rawTitle.trim() : undefined;
    const text = fenceCommentLines(
      joinPages(
        pageLineLists.map((lines, i) => ({ lines, text: texts[i]! })),
        words,
      ),
      { headings: false },
    );
    return { pages, text, ...(title ? { title } : {}) };
  })();
  try {
    return await withParseTimeout(work, opts.timeoutMs ?? 120_000, filename, { onTimeout: () => void task.destroy(), note: 'the PDF may be damaged' });
  } catch (err) {
    if (err instanceof IngestError) throw err;
    const name = (err as { name?: string })?.name;
    if (name === 'PasswordException') {
      throw new IngestError('encrypted_file', `${filename} is password-protected; upload an unprotected copy.`, { cause: err });
    }
    throw new IngestError('corrupt_file', `${filename} could not be read as a PDF (${(err as Error)?.message ?? err}).`, { cause: err });
  } finally {
    void task.destroy();
  }
}
