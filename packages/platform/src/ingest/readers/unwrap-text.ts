// Plain text as people wrote it. A .txt file may be prose hard-wrapped at some
// width (mail, RFCs, text pasted out of a PDF), where a line break is only a
// wrap, or a file of lines that each mean something (a log, a poem, an address
// list, aligned columns). Plain text has no syntax that says which, so the
// line lengths decide:
//
// - The document's width W is the most common wrap width among its lines'
//   widths in columns (CJK characters count 2; see wrapWidth).
// - A paragraph (lines between blank lines) can be wrapped only when its
//   widest line M (lines of one long word aside) reaches 40 columns (no one
//   wraps prose narrower) and 85% of W: short lines in a wrapped document (a
//   list without markers, a poem, an address) are lines.
// - Inside such a paragraph a break is a wrap when the line is full: the
//   line, a space and the next line's first word (first character, in CJK)
//   reach 85% of M (slack for fill algorithms that balance lines instead of
//   filling each, and for text out of proportional fonts). A line ending in a
//   word broken by a hyphen is a wrap in any paragraph.
// - Never a wrap: before a list item marker (`-`, `•`, `1.`, `a)`...) or a
//   "#" line (a comment in an example, or a heading: comment-lines.ts), before
//   or after a line of aligned columns (a tab, or three spaces inside) or of one
//   long word (a URL, a CSV row), between lines of different quote depth (`>`),
//   or where the indentation changes other than a first-line indent or a list
//   item's hanging indent.
// - A paragraph is unwrapped only when at least two thirds of its other breaks
//   are wraps: in a log only the longer lines look full, and they stay as they are.
// Joins follow line-joins.ts (hyphens, CJK).

import { DocumentWords, LineAssembler, breaksWord, displayWidth, isWide, listMarker } from './line-joins.js';

const MIN_WRAP_WIDTH = 40;
const FULL_SHARE = 0.85;

/**
 * The width a text is wrapped at: the w (at least 40 columns) whose band of
 * widths [85% of w, w] holds the most lines, the widest on a tie. A text
 * wrapped at 80 keeps most of its lines in that band whatever else it holds
 * (a few long lines, an unwrapped part); 0 when no line is 40 columns wide.
 * Read line by line: only a count per width is kept.
 */
function wrapWidth(parts: Iterable<string>): number {
  const counts = new Map<number, number>();
  for (const text of parts) {
    for (let at = 0; at < text.length;) {
      const nl = text.indexOf('\n', at);
      const end = nl < 0 ? text.length : nl;
      const line = text.slice(at, end);
      if (line.trim()) {
        const w = displayWidth(line.trimEnd());
        counts.set(w, (counts.get(w) ?? 0) + 1);
      }
      at = end + 1;
    }
  }
  const widths = [...counts.keys()].sort((a, b) => a - b);
  let best = 0;
  let bestCount = 0;
  // Lines narrower than widths[low] (those below the band), and lines no wider than widths[high].
  let below = 0;
  let upTo = 0;
  let low = 0;
  for (const w of widths) {
    upTo += counts.get(w)!;
    while (widths[low]! < w * FULL_SHARE) below += counts.get(widths[low++]!)!;
    if (w >= MIN_WRAP_WIDTH && upTo - below >= bestCount) {
      best = w;
      bestCount = upTo - below;
    }
  }
  return best;
}

interface Line {
  text: string;
  indent: number;
  quote: string;
  /** The column a list item's text starts at (its continuation lines' indent), when this line starts one. */
  itemColumn?: number;
}

function describe(raw: string): Line {
  const quote = /^(?:\s*>)+\s?/.exec(raw)?.[0] ?? '';
  const rest = raw.slice(quote.length);
  const indent = /^\s*/.exec(rest)![0].length;
  const marker = listMarker(rest);
  const itemColumn = marker ? marker[0].length + (/^\s*/.exec(rest.slice(marker[0].length))![0].length || 1) : undefined;
  return { text: rest.trim(), indent, quote: quote.replace(/\s/g, ''), ...(itemColumn !== undefined ? { itemColumn } : {}) };
}

