// What a line break inside a paragraph becomes once the readers decide it is a
// wrap and not a break the author meant (unwrap-markdown.ts, unwrap-text.ts,
// pdf.ts decide that; this file only joins).
//
// - A word broken at a line end ("exam-" / "ple", "AES-256-" / "GCM"): the
//   line ends in a letter or digit and a hyphen, and the next line starts with
//   a letter or digit. The lines join with no space. The hyphen stays when the
//   document writes the hyphenated word elsewhere ("local-embed"); it goes when
//   the document writes the joined word elsewhere without it ("example"). With
//   no evidence either way it stays ("AES-256-GCM", "Jean-Paul", "read-only"
//   when "read" and "only" are words of the document), unless both parts are
//   lower case and the document hyphenates: most of its line-end splits leave a
//   second part that is no word of the document ("ple", "tion": a typesetter's
//   hyphenation, as LaTeX does; Word, browsers and people writing Markdown
//   break only at hyphens that are there). One such split is enough in a PDF,
//   a text or Markdown file needs two. A soft hyphen (U+00AD) at a line end
//   always goes.
// - Between two East Asian wide characters (Han, kana, fullwidth forms; not
//   Hangul, which spaces its words) the break vanishes; anywhere else it is one
//   space. This is CSS Text 3's segment break rule, what a browser does.

/**
 * The words of a document (lower-cased, counted), read once and only if a
 * line ends in a hyphen. The text may be given in parts that each end at a
 * blank line (sections.ts), read again each time they are needed: a large
 * document is then never held whole.
 */
export class DocumentWords {
  private counts: Map<string, number> | undefined;
  private splits: Map<string, number> | undefined;
  private typesetHyphens = false;
  /** `typeset`: the text comes from a PDF, where hyphenation is likelier than in a file someone typed. */
  constructor(
    private readonly text: string | (() => Iterable<string>),
    private readonly typeset = false,
  ) {}

  private *parts(): Iterable<string> {
    if (typeof this.text === 'string') yield this.text;
    else yield* this.text();
  }

  private read(): void {
    this.counts = new Map();
    // The halves of words split at line ends are not words the document uses: count them apart.
    this.splits = new Map();
    for (const part of this.parts()) {
      // Words of scripts written without spaces (a run of Han is a phrase, not a word) are never hyphenated: not kept.
      for (const m of part.matchAll(WORD)) if (!UNSPACED.test(m[0])) bump(this.counts, m[0].toLowerCase());
      for (const m of part.matchAll(LINE_END_SPLIT)) {
        bump(this.splits, m[1].toLowerCase());
        bump(this.splits, m[2].toLowerCase());
      }
    }
    let attested = 0;
    let fragments = 0;
    for (const part of this.parts()) {
      for (const m of part.matchAll(LINE_END_SPLIT)) {
        if (/^\p{Ll}/u.test(m[2]) && /\p{Ll}$/u.test(m[1])) {
          if (this.has(m[2])) attested++;
          else fragments++;
        }
      }
    }
    this.typesetHyphens = fragments > attested && fragments >= (this.typeset ? 1 : 2);
  }

  /** Whether the document uses this word (not counting the halves of words split at line ends). */
  has(word: string): boolean {
    if (!this.counts) this.read();
    const w = word.toLowerCase();
    return (this.counts!.get(w) ?? 0) > (this.splits!.get(w) ?? 0);
  }

  /** Whether line-end hyphens in this document are mostly a typesetter's hyphenation. */
  hyphenates(): boolean {
    if (!this.counts) this.read();
    return this.typesetHyphens;
  }
}

function bump(map: Map<string, number>, key: string): void {
  map.set(key, (map.get(key) ?? 0) + 1);
}

const MAX_WORD = 128;
const UNSPACED = /[\u2E80-\u9FFF\uF900-\uFAFF]/;
// A word may carry inner hyphens ("AES-256-GCM"); a hyphen at its end is not part of it.
const WORD = /[\p{L}\p{N}]+(?:[-\u2010][\p{L}\p{N}]+)*/gu;
const WORD_END_HYPHEN = /([\p{L}\p{N}]+(?:[-\u2010][\p{L}\p{N}]+)*)[-\u2010]$/u;
const WORD_START = /^[\p{L}\p{N}]+/u;
// The last part of a word before a line-end hyphen, and the next line's first word.
const LINE_END_SPLIT = /([\p{L}\p{N}]+)[-\u2010][ \t]*\n[ \t>]*([\p{L}\p{N}]+)/gu;

// East Asian Width F, W or H (the blocks that matter for text), Hangul taken out below.
const WIDE =
  /^[\u2E80-\u303E\u3041-\u33FF\u3400-\u4DBF\u4E00-\u9FFF\uA000-\uA4CF\uF900-\uFAFF\uFE30-\uFE4F\uFF00-\uFF60\uFF61-\uFFDC\uFFE0-\uFFE6\u{1F200}-\u{1F2FF}\u{20000}-\u{3FFFD}]$/u;
