// Markdown -> chunks for indexing, measured in tokens of the repo's bundled
// o200k tokenizer.
//
// Rules (each chunk's `tokens` is its final text's count):
// - A custom `chunkSplitter` cuts the text first; no chunk spans two pieces.
// - A heading starts a new chunk and sets the title path (`["# A", "## B"]`).
//   With `prefixTitle` (default) the path is written at the top of every chunk
//   and heading lines are not repeated in the body; without it the heading
//   lines stay in the body where they stood. A path that would take more than
//   half the budget is cut to its last heading, then dropped.
// - Blocks (paragraphs, lists, code fences, tables) are packed whole, greedily.
//   A block over the budget is split: code by lines (each piece re-fenced),
//   tables by rows (each piece repeats the header row), text by lines (not at
//   a hard wrap), then sentences, then clauses (a sentence longer than a chunk
//   ends a chunk at a comma, not mid-clause: the answerer can tell a cut
//   there), then words, then code points: the indivisible unit is one code
//   point, so EVERY chunk is <= chunkSize tokens (chunkSize >= 16).
// - Overlap: a chunk cut for size (not at a heading or splitter) starts with
//   the previous chunk's trailing sentences, up to `overlap` tokens, taken only
//   from a text block: never from inside code or a table. It is reported in
//   `overlap`, and counts toward chunkSize.

import { loadTokenizer } from '@kbchat/shared';
import { parseMarkdownBlocks, type MarkdownBlock } from './markdown-blocks.js';
import { textSections, type TextSection } from './sections.js';
import { countTokens, splitToBudget, tailForOverlap } from './text-split.js';

export interface ChunkOptions {
  /** Most tokens in a chunk (default 512; at least 16). Pass the vector model's `defaultToken`. */
  chunkSize?: number;
  /** Tokens repeated from the previous chunk (default 12% of chunkSize; 0 = none; at most half of chunkSize). */
  overlap?: number;
  /** A string that forces a split before anything else (e.g. `\n\n\n` or `###`). */
  chunkSplitter?: string;
  /** Write the title path at the top of each chunk's text (default true). */
  prefixTitle?: boolean;
  /** Most blocks (paragraphs, a table's rows as CSV and spreadsheets give them) in a chunk; default: as many as fit. */
  maxBlocks?: number;
}

export interface Chunk {
  /** What to embed and store: title path (if prefixed) + overlap + content. */
  text: string;
  /** Enclosing markdown headings, outermost first, e.g. `["# Guide", "## Install"]`. */
  titlePath: string[];
  /** 0-based position in the document. */
  index: number;
  /** o200k tokens of `text` (whitespace-free runs over 1000 characters counted in slices: see countTokens). */
  tokens: number;
  /** The leading part of the content repeated from the previous chunk ('' when none). */
  overlap: string;
  /** The pages of its document it comes from, first and last (PDF, when found: chunk-stream.ts). */
  pages?: [number, number];
  /** The rows of its sheet or CSV file it holds, first and last (row numbers: chunk-stream.ts). */
  rows?: [number, number];
}

type UnitKind = 'text' | 'code' | 'table' | 'heading';
interface Unit {
  text: string;
  sep: string;
  tokens: number;
  kind: UnitKind;
}

export const MIN_CHUNK_SIZE = 16;

function prefixFor(path: string[], chunkSize: number, enabled: boolean): string {
  if (!enabled || path.length === 0) return '';
  for (const candidate of [path.join('\n'), path[path.length - 1]]) {
    if (countTokens(candidate) + 1 <= chunkSize / 2) return candidate + '\n';
  }
  return '';
}

/** Turns one block into units that each fit `budget` tokens. */
function blockUnits(block: Exclude<MarkdownBlock, { kind: 'heading' }>, budget: number): Unit[] {
  const whole = countTokens(block.text);
  if (whole <= budget) return [{ text: block.text, sep: '\n\n', tokens: whole, kind: block.kind }];
  if (block.kind === 'code') {
    const wrap = countTokens(`${block.open}\n\n${block.close}`);
    if (wrap + 4 <= budget) {
      return packLines(block.lines, budget - wrap, (body) => `${block.open}\n${body}\n${block.close}`, 'code');
    }
  }
  if (block.kind === 'table') {
    const head = countTokens(block.header) + 1;
    if (head + 4 <= budget) return packLines(block.rows, budget - head, (rows) => `${block.header}\n${rows}`, 'table');
  }
  return splitToBudget(block.text, budget, '\n\n', whole).map((p) => ({ ...p, kind: 'text' as const }));
}

