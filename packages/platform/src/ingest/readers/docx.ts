// DOCX -> HTML with mammoth (which maps Word's heading styles to <h1>..<h6> and
// keeps tables and lists) -> the same HTML -> markdown path as web pages, so a
// Word document's headings become the chunker's title path.

import mammoth from 'mammoth';
import { IngestError } from '../errors.js';
import { htmlToMarkdown } from './html.js';
import { withParseTimeout } from './parse-timeout.js';

export interface DocxReadOptions {
  filename?: string;
  /** Give up after this long (default 60 s). */
  timeoutMs?: number;
}

export async function readDocx(buf: Uint8Array, opts: DocxReadOptions = {}): Promise<{ text: string }> {
  const filename = opts.filename ?? 'The document';
  try {
    const converted = mammoth.convertToHtml(
      { buffer: Buffer.from(buf.buffer, buf.byteOffset, buf.byteLength) },
      // Images would be inlined as base64 data URIs: pure cost, no text.
      { convertImage: mammoth.images.imgElement(() => Promise.resolve({ src: '' })) },
    );
    const { value } = await withParseTimeout(converted, opts.timeoutMs ?? 60_000, filename);
    return { text: htmlToMarkdown(value).text };
  } catch (err) {
    if (err instanceof IngestError) throw err;
    throw new IngestError('corrupt_file', `${filename} could not be read as a Word document (.docx): ${(err as Error)?.message ?? err}`, {
      cause: err,
    });
  }
}
