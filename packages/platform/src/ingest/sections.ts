// A long text read and chunked a section at a time, so that what reading and
// chunking hold at once is one section's worth, not the document's: every
// whole-text pass over a 30 MB text (its lines split, a lexer's tokens, the
// text rebuilt) took 200-250 MB at its peak, and chunks piled up until the
// last one was made (issue 34: 2 GB for a 30 MB file).
//
// A section ends where a block ends: at a blank line outside a code fence, the
// place where the chunker's blocks end anyway, so chunking section by section
// makes the same chunks as chunking the whole. A text with no such place for
// MAX_SECTION_FACTOR sections, 16 MB (a log, one huge code block) is cut at a
// line end anyway, a fence open there closed and opened again, as the chunker
// cuts a long code block: no section is ever larger than that, so reading
// never makes a string of more than that (a paragraph or list item that long
// is read as two). Anything shorter reads as it would whole: a paragraph of
// 100,000 lines still joins into one. With a chunkSplitter, its occurrences end
// sections too (no chunk spans one), and are dropped as String.split drops
// them.

/** About this many characters a section. */
export const SECTION_CHARS = 256 * 1024;
/** A section with no block end is cut at a line end once it is this many sections long. */
export const MAX_SECTION_FACTOR = 64;

export interface TextSection {
  text: string;
  /** A chunkSplitter occurrence (or the end) follows: no chunk may go on past it. */
  pieceEnd: boolean;
}

const FENCE = /^ {0,3}(`{3,}|~{3,})(.*)$/;
const FENCE_CLOSE = /^ {0,3}(`{3,}|~{3,})\s*$/;
/** A line that goes on what came before a blank line: a list's next item, or an indented continuation (or indented code). */
const GOES_ON = /^(?: {0,3}(?:[-*+]|\d{1,9}[.)])(?:[ \t]|$)| {2,}\S|\t)/;

/** The text (lines end in \n) in sections cut at blocks' ends, each about `size` characters. */
export function* textSections(text: string, options: { splitter?: string; size?: number } = {}): Generator<TextSection> {
  const pieces = options.splitter ? splitLazily(text, options.splitter) : [text];
  for (const piece of pieces) {
    let last: string | undefined;
    for (const section of streamSections([piece], options.size)) {
      if (last !== undefined) yield { text: last, pieceEnd: false };
      last = section;
    }
    yield { text: last ?? '', pieceEnd: true };
  }
}

/**
 * Sections of a text that arrives in parts (a file as it is decoded), each
 * ending at a block's end once it is about `size` characters long. Each line
 * is looked at once, whatever the parts.
 */
export function* streamSections(parts: Iterable<string>, size = SECTION_CHARS): Generator<string> {
  const cutter = new BlockCutter();
  let buffer = '';
  const cuts = function* (complete: boolean) {
    for (let cut = cutter.find(buffer, size, complete); cut; cut = cutter.find(buffer, size, complete)) {
      // Cut inside a code fence: closed here, opened again in the next section.
      yield cut.fence ? `${buffer.slice(0, cut.end)}${cut.fence.marker}\n` : buffer.slice(0, cut.end);
      buffer = cut.fence ? `${cut.fence.line}\n${buffer.slice(cut.end)}` : buffer.slice(cut.end);
    }
  };
  for (const part of parts) {
    buffer += part;
    yield* cuts(false);
  }
  yield* cuts(true);
  if (buffer) yield buffer;
}

/** String.split, one piece at a time. */
function* splitLazily(text: string, splitter: string): Generator<string> {
  let from = 0;
  for (;;) {
    const at = text.indexOf(splitter, from);
    if (at < 0) break;
    yield text.slice(from, at);
    from = at + splitter.length;
  }
  yield text.slice(from);
}

/** Finds where sections end in a growing text, remembering how far it looked and whether that was inside a code fence. */
class BlockCutter {
  /** Where the next line to look at starts (in the text as it is now). */
  private at = 0;
  /** The code fence open there: its marker, and its opening line (to open it again). */
  private fence: { marker: string; line: string } | undefined;

  /**
   * The end of the first blank line outside a code fence that starts at or
   * after `target`, or of the line that takes the text past
   * MAX_SECTION_FACTOR times `target` (with the fence open there, if any);
   * undefined when there is none yet (then, unless `complete`, a last line
   * without its \n waits for the rest). After a cut, positions start again
   * from the cut (the caller takes the section off).
   */
  find(text: string, target: number, complete: boolean): { end: number; fence?: { marker: string; line: string } } | undefined {
    while (this.at < text.length) {
      const nl = text.indexOf('\n', this.at);
      if (nl < 0 && !complete) break;
      const start = this.at;
      const end = nl < 0 ? text.length : nl;
      this.at = nl < 0 ? text.length : nl + 1;
      const line = text.slice(start, end);
      if (this.fence) {
        const close = FENCE_CLOSE.exec(line);
        if (close && close[1]![0] === this.fence.marker[0] && close[1]!.length >= this.fence.marker.length) this.fence = undefined;
      } else {
        const open = FENCE.exec(line);
        if (open && !(open[1]![0] === '`' && open[2]!.includes('`'))) this.fence = { marker: open[1]!, line: line.trim() };
        else if (start >= target && start > 0 && line.trim() === '') {
          // Not where a list or an indented block goes on past the blank line (a loose list read in two parts reads otherwise).
          const next = text.indexOf('\n', this.at);
          if (next < 0 && !complete) {
            this.at = start; // the next line is not all here yet: look at this one again then
            break;
          }
          if (!GOES_ON.test(text.slice(this.at, next < 0 ? text.length : next))) return this.cut();
        }
      }
      if (this.at >= target * MAX_SECTION_FACTOR && this.at < text.length) return this.cut();
    }
    return undefined;
  }

  private cut(): { end: number; fence?: { marker: string; line: string } } {
    const cut = { end: this.at, ...(this.fence ? { fence: this.fence } : {}) };
    this.at = 0;
    this.fence = undefined;
    return cut;
  }
}
