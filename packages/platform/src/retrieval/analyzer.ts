// Full-text analyzer shared by indexing and search (they must agree term for
// term). English follows Lucene's EnglishAnalyzer, the BM25 baseline of the
// BEIR numbers: lowercase, possessive 's dropped, split on non-alphanumerics,
// Lucene's English stopwords, Porter stemming; numbers are kept. Han, kana and
// Hangul runs become overlapping character bigrams (a run of one character is
// one term), like Lucene's CJKBigramFilter, so Chinese and Japanese text is
// searchable without a dictionary.
import { stemmer } from 'stemmer';

/** Lucene's EnglishAnalyzer.ENGLISH_STOP_WORDS_SET. */
export const ENGLISH_STOPWORDS: ReadonlySet<string> = new Set([
  'a',
  'an',
  'and',
  'are',
  'as',
  'at',
  'be',
  'but',
  'by',
  'for',
  'if',
  'in',
  'into',
  'is',
  'it',
  'no',
  'not',
  'of',
  'on',
  'or',
  'such',
  'that',
  'the',
  'their',
  'then',
  'there',
  'these',
  'they',
  'this',
  'to',
  'was',
  'will',
  'with',
]);

/** Longer tokens are noise (base64, hashes) and would bloat the postings. */
const MAX_TOKEN_LENGTH = 64;

// One regex pass: a CJK run, or a run of other letters/digits.
// ー and 々 are Script=Common but live inside kana and kanji words.
const CJK = '\\p{Script=Han}\\p{Script=Hiragana}\\p{Script=Katakana}\\p{Script=Hangul}\\u30fc\\u3005';
const TOKEN_RE = new RegExp(`[${CJK}]+|[^\\s${CJK}\\p{P}\\p{S}\\p{Z}\\p{C}]+`, 'gu');
const ALNUM_RUN_RE = /[\p{L}\p{N}\p{M}]+/gu;
const CJK_RE = new RegExp(`^[${CJK}]`, 'u');
const ASCII_WORD_RE = /^[a-z]+$/;

// Stemming is the costly step; words repeat a lot (Zipf), so remember them.
const stemCache = new Map<string, string>();
function stem(word: string): string {
  let s = stemCache.get(word);
  if (s === undefined) {
    s = ASCII_WORD_RE.test(word) && word.length > 2 ? stemmer(word) : word;
    if (stemCache.size > 200_000) stemCache.clear();
    stemCache.set(word, s);
  }
  return s;
}

/** The terms of a text, in order (duplicates kept). */
export function analyze(text: string): string[] {
  const out: string[] = [];
  if (!text) return out;
  // NFKC folds full-width Latin and digits to ASCII; possessives go before the split.
  const normal = text
    .normalize('NFKC')
    .toLowerCase()
    .replace(/['’]s\b/g, '');
  for (const m of normal.matchAll(TOKEN_RE)) {
    const run = m[0];
    if (CJK_RE.test(run)) {
      const chars = Array.from(run);
      if (chars.length === 1) out.push(chars[0]!);
      for (let i = 0; i + 1 < chars.length; i++) out.push(chars[i]! + chars[i + 1]!);
      continue;
    }
    // Split what the first pass kept together on anything not a letter/digit (e.g. "_").
    for (const w of run.matchAll(ALNUM_RUN_RE)) {
      const word = w[0];
      if (word.length > MAX_TOKEN_LENGTH || ENGLISH_STOPWORDS.has(word)) continue;
      out.push(stem(word));
    }
  }
  return out;
}

export interface TermCounts {
  /** term -> occurrences */
  terms: Map<string, number>;
  /** number of terms (the BM25 document length) */
  length: number;
}

export function termCounts(text: string): TermCounts {
  const terms = new Map<string, number>();
  const list = analyze(text);
  for (const t of list) terms.set(t, (terms.get(t) ?? 0) + 1);
  return { terms, length: list.length };
}
