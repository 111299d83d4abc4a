// A quote's text as the units an answer may be made of: whole sentences of
// its paragraphs, whole list items, whole table rows, whole records (a
// block of "column: value" lines, as the platform writes CSV rows) and whole
// code blocks (fenced, as written; the sentence introducing one, "To
// install it as a dependency:", is its context too). The
// structure is read from the lines first (headings, fences, tables, lists,
// records); only then is a paragraph's text unwrapped (a single line break
// is a space) and cut into sentences, so hard-wrapped text never yields half
// a sentence.
//
// A unit that may not be whole is kept out of answers: a sentence without
// its end (a paragraph cut by the chunker, a heading-like line), a quote's
// last list item that looks cut (mayBeCut; its whole sentences before the cut
// stay in), the rest of a cut item opening a quote glued to the next item,
// and a sentence ending in a colon unless a list follows it. A cut unit is
// marked `cut`: extractive-answer.ts mends it when the next quotes hold the
// rest. The first sentence of
// a quote is marked `opening`: a chunk's overlap is often the tail of the
// previous chunk's last sentence, which only the other quotes can tell
// (extractive-answer.ts decides). Units kept out still give context (a
// heading's words count for the units under it).
import { SENTENCE_END, splitSentences, unwrapLines } from './text.js';

export type UnitKind = 'sentence' | 'item' | 'row' | 'record' | 'code';

export interface Unit {
  /** The quote's index in the prompt (0 = first, the best-ranked for the platform's prompt). */
  quote: number;
  /** Order within the quote; consecutive sentences of one paragraph differ by 1 and share `block`. */
  pos: number;
  block: number;
  kind: UnitKind;
  /** What an answer prints: the source text, line breaks inside a paragraph unwrapped. */
  text: string;
  /** Headings above the unit in its quote (a table's header for a row). */
  context: string;
  /** Whether the unit is whole and may stand in an answer. */
  answerable: boolean;
  /** For a list item, its list (a block id); for a sentence ending in a colon, the list right after it. */
  list?: number;
  /** For a sentence ending in a colon, the code block right after it (a block id); for a code block, its own. */
  code?: number;
  /** For a table row: the header row and the separator row to print above it. */
  header?: string[];
  /** The quote's first sentence, which may be the tail of a sentence cut in the previous chunk. */
  opening?: boolean;
  /** The quote's last unit, without a sentence end, that looks cut short by the chunker (its tail opens the next chunk). */
  cut?: boolean;
}

