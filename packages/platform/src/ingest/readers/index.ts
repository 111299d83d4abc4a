// One entry point for uploads: pick a reader from the file name, then the mime
// type, then the bytes themselves, and turn the file into markdown-ish text
// with paragraphs as people wrote them (hard wraps joined: unwrap-markdown.ts,
// unwrap-text.ts, pdf.ts).

import { IngestError } from '../errors.js';
import { fenceCommentLines } from './comment-lines.js';
import { csvToRows } from './csv.js';
import type { RowText } from '../row-locator.js';
import { readDocx } from './docx.js';
import { HtmlTooDeepError, MAX_HTML_DEPTH, htmlNestingDepth, htmlToMarkdown } from './html.js';
import { blankPages, readPdf } from './pdf.js';

export { blankPages };
import { readPptx } from './pptx.js';
import { decodedPieces, decodeText, textEncoding } from './text.js';
import { streamSections, textSections, type TextSection } from '../sections.js';
import { DocumentWords } from './line-joins.js';
import { unwrapMarkdown } from './unwrap-markdown.js';
import { readXlsx } from './xlsx.js';
import { plainTextUnwrapper } from './unwrap-text.js';

export type DocumentFormat = 'txt' | 'md' | 'html' | 'pdf' | 'docx' | 'csv' | 'xlsx' | 'pptx' | 'image';

export interface ReadDocumentInput {
  data: Uint8Array;
  filename: string;
  /** The uploader's or server's content type, e.g. `text/html; charset=gbk`. */
  mimeType?: string;
}

export interface ReadDocumentOptions {
  /** Refuse files larger than this (default 50 MiB). */
  maxBytes?: number;
  /** Refuse PDFs with more pages than this (default 1000). */
  maxPages?: number;
  /** Per-file parse time limit for PDF and DOCX (default 120 s). */
  timeoutMs?: number;
  /**
   * Scans are read with OCR: an image, or a PDF with pages without text, is
   * refused with NeedsOcr, for the caller to read with ocr/ (which takes
   * minutes, not a request's time). Without it, a PDF's text pages are read,
   * and an image or a PDF without any text is refused as empty.
   */
  ocr?: boolean;
}

/** The file is a scan (an image, or a PDF with pages without text): it is read with OCR (ingest/ocr/), not here. */
export class NeedsOcr extends Error {
  constructor(
    readonly filename: string,
    /** How many pages OCR would read. */
    readonly pages: number,
  ) {
    super(`${filename} is read with OCR (${pages} pages)`);
  }
}

export interface ReadDocumentResult {
  format: DocumentFormat;
  text: string;
  title?: string;
  /** PDF only: the text of each page. */
  pages?: string[];
  /** Spreadsheets and CSV: each row's block of text and its row number. */
  rows?: RowText[];
}

const EXTENSIONS: Record<string, DocumentFormat> = {
  txt: 'txt',
  text: 'txt',
  log: 'txt',
  md: 'md',
  markdown: 'md',
  mdx: 'md',
  html: 'html',
  htm: 'html',
  xhtml: 'html',
  pdf: 'pdf',
  docx: 'docx',
  csv: 'csv',
  tsv: 'csv',
  xlsx: 'xlsx',
  xlsm: 'xlsx',
  pptx: 'pptx',
  png: 'image',
  jpg: 'image',
  jpeg: 'image',
  webp: 'image',
};
const MIME_TYPES: Record<string, DocumentFormat> = {
  'text/plain': 'txt',
  'text/markdown': 'md',
  'text/x-markdown': 'md',
  'text/html': 'html',
  'application/xhtml+xml': 'html',
  'application/pdf': 'pdf',
  'application/vnd.openxmlformats-officedocument.wordprocessingml.document': 'docx',
  'text/csv': 'csv',
  'text/tab-separated-values': 'csv',
  'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet': 'xlsx',
  'application/vnd.openxmlformats-officedocument.presentationml.presentation': 'pptx',
  'image/png': 'image',
  'image/jpeg': 'image',
  'image/webp': 'image',
};
const HINTS: Record<string, string> = {
  doc: 'save it as .docx first',
  xls: 'save it as .xlsx first',
  ods: 'save it as .xlsx first',
  ppt: 'save it as .pptx first',
  odp: 'save it as .pptx first',
};

export function extensionOf(filename: string): string {
  const base = filename.split(/[\\/]/).pop() ?? '';
  const dot = base.lastIndexOf('.');
  return dot > 0 ? base.slice(dot + 1).toLowerCase() : '';
}

function parseMime(mimeType: string | undefined): { type: string; charset?: string } {
  if (!mimeType) return { type: '' };
  const [type, ...params] = mimeType.split(';');
  const charset = params.map((p) => /^\s*charset\s*=\s*"?([^";\s]+)"?/i.exec(p)?.[1]).find(Boolean);
  return { type: type.trim().toLowerCase(), ...(charset ? { charset } : {}) };
}