const TABULAR = /\t|\S {3,}\S/;
const HASH_LINE = /^#{1,6}\s/;
const lonelyWord = (text: string) => !/\s/.test(text) && !Array.from(text).some(isWide) && text.length > 20;

function firstWordWidth(text: string): number {
  const first = String.fromCodePoint(text.codePointAt(0) ?? 32);
  if (isWide(first)) return 2; // CJK wraps between any two characters, with no space
  return 1 + displayWidth(/^\S+/.exec(text)?.[0] ?? '');
}

type Break = 'wrap' | 'kept' | 'structure';

/** Unwraps the hard-wrapped paragraphs of a plain text (lines end in \n). */
export function unwrapPlainText(text: string): string {
  return plainTextUnwrapper(text)(text);
}

/**
 * Unwraps a plain text a section at a time (each a run of whole paragraphs,
 * sections.ts), with what only the whole text can say: its wrap width and its
 * words (line-joins.ts). `text`: the whole, or its parts (each ending at a
 * blank line), read again when they are needed.
 */
export function plainTextUnwrapper(text: string | (() => Iterable<string>)): (section: string) => string {
  const parts = typeof text === 'string' ? () => [text] : text;
  const width = wrapWidth(parts());
  const words = new DocumentWords(parts);
  return (section) => {
    const lines = section.split('\n');
    const out: string[] = [];
    for (let start = 0; start < lines.length;) {
      if (!lines[start].trim()) {
        out.push(lines[start].trimEnd());
        start++;
        continue;
      }
      let end = start;
      while (end + 1 < lines.length && lines[end + 1].trim()) end++;
      for (const line of unwrapParagraph(lines.slice(start, end + 1), width, words)) out.push(line); // no spread: a paragraph may have 100,000s of lines
      start = end + 1;
    }
    return out.join('\n');
  };
}

function unwrapParagraph(raw: string[], docWidth: number, words: DocumentWords): string[] {
  if (raw.length === 1) return [raw[0].trimEnd()];
  const lines = raw.map(describe);
  const widths = raw.map((l) => displayWidth(l.trimEnd()));
  const widest = widths.reduce((max, w, i) => (w > max && !lonelyWord(lines[i].text) ? w : max), 0);
  const mayWrap = widest >= Math.max(MIN_WRAP_WIDTH, docWidth * FULL_SHARE);
  const breaks: Break[] = [];
  // The indent continuation lines of the current logical line must have (undefined: not seen yet).
  let continuation: number | undefined = lines[0].itemColumn;
  let logicalStart = 0;
  for (let i = 0; i + 1 < lines.length; i++) {
    const a = lines[i];
    const b = lines[i + 1];
    let kind: Break;
    if (b.itemColumn !== undefined || HASH_LINE.test(b.text) || a.quote !== b.quote || TABULAR.test(raw[i].trim()) || TABULAR.test(raw[i + 1].trim()))
      kind = 'structure';
    else if (breaksWord(a.text, b.text)) kind = 'wrap';
    else if (lonelyWord(a.text) || lonelyWord(b.text)) kind = 'structure';
    else if (continuation !== undefined ? b.indent !== continuation : b.indent > lines[logicalStart].indent) kind = 'structure';
    else if (mayWrap && widths[i] + firstWordWidth(b.text) >= widest * FULL_SHARE) kind = 'wrap';
    else kind = 'kept';
    breaks.push(kind);
    if (kind === 'wrap') continuation ??= b.indent;
    else {
      logicalStart = i + 1;
      continuation = b.itemColumn;
    }
  }
  const open = breaks.filter((k) => k !== 'structure');
  const wraps = open.filter((k) => k === 'wrap').length;
  if (wraps === 0 || wraps * 3 < open.length * 2) return raw.map((l) => l.trimEnd());

  // Each logical line is assembled on its own (its first line keeps its indent and quote).
  const out: string[] = [];
  let current = new LineAssembler(words);
  current.line(raw[0].trimEnd());
  breaks.forEach((kind, i) => {
    if (kind === 'wrap') return current.wrap(lines[i + 1].text);
    out.push(current.toString());
    current = new LineAssembler(words);
    current.line(raw[i + 1].trimEnd());
  });
  out.push(current.toString());
  return out;
}
