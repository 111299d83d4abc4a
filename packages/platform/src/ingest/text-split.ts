// Splitting text that is over the token budget, finest level last:
// lines -> sentences (Intl.Segmenter) -> clauses -> words -> code points. Each piece keeps the separator
// that stood before it in the original, so joining pieces gives the text back.
// A code point is the one indivisible unit (no tokenizer makes more than a few
// tokens of one), so every piece fits any budget of at least 4 tokens.

import { countTextTokens } from '@kbchat/shared';

/** o200k tokens of `text`, the measure for all chunk sizes (long whitespace-free runs counted in slices: see countTextTokens). */
export const countTokens = countTextTokens;

export interface Piece {
  text: string;
  /** What stood before this piece in the original text ('' for the first). */
  sep: string;
  tokens: number;
}

/** Splits `text` at `pattern` (whose matches become the following piece's separator). */
function splitKeepingSeparators(text: string, pattern: RegExp): { text: string; sep: string }[] {
  const out: { text: string; sep: string }[] = [];
  let last = 0;
  let sep = '';
  for (const m of text.matchAll(pattern)) {
    const cut = m.index + (m[1]?.length ?? 0); // group 1 (if any) stays with the text before
    const piece = text.slice(last, cut);
    if (piece) {
      out.push({ text: piece, sep });
      sep = text.slice(cut, m.index + m[0].length);
    } else sep += text.slice(cut, m.index + m[0].length);
    last = m.index + m[0].length;
  }
  if (last < text.length) out.push({ text: text.slice(last), sep });
  return out;
}

// A line break before a lower-case word is a hard wrap inside a sentence, not a cut point.
const LINE = /\n+(?![ \t]*\p{Ll})/gu;
// A clause ends at a comma, semicolon or colon before a space (not "3,000" or "10:30"), or at their CJK forms.
const CLAUSE = /(?<=[,;:])\s+|(?<=[，；：、])/g;
const WORD = /\s+/g;