/**
 * Groups lines greedily into bodies of at most `budget` tokens and wraps each
 * (re-fencing code, repeating a table's header). A single line over the budget
 * is split further and each fragment wrapped alone.
 */
function packLines(lines: string[], budget: number, wrap: (body: string) => string, kind: UnitKind): Unit[] {
  const bodies: string[] = [];
  let current: string[] = [];
  let used = 0;
  for (const line of lines) {
    const t = countTokens(line) + 1;
    if (t > budget) {
      if (current.length) bodies.push(current.join('\n'));
      current = [];
      used = 0;
      for (const piece of splitToBudget(line, budget - 1)) bodies.push(piece.text);
      continue;
    }
    if (used + t > budget && current.length) {
      bodies.push(current.join('\n'));
      current = [];
      used = 0;
    }
    current.push(line);
    used += t;
  }
  if (current.length || bodies.length === 0) bodies.push(current.join('\n'));
  return bodies.map((body) => {
    const text = wrap(body);
    return { text, sep: '\n\n', tokens: countTokens(text), kind };
  });
}

class ChunkBuilder {
  /** Chunks made and not yet taken (take()). */
  private made: Chunk[] = [];
  /** Chunks made in all: the next one's index. */
  private count = 0;
  /** The title path of the section being read. */
  path: string[] = [];
  private units: Unit[] = [];
  /** Estimated tokens of overlap + units + joins, kept as units are added (no re-summing). */
  private used = 0;
  private overlap = '';
  private prefix = '';
  private prefixTokens = 0;
  /** The path `prefix` was made for: a heading replaces the path array, so identity says when to count again. */
  private prefixOf: string[] | undefined;
  private budget = 0;
  private started = false;

  constructor(
    private readonly chunkSize: number,
    private readonly overlapTokens: number,
    private readonly prefixTitle: boolean,
    private readonly maxBlocks = Infinity,
  ) {}

  /** Starts a fresh chunk for the current path; `overlap` is carried only after a size cut. */
  private start(overlap: string): void {
    if (this.prefixOf !== this.path) {
      this.prefixOf = this.path;
      this.prefix = prefixFor(this.path, this.chunkSize, this.prefixTitle);
      this.prefixTokens = this.prefix ? countTokens(this.prefix) : 0;
    }
    this.budget = this.chunkSize - (this.prefix ? this.prefixTokens + 1 : 0); // +1: the join after the prefix
    this.units = [];
    this.overlap = overlap;
    this.used = overlap ? countTokens(overlap) + 1 : 0;
    this.started = true;
  }

  /** Token budget for the content of the chunk being filled (title prefix already taken off). */
  get unitBudget(): number {
    if (!this.started) this.start('');
    return this.budget;
  }

