// Markdown as people wrote it: files hard-wrapped at 80 columns keep their
// paragraphs as one line each, as CommonMark renders them (a line break inside
// a paragraph is a soft break, i.e. a space), so later steps never read a wrap
// as the end of a sentence.
//
// marked's block lexer finds the structure; each block's own source is kept,
// except that:
// - paragraphs (also inside list items and block quotes) become one line; a
//   hard break (two trailing spaces or a backslash) stays a line break, without
//   its marker; joins follow line-joins.ts (hyphens, CJK);
// - a list item's wrapped lines join into the item; items keep their markers,
//   nesting and numbers (each item is rewritten as `marker + one space`);
// - a block quote's paragraphs join inside the quote (`> ` on every line);
// - a setext heading (a title underlined with === or ---) becomes an ATX one
//   (`# Title`), the form the chunker reads as a heading.
// Code (fenced or indented), tables, HTML blocks, rules and link definitions
// are left exactly as written.

import { Lexer, type Token, type Tokens } from 'marked';
import { DocumentWords, LineAssembler } from './line-joins.js';

/** `words`: the whole document's, when this is a section of it (sections.ts). */
export function unwrapMarkdown(markdown: string, words?: DocumentWords): string {
  const src = markdown.replace(/\r\n?/g, '\n');
  if (tooCostly(src)) return src;
  let tokens: Token[];
  try {
    tokens = new Lexer({ gfm: true }).blockTokens(src, []);
  } catch {
    return src; // the lexer gave up (absurd nesting): the text as written is still readable
  }
  return renderBlocks(tokens, words ?? new DocumentWords(src));
}

const MARKERS = /^[ \t>]*((?:(?:[-*+]|\d{1,9}[.)])(?:[ \t]+|$))+)/;
const ENDS_LIST = /^[ \t]{0,3}(?:#{1,6}(?:[ \t]|$)|```|~~~|>)/;

/**
 * Whether lexing this Markdown (and rendering it back) would cost far more
 * than its length: marked reads a list item's lines again for each line of it,
 * and a quote's content again for each level (one 100,000-line item would take
 * an hour, 200 levels of quotes over 9 MB 15 s). Such a file stays as written.
 *
 * Lists: the squares of each item's line count (an item runs until a marker
 * no deeper than its own, or a line no deeper after a blank line or starting a
 * heading, fence or quote; an unindented line right after it is a lazy
 * continuation), markers stacked on one line counting as items nested there;
 * at most half the length plus 4 million (about a second). Quotes: each line's
 * length times its depth beyond the first (a lazy line has the depth of the
 * line before); at most 8 times the length plus 100 million.
 */
function tooCostly(src: string): boolean {
  const lines = src.split('\n');
  let itemRereads = 0;
  let quoteRereads = 0;
  const open: { indent: number; start: number }[] = [];
  const close = (indent: number, at: number) => {
    while (open.length && open[open.length - 1].indent >= indent) itemRereads += (at - open.pop()!.start) ** 2;
  };
  let depth = 0;
  lines.forEach((line, i) => {
    if (!line.trim()) {
      depth = 0;
      return;
    }
    const lead = /^[ \t>]*/.exec(line)![0];
    const quotes = lead.split('>').length - 1;
    depth = quotes || depth; // a lazy line continues the quote it follows
    quoteRereads += line.length * Math.max(0, depth - 1);
    const markers = MARKERS.exec(line);
    if (markers) {
      close(lead.length, i);
      open.push({ indent: lead.length, start: i });
      itemRereads += markers[1].split(/[ \t]+/).filter(Boolean).length ** 2;
    } else if (!lines[i - 1]?.trim() || ENDS_LIST.test(line)) close(lead.length, i);
  });
  close(-1, lines.length);
  return itemRereads > src.length / 2 + 4_000_000 || quoteRereads > src.length * 8 + 100_000_000;
}

function renderBlocks(tokens: Token[], words: DocumentWords): string {
  let out = '';
  for (const token of tokens) out += renderBlock(token, words);
  return out;
}

/** A block's source without its trailing line breaks, and those line breaks. */
function splitTail(raw: string): [body: string, tail: string] {
  const body = raw.replace(/\n+$/, '');
  return [body, raw.slice(body.length)];
}

function renderBlock(token: Token, words: DocumentWords): string {
  switch (token.type) {
    case 'paragraph':
    case 'text': {
      const [body, tail] = splitTail(token.raw);
      return unwrapParagraph(body, words) + tail;
    }
    case 'heading': {
      const [body, tail] = splitTail(token.raw);
      if (!body.includes('\n')) return token.raw;
      return `${'#'.repeat((token as Tokens.Heading).depth)} ${unwrapParagraph((token as Tokens.Heading).text, words)}${tail}`;
    }
    case 'list':
      return renderList(token as Tokens.List, words);
    case 'blockquote': {
      const [, tail] = splitTail(token.raw);
      const inner = renderBlocks((token as Tokens.Blockquote).tokens, words).replace(/\n+$/, '');
      return (
        inner
          .split('\n')
          .map((line) => (line ? `> ${line}` : '>'))
          .join('\n') + tail
      );
    }
    default:
      return token.raw; // code, table, html, hr, def, space (and a task's checkbox, written before its text)
  }
}

function renderList(list: Tokens.List, words: DocumentWords): string {
  const [, tail] = splitTail(list.raw);
  const items = list.items.map((item) => {
    const prefix = `${/^\s*([-*+]|\d{1,9}[.)])/.exec(item.raw)?.[1] ?? '-'} `;
    const pad = ' '.repeat(prefix.length);
    const body = renderBlocks(item.tokens, words).replace(/\n+$/, '');
    return (
      prefix +
      body
        .split('\n')
        .map((line, i) => (i === 0 || !line ? line : pad + line))
        .join('\n')
    ).trimEnd();
  });
  return items.join(list.loose ? '\n\n' : '\n') + tail;
}

const HARD_BREAK_SPACES = / {2,}$/;
const HARD_BREAK_BACKSLASH = /(?:^|[^\\])(?:\\\\)*\\$/; // an odd number of backslashes ends the line

/** One paragraph's lines as one line, except at hard breaks. */
function unwrapParagraph(body: string, words: DocumentWords): string {
  const lines = body.split('\n');
  const out = new LineAssembler(words);
  lines.forEach((line, i) => {
    const text = line.trim();
    const before = lines[i - 1];
    if (i === 0) out.line(text);
    else if (HARD_BREAK_BACKSLASH.test(before)) {
      out.trimLast(1);
      out.line(text);
    } else if (HARD_BREAK_SPACES.test(before)) out.line(text);
    else out.wrap(text);
  });
  return out.toString();
}