const FENCE = /^\s{0,3}(`{3,}|~{3,})/;
const HEADING = /^\s{0,3}#{1,6}\s+(.*?)\s*#*\s*$/;
const TABLE_LINE = /^\s*\|.*\|\s*$/;
const TABLE_SEPARATOR = /^\s*\|?\s*:?-{2,}:?\s*(\|\s*:?-{2,}:?\s*)*\|?\s*$/;
const ITEM = /^\s{0,3}([-*+•]|\d{1,3}[.)])\s+\S/;
const FIELD = /^[^:\s][^:\n]{0,58}:\s+\S/;

type Block =
  | { kind: 'heading'; text: string }
  // `closed`: the block has its closing fence (one cut open is not quoted).
  | { kind: 'code'; text: string; closed: boolean }
  | { kind: 'table'; lines: string[] }
  // `glued`: the list's first item stood on the line right under a paragraph line (no blank line between).
  | { kind: 'list'; items: string[]; glued?: boolean }
  | { kind: 'paragraph'; lines: string[] };

function readBlocks(text: string): Block[] {
  const blocks: Block[] = [];
  const lines = text.replace(/\r\n?/g, '\n').split('\n');
  let current: Block | undefined;
  const close = () => (current = undefined);
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!;
    if (FENCE.test(line)) {
      const fence = FENCE.exec(line)![1]!;
      const start = i;
      // Closed by a line of the same fence character, at least as long (a longer fence may hold a shorter one).
      const closing = new RegExp(`^\\s{0,3}${fence[0] === '`' ? '`' : '~'}{${fence.length},}\\s*$`);
      while (i + 1 < lines.length && !closing.test(lines[i + 1]!)) i++;
      i++;
      const closed = i < lines.length;
      blocks.push({
        kind: 'code',
        text: lines
          .slice(start, i + 1)
          .join('\n')
          .trim(),
        closed,
      });
      close();
    } else if (!line.trim()) {
      // A blank line ends a paragraph; a list goes on if its next item follows.
      if (current?.kind !== 'list') close();
    } else if (HEADING.test(line)) {
      blocks.push({ kind: 'heading', text: HEADING.exec(line)![1]! });
      close();
    } else if (TABLE_LINE.test(line)) {
      if (current?.kind !== 'table') blocks.push((current = { kind: 'table', lines: [] }));
      current.lines.push(line.trim());
    } else if (ITEM.test(line)) {
      if (current?.kind !== 'list') blocks.push((current = { kind: 'list', items: [], glued: current?.kind === 'paragraph' }));
      current.items.push(line.trim());
    } else if (current?.kind === 'list' && (/^\s/.test(line) || lines[i - 1]?.trim())) {
      // An indented line, or one right under an item, continues the item.
      current.items[current.items.length - 1] = unwrapLines([current.items.at(-1)!, line]);
    } else {
      if (current?.kind !== 'paragraph') blocks.push((current = { kind: 'paragraph', lines: [] }));
      current.lines.push(line);
    }
  }
  return blocks;
}

/** A paragraph of two or more "column: value" lines (indented lines continue a value): a CSV row as the platform writes it. */
function recordLines(lines: string[]): string[] | undefined {
  if (lines.length < 2 || !FIELD.test(lines[0]!)) return undefined;
  const fields: string[] = [];
  for (const line of lines) {
    if (FIELD.test(line)) fields.push(line.trim());
    else if (/^\s/.test(line) && fields.length) fields[fields.length - 1] += ' ' + line.trim();
    else return undefined;
  }
  return fields.length >= 2 ? fields : undefined;
}

/** A short line with no sentence end standing alone (a PDF's heading, a caption): context, not an answer. */
const headingLike = (lines: string[], text: string) =>
  lines.length === 1 && !SENTENCE_END.test(text) && !/[:：]$/.test(text) && !/[,;，；]/.test(text) && text.split(/\s+/).length <= 12;

const ITEM_MARKER = /^\s*([-*+•]|\d{1,3}[.)])\s+/;

/**
 * Whether a quote's last list item, which has no sentence end, may be cut
 * short: the list's other items end with one, the item holds sentences
 * before its unfinished last one, it ends on a comma, a dash or an open
 * bracket, or it is as long as a sentence, not a list entry ("rubber boots").
 * Also when it is the list's only item: the chunker cuts a long item alone.
 */
function mayBeCut(item: string, items: string[]): boolean {
  if (SENTENCE_END.test(item)) return false;
  const body = item.replace(ITEM_MARKER, '');
  return items.slice(0, -1).some((x) => SENTENCE_END.test(x)) || splitSentences(body).length > 1 || /[,;([–—-]$/.test(body) || body.split(/\s+/).length >= 16;
}

/** The units of one quote's text. */
export function segmentQuote(text: string, quote: number): Unit[] {
  const units: Unit[] = [];
  const headings: string[] = [];
  const blocks = readBlocks(text);
  let pos = 0;
  const push = (u: Omit<Unit, 'quote' | 'pos' | 'context'>, context = headings.join(' ')) => units.push({ ...u, quote, pos: pos++, context });
  blocks.forEach((b, blockIndex) => {
    const first = units.length === 0;
    const next = blocks[blockIndex + 1];
    if (b.kind === 'heading') {
      headings.push(b.text);
    } else if (b.kind === 'code') {
      // The sentence right before, when it introduces the block ("… as a dependency:"), says what the code is for.
      const intro = units.at(-1)?.code === blockIndex ? units.at(-1)!.text : '';
      push({ block: blockIndex, kind: 'code', text: b.text, answerable: b.closed, code: blockIndex }, [...headings, intro].join(' ').trim());
    } else if (b.kind === 'list') {
      b.items.forEach((item, i) => {
        const cut = blockIndex === blocks.length - 1 && i === b.items.length - 1 && mayBeCut(item, b.items);
        if (!cut) return push({ block: blockIndex, kind: 'item', text: item, answerable: true, list: blockIndex });
        // The whole sentences before the cut still answer (beyond a bold title alone); the unfinished one does not.
        const unfinished = splitSentences(item).at(-1)!;
        const whole = item.slice(0, item.lastIndexOf(unfinished)).trimEnd();
        const split =
          whole
            .replace(ITEM_MARKER, '')
            .replace(/^\*\*[^*]*(\*\*|$)/, '')
            .trim() !== '';
        if (split) push({ block: blockIndex, kind: 'item', text: whole, answerable: true, list: blockIndex });
        push({ block: blockIndex, kind: 'item', text: split ? unfinished : item, answerable: false, list: blockIndex, cut });
      });
    } else if (b.kind === 'table') {
      const hasHeader = b.lines.length >= 2 && TABLE_SEPARATOR.test(b.lines[1]!);
      const header = hasHeader ? [b.lines[0]!, b.lines[1]!] : undefined;
      for (const row of b.lines.slice(hasHeader ? 2 : 0)) {
        if (!TABLE_SEPARATOR.test(row))
          push({ block: blockIndex, kind: 'row', text: row, answerable: true, header }, `${headings.join(' ')} ${header?.[0] ?? ''}`);
      }
    } else if (b.kind === 'paragraph') {
      const fields = recordLines(b.lines);
      if (fields) {
        push({ block: blockIndex, kind: 'record', text: fields.join('\n'), answerable: true });
        return;
      }
      const paragraph = unwrapLines(b.lines);
      if (headingLike(b.lines, paragraph) && next && next.kind !== 'heading') {
        headings.push(paragraph);
        return;
      }
      const sentences = splitSentences(paragraph);
      // A quote that opens with a line glued to a list, with no colon to introduce it, opens with the rest of a list item cut in the previous chunk.
      const itemTail = first && next?.kind === 'list' && next.glued === true && !/[:：]$/.test(paragraph);
      sentences.forEach((s, i) => {
        const introduces = s.endsWith(':') && i === sentences.length - 1 ? next?.kind : undefined;
        const introducesList = introduces === 'list';
        const introducesCode = introduces === 'code' && next?.kind === 'code' && next.closed;
        const whole = (SENTENCE_END.test(s) || introducesList || introducesCode) && !itemTail;
        const cut = !SENTENCE_END.test(s) && blockIndex === blocks.length - 1 && i === sentences.length - 1;
        push({
          block: blockIndex,
          kind: 'sentence',
          text: s,
          answerable: whole,
          ...(introducesList ? { list: blockIndex + 1 } : {}),
          ...(introducesCode ? { code: blockIndex + 1 } : {}),
          ...(first && i === 0 ? { opening: true } : {}),
          ...(cut ? { cut } : {}),
        });
      });
    }
  });
  return units;
}