function sniff(data: Uint8Array): DocumentFormat | undefined {
  const head = Buffer.from(data.subarray(0, 1024)).toString('latin1');
  if (head.startsWith('%PDF-')) return 'pdf';
  if (head.startsWith('\x89PNG') || head.startsWith('\xff\xd8\xff')) return 'image';
  if (head.startsWith('PK\u0003\u0004') && Buffer.from(data).includes('word/')) return 'docx';
  if (head.startsWith('PK\u0003\u0004') && Buffer.from(data).includes('xl/')) return 'xlsx';
  if (head.startsWith('PK\u0003\u0004') && Buffer.from(data).includes('ppt/')) return 'pptx';
  if (/^\s*(<!doctype html|<html[\s>])/i.test(head)) return 'html';
  return undefined;
}

/** Which reader a file gets; throws `unsupported_file_type` naming the type when none. */
export function detectFormat(input: Pick<ReadDocumentInput, 'data' | 'filename' | 'mimeType'>): DocumentFormat {
  const ext = extensionOf(input.filename);
  const byExt = EXTENSIONS[ext];
  if (byExt) return byExt;
  const { type } = parseMime(input.mimeType);
  // Generic types say nothing: look at the bytes.
  const byMime = MIME_TYPES[type];
  if (byMime) return byMime;
  const sniffed = sniff(input.data);
  if (sniffed) return sniffed;
  const what = ext ? `.${ext} files` : type && type !== 'application/octet-stream' ? `files of type ${type}` : 'files without an extension';
  const hint = HINTS[ext] ? ` (${HINTS[ext]})` : '';
  throw new IngestError(
    'unsupported_file_type',
    `${input.filename}: ${what} are not supported${hint}. Supported: .txt, .md, .html, .pdf, .docx, .csv, .xlsx, .pptx, .png, .jpg, .webp.`,
  );
}

/**
 * A document's text as the chunker takes it: a section at a time
 * (sections.ts), so that a large text is never held read whole besides its
 * source. Plain text and Markdown are read section by section (their hard
 * wraps undone with what the whole text says: its wrap width, its words);
 * with a chunkSplitter, or in another format, the text is read whole, then
 * cut into sections.
 */
export interface DocumentText {
  format: DocumentFormat;
  title?: string;
  /** A PDF's pages' texts, which say where its chunks come from (page-locator.ts). */
  pages?: string[];
  /** A spreadsheet's or CSV's rows, which say which rows its chunks hold (row-locator.ts). */
  rows?: RowText[];
  sections(options?: { splitter?: string; size?: number }): Generator<TextSection>;
}

/** Reads an uploaded file for chunking. Every failure is an IngestError. */
export async function readDocumentText(input: ReadDocumentInput, opts: ReadDocumentOptions = {}): Promise<DocumentText> {
  const format = checkedFormat(input, opts);
  if (format !== 'txt' && format !== 'md') {
    const whole = await readChecked(format, input, opts);
    return { format, title: whole.title, pages: whole.pages, rows: whole.rows, sections: (o) => textSections(whole.text, o) };
  }
  return { format, sections: textFileSections(format, input) };
}

/**
 * A plain text or Markdown file's text as read, a section at a time: decoded
 * a piece at a time and cut where blocks end, each section read (its hard
 * wraps undone, comment lines fenced) as often as the sections are asked for.
 * Binary data is refused here, before the first read. With a chunkSplitter
 * the text is read whole first (the splitter applies to the text as read).
 */
function textFileSections(format: 'txt' | 'md', input: ReadDocumentInput): DocumentText['sections'] {
  const encoding = textEncoding(input.data, { charset: parseMime(input.mimeType).charset, filename: input.filename });
  const source = (size?: number) => streamSections(decodedPieces(input.data, encoding), size);
  const read = sectionReader(format, () => source());
  return function* sections(o = {}) {
    if (o.splitter) return yield* textSections([...source()].map(read).join('').trim(), o);
    for (const text of source(o.size)) yield { text: read(text), pieceEnd: false };
    yield { text: '', pieceEnd: true };
  };
}

/** Reads an uploaded file into markdown-ish text. Every failure is an IngestError. */
export async function readDocument(input: ReadDocumentInput, opts: ReadDocumentOptions = {}): Promise<ReadDocumentResult> {
  const format = checkedFormat(input, opts);
  return readChecked(format, input, opts);
}

function checkedFormat(input: ReadDocumentInput, opts: ReadDocumentOptions): DocumentFormat {
  const { data, filename } = input;
  const maxBytes = opts.maxBytes ?? 50 * 1024 * 1024;
  if (data.byteLength > maxBytes) {
    throw new IngestError(
      'file_too_large',
      `${filename} is ${(data.byteLength / 1048576).toFixed(1)} MiB; the limit is ${(maxBytes / 1048576).toFixed(1)} MiB.`,
    );
  }
  return detectFormat(input);
}