const HANGUL = /^\p{Script=Hangul}$/u;

/** A character a CJK line can wrap before or after with no space (East Asian wide, not Hangul). */
export function isWide(char: string): boolean {
  return WIDE.test(char) && !HANGUL.test(char);
}

function lastChar(s: string): string {
  const code = s.charCodeAt(s.length - 1);
  return code >= 0xdc00 && code <= 0xdfff && s.length > 1 ? s.slice(-2) : s.slice(-1);
}

function firstChar(s: string): string {
  return String.fromCodePoint(s.codePointAt(0) ?? 32);
}

/** Columns a line takes in a monospaced editor: wide characters count 2, combining marks 0. */
export function displayWidth(line: string): number {
  let width = 0;
  for (const ch of line) {
    if (/\p{M}/u.test(ch)) continue;
    width += isWide(ch) ? 2 : 1;
  }
  return width;
}

/** Whether a line break after `line` falls inside a word ("exam-" / "ple", "AES-256-" / "GCM"). */
export function breaksWord(line: string, next: string): boolean {
  return /(?:[\p{L}\p{N}][-\u2010]|\u00ad)$/u.test(line.slice(-2)) && /^[\p{L}\p{N}]/u.test(next);
}

/**
 * How `line` (no trailing whitespace) and `next` (no leading whitespace) join
 * across a wrap: `drop` characters off the end of `line` (a hyphen), then `glue`.
 */
export function wrapJoint(line: string, next: string, words: DocumentWords): { drop: number; glue: string } {
  if (!line || !next) return { drop: 0, glue: '' };
  if (line.endsWith('\u00ad')) return { drop: 1, glue: '' };
  const head = WORD_START.exec(next)?.[0];
  const stem = head && /[-\u2010]$/.test(line) ? WORD_END_HYPHEN.exec(line.slice(-MAX_WORD))?.[1] : undefined;
  if (head && stem) {
    let keep: boolean;
    if (words.has(`${stem}-${head}`)) keep = true;
    else if (words.has(stem + head)) keep = false;
    else {
      const last = stem.split(/[-\u2010]/).pop()!;
      const lowerCase = /^\p{Ll}+$/u.test(last) && /^\p{Ll}/u.test(head);
      keep = !lowerCase || (words.has(last) && words.has(head)) || !words.hyphenates();
    }
    return { drop: keep ? 0 : 1, glue: '' };
  }
  const a = lastChar(line);
  const b = firstChar(next);
  return { drop: 0, glue: a === '\u200b' || b === '\u200b' || (isWide(a) && isWide(b)) ? '' : ' ' };
}

/**
 * Text put together line by line: each line starts after a separator or is
 * joined to the line before as a wrap. Only the last line is ever looked at
 * or changed, so a paragraph of 100,000 lines costs what its length does.
 */
export class LineAssembler {
  private readonly parts: string[] = [];
  private last = '';
  constructor(private readonly words: DocumentWords) {}

  /** The last line added, as it stands. */
  get lastLine(): string {
    return this.last;
  }

  get empty(): boolean {
    return this.parts.length === 0;
  }

  /** Starts the text, or a new line after `separator`. */
  line(text: string, separator = '\n'): void {
    if (this.parts.length) this.parts.push(separator);
    this.parts.push(text);
    this.last = text;
  }

  /** Joins `text` to the line before as a wrap (line-joins.ts rules). */
  wrap(text: string): void {
    if (!this.parts.length) return this.line(text);
    const { drop, glue } = wrapJoint(this.last, text, this.words);
    if (drop) this.trimLast(drop);
    this.parts.push(glue, text);
    this.last = text;
  }

  /** Takes `n` characters off the end of the last line (a hard break's backslash). */
  trimLast(n: number): void {
    this.last = this.last.slice(0, -n);
    this.parts[this.parts.length - 1] = this.last;
  }

  toString(): string {
    return this.parts.join('');
  }
}

// A list item's marker at a line start: bullets, "1." "1)" "(1)" "a)" "(a)" "iv." "IV." "A)", and "①" or "・" with no space after.
// Not en or em dashes, nor "+" (a wrapped line may start with one), nor "A." (an initial).
const LIST_MARKER =
  /^\s*(?:[-*\u2022\u2023\u2043\u25aa\u25ab\u25cf\u25e6\u00b7]|\d{1,3}[.)]|\(\d{1,3}\)|[a-z][.)]|\([a-z]\)|[A-Z]\)|[ivxlc]{1,6}[.)]|[IVXLC]{2,6}\.)(?=\s)|^\s*[\u2460-\u2473\u30fb]/u;

/** Where a list item starts on this line: the marker's match, or undefined. */
export function listMarker(line: string): RegExpExecArray | null {
  return LIST_MARKER.exec(line);
}
