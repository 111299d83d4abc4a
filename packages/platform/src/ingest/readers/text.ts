// Plain text and markdown: the only work is finding the encoding. Uploads come
// from Windows editors (UTF-16 with BOM, or ANSI code pages) as often as from
// UTF-8 tools, so decoding is: declared charset > BOM > UTF-16 sniff > strict
// UTF-8 > GB18030 (common for the Chinese users FastGPT serves) > windows-1252.

import { isUtf8 } from 'node:buffer';
import { IngestError } from '../errors.js';

export interface DecodeOptions {
  /** A charset declared by the uploader or an HTTP header, e.g. `utf-8`, `gbk`. */
  charset?: string;
  /** Used in error messages. */
  filename?: string;
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

/**
 * The encoding a text file is in, and how many bytes its BOM takes: a BOM >
 * the declared charset > UTF-16 sniff > strict UTF-8 > GB18030 >
 * windows-1252, found without decoding the whole (a 30 MB text decoded
 * twice to choose was two strings of it). Refuses binary data.
 */
export function textEncoding(buf: Uint8Array, opts: DecodeOptions = {}): { encoding: string; skip: number } {
  let chosen: { encoding: string; skip: number } | undefined;
  if (buf[0] === 0xef && buf[1] === 0xbb && buf[2] === 0xbf) chosen = { encoding: 'utf-8', skip: 3 };
  else if (buf[0] === 0xff && buf[1] === 0xfe) chosen = { encoding: 'utf-16le', skip: 2 };
  else if (buf[0] === 0xfe && buf[1] === 0xff) chosen = { encoding: 'utf-16be', skip: 2 };
  else if (opts.charset && knownEncoding(opts.charset.trim().toLowerCase())) chosen = { encoding: opts.charset.trim().toLowerCase(), skip: 0 };
  if (!chosen) {
    const utf16 = sniffUtf16(buf);
    const encoding = utf16 ?? (isUtf8(buf) ? 'utf-8' : decodesStrictly(buf, 'gb18030') ? 'gb18030' : 'windows-1252');
    chosen = { encoding, skip: 0 };
  }
  // NULs or many control characters mean this is not text at all (an image renamed .txt).
  const head = new TextDecoder(chosen.encoding).decode(buf.subarray(chosen.skip, chosen.skip + 32 * 1024));
  let control = 0;
  const probe = Math.min(head.length, 8192);
  for (let i = 0; i < probe; i++) {
    const c = head.charCodeAt(i);
    if (c === 0) {
      control = probe;
      break;
    }
    if (c < 32 && c !== 9 && c !== 10 && c !== 13 && c !== 12) control++;
  }
  if (probe > 0 && control > probe * 0.1) {
    throw new IngestError('corrupt_file', `${opts.filename ?? 'The file'} is not a text file (it contains binary data).`);
  }
  return chosen;
}

function knownEncoding(label: string): boolean {
  try {
    new TextDecoder(label);
    return true;
  } catch {
    return false;
  }
}

/** Whether the bytes are valid in `encoding`, read a megabyte at a time (nothing kept). */
function decodesStrictly(buf: Uint8Array, encoding: string): boolean {
  const decoder = new TextDecoder(encoding, { fatal: true });
  try {
    for (let at = 0; at < buf.length; at += 1024 * 1024) decoder.decode(buf.subarray(at, at + 1024 * 1024), { stream: true });
    decoder.decode();
    return true;
  } catch {
    return false;
  }
}

/**
 * A text file's text in pieces of about `pieceBytes` bytes each, its line
 * endings as \n (a \r ending a piece waits for the next, which may start
 * with its \n), in the encoding textEncoding chose.
 */
export function* decodedPieces(buf: Uint8Array, { encoding, skip }: { encoding: string; skip: number }, pieceBytes = 256 * 1024): Generator<string> {
  const decoder = new TextDecoder(encoding, { ignoreBOM: true });
  let carry = '';
  for (let at = skip; at < buf.length; at += pieceBytes) {
    const last = at + pieceBytes >= buf.length;
    let text = carry + decoder.decode(buf.subarray(at, at + pieceBytes), { stream: !last });
    carry = '';
    if (!last && text.endsWith('\r')) {
      carry = '\r';
      text = text.slice(0, -1);
    }
    if (at === skip && text.charCodeAt(0) === 0xfeff) text = text.slice(1); // a BOM the declared charset's decoder kept
    if (text) yield normalizeNewlines(text);
  }
  if (carry) yield '\n';
}

/** Decodes bytes to a string without a BOM; refuses binary data. */
export function decodeText(buf: Uint8Array, opts: DecodeOptions = {}): string {
  const { encoding, skip } = textEncoding(buf, opts);
  const text = new TextDecoder(encoding, { ignoreBOM: true }).decode(buf.subarray(skip));
  return text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
}

/** Line endings to \n, so every later step sees one convention. */
export function normalizeNewlines(text: string): string {
  return text.replace(/\r\n?/g, '\n');
}

export function readPlainText(buf: Uint8Array, opts: DecodeOptions = {}): string {
  return normalizeNewlines(decodeText(buf, opts));
}
