// What a line break inside a paragraph becomes once the readers decide it is a
// wrap and not a break the author meant (unwrap-markdown.ts, unwrap-text.ts,
// pdf.ts decide that; this file only joins).
//
// - A word broken at a line end ("exam-" / "ple", "AES-256-" / "GCM"): the
//   line ends in a letter or digit and a hyphen, and the next line starts with
//   a letter or digit. The lines join with no space. The hyphen goes when the
//   document writes the joined word elsewhere without it ("example") and never
//   with it; it stays when the document writes the hyphenated word elsewhere
//   ("local-embed"). With no evidence either way it stays ("AES-256-GCM",
//   "Jean-Paul"), except in a PDF between two lower-case parts ("exam-ple"),
//   where typesetters' hyphenation is the likelier cause. A soft hyphen
//   (U+00AD) at a line end always goes.
// - Between two East Asian wide characters (Han, kana, fullwidth forms; not
//   Hangul, which spaces its words) the break vanishes; anywhere else it is one
//   space. This is CSS Text 3's segment break rule, what a browser does.

export interface JoinOptions {
  /** PDF: lower-case halves around a line-end hyphen are one hyphenated word when the document says nothing. */
  typesetHyphens?: boolean;
}

/** The words of a document, lower-cased, built once and only if a line ends in a hyphen. */
export class DocumentWords {
  private words: Set<string> | undefined;
  constructor(private readonly text: string) {}

  has(word: string): boolean {
    this.words ??= new Set(Array.from(this.text.matchAll(WORD), (m) => m[0].toLowerCase()));
    return this.words.has(word.toLowerCase());
  }
}

// A word may carry inner hyphens ("AES-256-GCM"); a hyphen at its end is not part of it.
const WORD = /[\p{L}\p{N}]+(?:[-\u2010][\p{L}\p{N}]+)*/gu;
const WORD_END_HYPHEN = /([\p{L}\p{N}]+(?:[-\u2010][\p{L}\p{N}]+)*)[-\u2010]$/u;
const WORD_START = /^[\p{L}\p{N}]+/u;

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

/** Whether a line break between these two lines falls inside a word ("exam-" / "ple", "AES-256-" / "GCM"). */
export function breaksWord(before: string, after: string): boolean {
  return /(?:[\p{L}\p{N}][-\u2010]|\u00ad)$/u.test(before) && /^[\p{L}\p{N}]/u.test(after);
}

/**
 * Joins `before` (the text so far, no trailing whitespace) and `after` (the
 * next line, no leading whitespace) across a line break judged to be a wrap.
 */
export function joinWrapped(before: string, after: string, words: DocumentWords, opts: JoinOptions = {}): string {
  if (!before) return after;
  if (!after) return before;
  if (before.endsWith('\u00ad')) return before.slice(0, -1) + after;
  const head = WORD_START.exec(after)?.[0];
  const stem = head ? WORD_END_HYPHEN.exec(before)?.[1] : undefined;
  if (head && stem) {
    const hyphenated = `${stem}-${head}`;
    const closed = stem + head;
    let keep: boolean;
    if (words.has(hyphenated)) keep = true;
    else if (words.has(closed)) keep = false;
    else keep = !(opts.typesetHyphens && /^\p{Ll}+$/u.test(stem.split(/[-\u2010]/).pop()!) && /^\p{Ll}/u.test(head));
    return (keep ? before : before.slice(0, -1)) + after;
  }
  const a = lastChar(before);
  const b = firstChar(after);
  if (a === '\u200b' || b === '\u200b' || (isWide(a) && isWide(b))) return before + after;
  return `${before} ${after}`;
}

// A list item's marker at a line start: bullets, "1." "1)" "(1)" "a)" "(a)" "iv." "IV." "A)", and "①" or "・" with no space after.
// Not dashes (a wrapped line may start with one) nor "A." (an initial).
const LIST_MARKER =
  /^\s*(?:[-*+\u2022\u2023\u2043\u25aa\u25ab\u25cf\u25e6\u00b7]|\d{1,3}[.)]|\(\d{1,3}\)|[a-z][.)]|\([a-z]\)|[A-Z]\)|[ivxlc]{1,6}[.)]|[IVXLC]{2,6}\.)(?=\s)|^\s*[\u2460-\u2473\u30fb]/u;

/** Where a list item starts on this line: the marker's match, or undefined. */
export function listMarker(line: string): RegExpExecArray | null {
  return LIST_MARKER.exec(line);
}
