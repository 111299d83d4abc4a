// Plain text and markdown: the only work is finding the encoding. Uploads come
// from Windows editors (UTF-16 with BOM, or ANSI code pages) as often as from
// UTF-8 tools, so decoding is: declared charset > BOM > UTF-16 sniff > strict
// UTF-8 > GB18030 (common for the Chinese users FastGPT serves) > windows-1252.

import { IngestError } from '../errors.js';

export interface DecodeOptions {
  /** A charset declared by the uploader or an HTTP header, e.g. `utf-8`, `gbk`. */
  charset?: string;
  /** Used in error messages. */
  filename?: string;
}

function tryDecode(buf: Uint8Array, encoding: string, fatal: boolean): string | undefined {
  try {
    return new TextDecoder(encoding, { fatal, ignoreBOM: false }).decode(buf);
  } catch {
    return undefined; // unknown label or invalid bytes
  }
}

/** UTF-16 without a BOM shows up as a NUL in every other byte for ASCII-heavy text. */
function sniffUtf16(buf: Uint8Array): 'utf-16le' | 'utf-16be' | undefined {
  const n = Math.min(buf.length, 4096) & ~1;
  if (n < 4) return undefined;
  let evenZeros = 0;
  let oddZeros = 0;
  for (let i = 0; i < n; i += 2) {
    if (buf[i] === 0) evenZeros++;
    if (buf[i + 1] === 0) oddZeros++;
  }
  const pairs = n / 2;
  if (oddZeros > pairs * 0.4 && evenZeros < pairs * 0.05) return 'utf-16le';
  if (evenZeros > pairs * 0.4 && oddZeros < pairs * 0.05) return 'utf-16be';
  return undefined;
}

/** Decodes bytes to a string without a BOM; refuses binary data. */
export function decodeText(buf: Uint8Array, opts: DecodeOptions = {}): string {
  let text: string | undefined;
  if (buf[0] === 0xef && buf[1] === 0xbb && buf[2] === 0xbf) text = tryDecode(buf, 'utf-8', false);
  else if (buf[0] === 0xff && buf[1] === 0xfe) text = tryDecode(buf, 'utf-16le', false);
  else if (buf[0] === 0xfe && buf[1] === 0xff) text = tryDecode(buf, 'utf-16be', false);
  else if (opts.charset) text = tryDecode(buf, opts.charset.trim().toLowerCase(), false);
  if (text === undefined) {
    const utf16 = sniffUtf16(buf);
    text = utf16
      ? tryDecode(buf, utf16, false)
      : (tryDecode(buf, 'utf-8', true) ?? tryDecode(buf, 'gb18030', true) ?? tryDecode(buf, 'windows-1252', false));
  }
  text ??= '';
  if (text.charCodeAt(0) === 0xfeff) text = text.slice(1); // TextDecoder keeps a BOM it was not asked to strip in some paths
  // NULs or many control characters mean this is not text at all (an image renamed .txt).
  let control = 0;
  const probe = Math.min(text.length, 8192);
  for (let i = 0; i < probe; i++) {
    const c = text.charCodeAt(i);
    if (c === 0) {
      control = probe;
      break;
    }
    if (c < 32 && c !== 9 && c !== 10 && c !== 13 && c !== 12) control++;
  }
  if (probe > 0 && control > probe * 0.1) {
    throw new IngestError('corrupt_file', `${opts.filename ?? 'The file'} is not a text file (it contains binary data).`);
  }
  return text;
}

/** Line endings to \n, so every later step sees one convention. */
export function normalizeNewlines(text: string): string {
  return text.replace(/\r\n?/g, '\n');
}

export function readPlainText(buf: Uint8Array, opts: DecodeOptions = {}): string {
  return normalizeNewlines(decodeText(buf, opts));
}