async function readChecked(format: DocumentFormat, input: ReadDocumentInput, opts: ReadDocumentOptions): Promise<ReadDocumentResult> {
  try {
    return await readAs(format, input, opts);
  } catch (err) {
    if (err instanceof IngestError || err instanceof NeedsOcr) throw err;
    // Safety net: a parser failing in a way it does not report (a stack overflow on absurd nesting…).
    throw new IngestError('corrupt_file', `${input.filename} could not be read as ${format} (${(err as Error)?.message ?? err}).`, { cause: err });
  }
}

/**
 * How plain text and Markdown are read, a part of `source` at a time:
 * Markdown's paragraphs joined (unwrap-markdown.ts); plain text's hard wraps
 * undone (unwrap-text.ts) and its "#" comment lines fenced, as plain text is
 * no Markdown (comment-lines.ts).
 */
function sectionReader(format: 'txt' | 'md', source: () => Iterable<string>): (part: string) => string {
  if (format === 'md') {
    const words = new DocumentWords(source);
    return (part) => unwrapMarkdown(part, words);
  }
  const unwrap = plainTextUnwrapper(source);
  return (part) => fenceCommentLines(unwrap(part), { headings: true });
}

async function readAs(format: DocumentFormat, input: ReadDocumentInput, opts: ReadDocumentOptions): Promise<ReadDocumentResult> {
  const { data, filename } = input;
  const { charset } = parseMime(input.mimeType);
  switch (format) {
    case 'txt':
    case 'md': {
      // Hard-wrapped lines back into paragraphs (a wrap must never read as a sentence end), as the chunker reads them.
      let text = '';
      for (const section of textFileSections(format, input)()) text += section.text;
      return { format, text: text.trim() };
    }
    case 'csv': {
      const delimiter = extensionOf(filename) === 'tsv' || parseMime(input.mimeType).type === 'text/tab-separated-values' ? '\t' : undefined;
      return { format, ...csvToRows(decodeText(data, { charset, filename }), delimiter ? { delimiter } : {}) };
    }
    case 'html': {
      const raw = decodeText(data, { charset: charset ?? metaCharset(data), filename });
      // Absurd nesting is refused before parsing (the parser itself slows down on it), then exactly after.
      if (htmlNestingDepth(raw) > MAX_HTML_DEPTH * 4) throw tooDeep(filename, `more than ${MAX_HTML_DEPTH * 4}`);
      try {
        return { format, ...htmlToMarkdown(raw) };
      } catch (err) {
        if (err instanceof HtmlTooDeepError) throw tooDeep(filename, String(err.depth));
        throw err;
      }
    }
    case 'pdf': {
      if (!Buffer.from(data.subarray(0, 1024)).includes('%PDF-')) {
        throw new IngestError('corrupt_file', `${filename} is not a PDF file (no PDF header).`);
      }
      const pdf = await readPdf(data, { filename, maxPages: opts.maxPages, timeoutMs: opts.timeoutMs });
      const blank = blankPages(pdf.pages).length;
      if (opts.ocr && blank > 0) throw new NeedsOcr(filename, blank);
      if (!pdf.text.trim()) {
        throw new IngestError('empty_document', `${filename} has no text layer (a scan), and OCR is off for this dataset; turn it on to read it.`);
      }
      return { format, ...pdf };
    }
    case 'docx':
      return { format, ...(await readDocx(data, { filename, timeoutMs: opts.timeoutMs })) };
    case 'xlsx': {
      const book = await readXlsx(data, { filename, timeoutMs: opts.timeoutMs });
      if (!book.text.trim()) throw new IngestError('empty_document', `${filename} has no values in any of its sheets.`);
      return { format, ...book };
    }
    case 'image':
      if (opts.ocr) throw new NeedsOcr(filename, 1);
      throw new IngestError('empty_document', `${filename} is an image: its text is read with OCR, which is off for this dataset; turn it on to read it.`);
    case 'pptx': {
      const deck = await readPptx(data, { filename });
      if (!deck.text.trim()) throw new IngestError('empty_document', `${filename} has no slides.`);
      return { format, text: deck.text };
    }
  }
}

function tooDeep(filename: string, depth: string): IngestError {
  return new IngestError(
    'corrupt_file',
    `${filename}: elements nest ${depth} levels deep (the limit is ${MAX_HTML_DEPTH}); the HTML is broken, probably by unclosed tags.`,
  );
}

/** `<meta charset>` / `http-equiv` content type in the first 2 KB, as browsers look for it. */
export function metaCharset(data: Uint8Array): string | undefined {
  const head = Buffer.from(data.subarray(0, 2048)).toString('latin1');
  return /<meta[^>]+charset\s*=\s*["']?([\w-]+)/i.exec(head)?.[1];
}