// Sentence ends the segmenter does not take when a lower-case word follows ("… done. kbchat then …"):
// Western punctuation followed by whitespace, or CJK full stops (no space follows them).
const SENTENCE = /[.!?…]+["'”’)\]]*(\s+)|[。！？]+["'”’」』)]*(\s*)/g;
// Abbreviations after which a sentence goes on ("e.g. the", "Dr. Smith", "J. Doe").
const ABBREVIATION = /(?:^|[^\p{L}.])(e\.g|i\.e|vs|etc|mr|mrs|ms|dr|prof|st|no|nr|fig|approx|cf|incl|\p{Lu})\.["'”’)\]]*\s*$/iu;
const sentenceSegmenter = new Intl.Segmenter('en', { granularity: 'sentence' });

/**
 * Sentences: where Intl.Segmenter (Unicode sentence rules) ends one, and
 * after a full stop before a lower-case word, which it does not, but never
 * after an abbreviation. Each keeps the whitespace before it as its
 * separator. Line breaks are read as spaces: a hard-wrapped line end is no
 * sentence end.
 */
function sentenceSplit(text: string): { text: string; sep: string }[] {
  const flat = text.replace(/\n/g, ' '); // same length: offsets are the text's
  const starts = new Set<number>();
  for (const { index } of sentenceSegmenter.segment(flat)) if (index > 0) starts.add(index);
  for (const m of flat.matchAll(SENTENCE)) starts.add(m.index + m[0].length);
  const out: { text: string; sep: string }[] = [];
  let from = 0;
  let sep = '';
  for (const at of [...starts].sort((a, b) => a - b)) {
    if (at >= text.length || ABBREVIATION.test(flat.slice(from, at))) continue;
    const piece = text.slice(from, at);
    const body = piece.trimEnd();
    if (!body.trim()) continue;
    out.push({ text: body, sep });
    sep = piece.slice(body.length);
    from = at;
  }
  if (from < text.length) out.push({ text: text.slice(from), sep });
  return out;
}

/** Cuts one whitespace-free run into pieces of at most `budget` tokens at code-point boundaries. */
function codePointSplit(word: string, budget: number): string[] {
  const out: string[] = [];
  const fits = (s: string) => countTokens(s) <= budget;
  let rest = word;
  while (rest) {
    // Largest prefix that fits, without ever counting the whole (maybe huge) rest:
    // start from the sample's chars per token, gallop up, then binary search.
    const sample = rest.slice(0, 2000);
    const charsPerToken = sample.length / Math.max(1, countTokens(sample));
    let hi = Math.min(rest.length, Math.max(2, Math.ceil(budget * charsPerToken)));
    let lo = 0; // longest prefix known to fit
    while (fits(rest.slice(0, hi))) {
      lo = hi;
      if (hi === rest.length) break;
      hi = Math.min(rest.length, hi * 2);
    }
    if (lo === rest.length) {
      out.push(rest);
      break;
    }
    while (hi - lo > 1) {
      const mid = Math.floor((lo + hi) / 2);
      if (fits(rest.slice(0, mid))) lo = mid;
      else hi = mid;
    }
    let cut = Math.max(1, lo);
    const code = rest.charCodeAt(cut - 1);
    if (code >= 0xd800 && code <= 0xdbff) cut = cut > 1 ? cut - 1 : cut + 1; // keep surrogate pairs whole
    out.push(rest.slice(0, cut));
    rest = rest.slice(cut);
  }
  return out;
}

// A list item's marker or a quote's `>` alone ("4." is a sentence, "-" a word, to the splitters).
const BARE_MARKER = /^\s*(?:[-*+]|\d{1,9}[.)]|>+)$/;

/** A piece that is only a list marker goes with the text after it, so no chunk ends with "4." or "-". */
function keepMarkerWithText(parts: { text: string; sep: string }[]): { text: string; sep: string }[] {
  if (parts.length < 2 || !BARE_MARKER.test(parts[0].text)) return parts;
  return [{ text: parts[0].text + parts[1].sep + parts[1].text, sep: parts[0].sep }, ...parts.slice(2)];
}

/**
 * Splits `text` into pieces of at most `budget` tokens each, trying line,
 * sentence and word boundaries before cutting inside a word. The first
 * piece's `sep` is `firstSep`; `textTokens`, when the caller has counted
 * `text` already, saves counting it again.
 */
export function splitToBudget(text: string, budget: number, firstSep = '', textTokens?: number): Piece[] {
  const out: Piece[] = [];
  // A sentence over the budget is cut at its clauses before its words, so that a chunk ends at a comma rather than anywhere.
  const levels = [
    (t: string) => splitKeepingSeparators(t, LINE),
    sentenceSplit,
    (t: string) => splitKeepingSeparators(t, CLAUSE),
    (t: string) => splitKeepingSeparators(t, WORD),
  ];
  const visit = (t: string, sep: string, level: number, known?: number): void => {
    const tokens = known ?? countTokens(t);
    if (tokens <= budget) {
      out.push({ text: t, sep, tokens });
      return;
    }
    for (let l = level; l < levels.length; l++) {
      const parts = keepMarkerWithText(levels[l](t));
      if (parts.length > 1) {
        parts.forEach((p, i) => visit(p.text, i === 0 ? sep : p.sep, l + 1));
        return;
      }
    }
    codePointSplit(t, budget).forEach((p, i) => out.push({ text: p, sep: i === 0 ? sep : '', tokens: countTokens(p) }));
  };
  visit(text, firstSep, 0, textTokens);
  return out;
}

/** The trailing sentences of `text` that fit in `budget` tokens (trailing words if even the last sentence does not). */
export function tailForOverlap(text: string, budget: number): string {
  if (budget <= 0) return '';
  const sentences = sentenceSplit(text.replace(/\s*\n\s*/g, ' ').trim());
  let tail = '';
  for (let i = sentences.length - 1; i >= 0; i--) {
    const candidate = sentences[i].text + (tail ? sentences[i + 1].sep + tail : '');
    if (countTokens(candidate) > budget) break;
    tail = candidate;
  }
  if (tail) return tail;
  // The last sentence is too long: its trailing clauses, else its trailing words.
  const last = sentences[sentences.length - 1]?.text ?? '';
  const clauses = splitKeepingSeparators(last, CLAUSE);
  for (let i = clauses.length - 1; i >= 1; i--) {
    const candidate = clauses
      .slice(i)
      .map((c, k) => (k ? c.sep : '') + c.text)
      .join('');
    if (countTokens(candidate) > budget) break;
    tail = candidate;
  }
  if (tail) return tail;
  const words = last.split(/\s+/);
  for (let i = words.length - 1; i >= 0; i--) {
    const candidate = words[i] + (tail ? ' ' + tail : '');
    if (countTokens(candidate) > budget) break;
    tail = candidate;
  }
  return tail;
}