  /** A heading ends the chunk being filled, unless that chunk holds only heading lines so far. */
  heading(block: Extract<MarkdownBlock, { kind: 'heading' }>): void {
    if (!this.units.every((u) => u.kind === 'heading')) this.flush(false);
    this.path = [...this.path.filter((h) => /^#+/.exec(h)![0].length < block.level), block.text];
    if (this.units.length === 0) this.started = false; // the next chunk's prefix is the new path
    if (!this.prefixTitle) {
      for (const p of splitToBudget(block.text, this.unitBudget, '\n\n')) this.add({ ...p, kind: 'heading' });
    }
  }

  private compose(units: Unit[], overlap: string): string {
    let body = overlap;
    for (const u of units) body += (body ? u.sep : '') + u.text;
    return this.prefix + body;
  }

  add(unit: Unit): void {
    if (!this.started) this.start('');
    if (this.units.length >= this.maxBlocks) this.flush(true);
    if (this.used + unit.tokens > this.budget) {
      if (this.units.length > 0) {
        this.flush(true);
        this.add(unit); // into the next chunk, after any units the flush carried over
        return;
      }
      this.overlap = ''; // only the overlap stands in the way: content wins
      this.used = 0;
    }
    this.units.push(unit);
    this.used += unit.tokens + 1;
  }

  /** Ends the current chunk. `sizeCut`: the next chunk continues the same section, so it gets overlap. */
  flush(sizeCut: boolean): void {
    let units = this.units;
    if (units.length === 0) {
      this.started = false;
      return;
    }
    let text = this.compose(units, this.overlap);
    let tokens = countTokens(text);
    // The packing sums are estimates (tokens can merge or split across joins): check the real count.
    const carried: Unit[] = [];
    while (tokens > this.chunkSize && (units.length > 1 || this.overlap)) {
      if (this.overlap) this.overlap = '';
      else {
        carried.unshift(units[units.length - 1]);
        units = units.slice(0, -1);
      }
      text = this.compose(units, this.overlap);
      tokens = countTokens(text);
    }
    if (tokens > this.chunkSize) {
      // A single unit whose joins cost more than estimated: split it finer and pack again.
      const finer = splitToBudget(units[0].text, Math.max(4, Math.floor(this.budget * 0.9)), units[0].sep);
      this.units = [];
      this.overlap = '';
      this.used = 0;
      for (const u of [...finer.map((p) => ({ ...p, kind: 'text' as const })), ...carried]) this.add(u);
    } else {
      this.made.push({ text, titlePath: [...this.path], index: this.count++, tokens, overlap: this.overlap });
      const last = units[units.length - 1];
      const cutInside = sizeCut || carried.length > 0;
      this.start(cutInside && this.overlapTokens > 0 && last.kind === 'text' ? tailForOverlap(last.text, this.overlapTokens) : '');
      for (const u of carried) this.add(u);
    }
    // A section or splitter boundary: nothing of this section may stay behind for the next one.
    if (!sizeCut && this.units.length > 0) this.flush(false);
    if (!sizeCut) this.started = false;
  }

  /** The chunks made since the last take. */
  take(): Chunk[] {
    const made = this.made;
    this.made = [];
    return made;
  }
}

/** Splits markdown into chunks. Loads the tokenizer first (about 200 ms, once). */
export async function chunkMarkdown(markdown: string, options: ChunkOptions = {}): Promise<Chunk[]> {
  await loadTokenizer();
  return chunkMarkdownLoaded(markdown, options);
}

/** The same as chunkMarkdown, for callers that already awaited `loadTokenizer()`. */
export function chunkMarkdownLoaded(markdown: string, options: ChunkOptions = {}): Chunk[] {
  const chunks: Chunk[] = [];
  const chunker = new SectionChunker(options);
  for (const section of textSections(markdown.replace(/\r\n?/g, '\n'), { splitter: options.chunkSplitter })) chunks.push(...chunker.push(section));
  return chunks;
}

/**
 * Chunks a text a section at a time (sections.ts: each ends where a block
 * ends, and says whether a chunkSplitter piece ends with it): the same chunks
 * as chunkMarkdownLoaded on the whole text, given back as they are made.
 * The tokenizer must be loaded (`loadTokenizer()`).
 */
export class SectionChunker {
  private readonly builder: ChunkBuilder;

  constructor(options: ChunkOptions = {}) {
    const chunkSize = Math.max(MIN_CHUNK_SIZE, Math.floor(options.chunkSize ?? 512));
    const overlapTokens = Math.min(Math.floor(chunkSize / 2), Math.max(0, Math.floor(options.overlap ?? chunkSize * 0.12)));
    this.builder = new ChunkBuilder(chunkSize, overlapTokens, options.prefixTitle ?? true, Math.max(1, options.maxBlocks ?? Infinity));
  }

  /** The section's text (lines end in \n, no \r) in; the chunks it completed out. */
  push(section: TextSection): Chunk[] {
    for (const block of parseMarkdownBlocks(section.text)) {
      if (block.kind === 'heading') {
        this.builder.heading(block);
        continue;
      }
      for (const unit of blockUnits(block, this.builder.unitBudget)) this.builder.add(unit);
    }
    // A splitter piece never shares a chunk with the next.
    if (section.pieceEnd) this.builder.flush(false);
    return this.builder.take();
  }
}
