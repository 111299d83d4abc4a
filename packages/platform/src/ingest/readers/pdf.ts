// PDF -> text per page with pdf.js (legacy build: the one that runs in Node 20).
//
// Reading order is the content stream's order, with text items grouped into
// lines by baseline: Word, LaTeX and browsers write text in reading order, and
// sorting by coordinates instead would interleave the columns of a two-column
// page. Lines of a paragraph stay on separate lines (the chunker treats a
// paragraph as one block); a larger vertical gap starts a new paragraph; a word
// hyphenated across a line break is joined ("exam-" + "ple" -> "example") when
// the next line starts in lower case.

import { createRequire } from 'node:module';
import { dirname, join, sep } from 'node:path';
import { IngestError } from '../errors.js';

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

interface PdfTextItem {
  str: string;
  transform: number[];
  height: number;
  width: number;
  hasEOL?: boolean;
}

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

/** Joins one page's text items into lines and paragraphs. */
export function pageItemsToText(items: PdfTextItem[]): string {
  const lines: { text: string; y: number; height: number }[] = [];
  let current: { text: string; y: number; height: number; endX: number } | undefined;
  for (const item of items) {
    const x = item.transform[4];
    const y = item.transform[5];
    const height = Math.abs(item.height) || Math.abs(item.transform[3]) || 10;
    if (current && Math.abs(y - current.y) <= height * 0.4) {
      // Same line: insert a space where the generator left a visible gap but no space character.
      const gap = x - current.endX;
      if (gap > height * 0.15 && !/\s$/.test(current.text) && !/^\s/.test(item.str)) current.text += ' ';
      current.text += item.str;
      current.endX = x + item.width;
    } else {
      if (current) lines.push(current);
      current = { text: item.str, y, height, endX: x + item.width };
    }
  }
  if (current) lines.push(current);

  let out = '';
  let prev: (typeof lines)[number] | undefined;
  for (const line of lines) {
    const text = line.text.replace(/\s+/g, ' ').trim();
    if (!text) continue;
    if (!prev) out = text;
    else {
      const gap = prev.y - line.y;
      const paragraphBreak = gap > Math.max(prev.height, line.height) * 1.8 || gap < 0;
      if (!paragraphBreak && /\p{L}[-\u00ad]$/u.test(out) && /^\p{Ll}/u.test(text)) {
        out = out.slice(0, -1) + text; // de-hyphenate
      } else {
        out += (paragraphBreak ? '\n\n' : '\n') + text;
      }
    }
    prev = line;
  }
  return out.replace(/\u00ad/g, '');
}

function withTimeout<T>(promise: Promise<T>, ms: number, onTimeout: () => void, filename: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      onTimeout();
      reject(new IngestError('parse_timeout', `Reading ${filename} took longer than ${Math.round(ms / 1000)} s; the PDF may be damaged.`));
    }, ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

export async function readPdf(buf: Uint8Array, opts: PdfReadOptions = {}): Promise<PdfReadResult> {
  const filename = opts.filename ?? 'The PDF';
  const maxPages = opts.maxPages ?? 1000;
  const pdfjs = await loadPdfJs();
  // pdf.js takes ownership of (detaches) the buffer it is given: pass a copy.
  const task = pdfjs.getDocument({
    data: new Uint8Array(buf),
    isEvalSupported: false,
    disableFontFace: true,
    useSystemFonts: false,
    stopAtErrors: false,
    verbosity: 0,
    ...pdfjsDataDirs,
  });
  const work = (async (): Promise<PdfReadResult> => {
    const doc = await task.promise;
    if (doc.numPages > maxPages) {
      throw new IngestError('too_many_pages', `${filename} has ${doc.numPages} pages; the limit is ${maxPages}. Split the document.`);
    }
    const pages: string[] = [];
    for (let i = 1; i <= doc.numPages; i++) {
      const page = await doc.getPage(i);
      const content = await page.getTextContent();
      pages.push(pageItemsToText(content.items.filter((it) => 'str' in it) as PdfTextItem[]));
      page.cleanup();
    }
    const meta = await doc.getMetadata().catch(() => undefined);
    const rawTitle = (meta?.info as { Title?: unknown } | undefined)?.Title;
    const title = typeof rawTitle === 'string' && rawTitle.trim() ? rawTitle.trim() : undefined;
    return { pages, text: pages.filter(Boolean).join('\n\n'), ...(title ? { title } : {}) };
  })();
  try {
    return await withTimeout(work, opts.timeoutMs ?? 120_000, () => void task.destroy(), filename);
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
