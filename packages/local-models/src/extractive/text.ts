// Sentences and words for the extractive model. Sentences come from
// Intl.Segmenter (Unicode sentence rules, in the text's language), with the
// abbreviations it does not know mended; words are stemmed English terms
// (stopwords out) or, for CJK text, the segmenter's dictionary words, which
// match inside a sentence as substrings (CJK is written without spaces).

const ABBREVIATIONS = new Set([
  'e.g',
  'i.e',
  'vs',
  'mr',
  'mrs',
  'ms',
  'dr',
  'prof',
  'st',
  'no',
  'nr',
  'fig',
  'approx',
  'cf',
  'inc',
  'ltd',
  'jr',
  'sr',
  'ca',
  'resp',
  'incl',
  'excl',
  'dept',
  'est',
]);

const CJK = /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Hangul}]/u;

export function hasCjk(text: string): boolean {
  return CJK.test(text);
}

/** The segmenter locale for a text: its script decides (sentence rules barely differ between Latin-script languages). */
export function languageOf(text: string): string {
  if (/[\p{Script=Hiragana}\p{Script=Katakana}]/u.test(text)) return 'ja';
  if (/\p{Script=Hangul}/u.test(text)) return 'ko';
  if (/\p{Script=Han}/u.test(text)) return 'zh';
  if (/\p{Script=Thai}/u.test(text)) return 'th';
  return 'en';
}

const segmenters = new Map<string, Intl.Segmenter>();
function segmenter(locale: string, granularity: 'sentence' | 'word'): Intl.Segmenter {
  const key = `${locale}/${granularity}`;
  let s = segmenters.get(key);
  if (!s) segmenters.set(key, (s = new Intl.Segmenter(locale, { granularity })));
  return s;
}

/**
 * The lines of one paragraph as one text: a hard line break inside a
 * paragraph is a space (none between two CJK characters, which are written
 * without spaces).
 */
export function unwrapLines(lines: string[]): string {
  let out = '';
  for (const raw of lines) {
    const line = raw.trim();
    if (!line) continue;
    if (out && !(CJK.test(out.at(-1)!) && CJK.test(line[0]!))) out += ' ';
    out += line;
  }
  return out;
}

/** The sentences of one paragraph (no line breaks in it), trimmed, in order. */
export function splitSentences(paragraph: string, locale = languageOf(paragraph)): string[] {
  const out: string[] = [];
  let pending = '';
  for (const { segment } of segmenter(locale, 'sentence').segment(paragraph)) {
    pending += segment;
    // "e.g. x", "Dr. Smith", "J. Doe" and "No. 5" do not end a sentence, though the segmenter ends one there.
    const lastWord = /(?:^|[^\p{L}.])([\p{L}.]+)\.\s*$/u.exec(pending)?.[1];
    if (lastWord !== undefined && (ABBREVIATIONS.has(lastWord.toLowerCase()) || /^\p{Lu}$/u.test(lastWord))) continue;
    if (pending.trim()) out.push(pending.trim());
    pending = '';
  }
  if (pending.trim()) out.push(pending.trim());
  return out;
}

/** Ends a sentence: . ! ? … or their CJK forms, then maybe closing quotes, brackets or Markdown emphasis. */
export const SENTENCE_END = /[.!?…。！？][\s"'”’)\]}*_`」』]*$/u;

const STOPWORDS = new Set(
  (
    'a about above after again against all am an and any are as at be because been before being below between both but by ' +
    'can could did do does doing done down during each few for from further had has have having he her here hers herself him ' +
    'himself his how i if in into is it its itself just me more most my myself no nor not now of off on once only or other our ' +
    'ours ourselves out over own same she should so some such than that the their theirs them themselves then there these they ' +
    'this those through to too under until up very was we were what when where which while who whom why will with would you ' +
    'your yours yourself yourselves tell please know explain describe give list say said also may might must shall us let get ' +
    "got one ones thing things anything something there's what's it's don't doesn't i'm many much whose " +
    'way ways step steps kind kinds type types take takes took taken need needs needed want wants make makes made happen happens happened'
  ).split(' '),
);
// "How long / far / old ...", "what time" ask for a quantity or a time; the adjective or noun is not a term to find.
const HOW_ADJECTIVE = /\bhow\s+(long|far|old|big|large|heavy|often|soon|wide|tall|high|deep|fast)\b|\bwhat\s+time\b/gi;

const CJK_STOPWORDS = new Set(
  (
    '的 了 是 在 有 和 与 或 吗 呢 吧 啊 么 什么 怎么 怎样 如何 哪 哪些 哪个 哪里 多少 多久 几 为什么 可以 能 能否 需要 要 会 请 问 ' +
    '我 我们 你 你们 他 她 它 把 被 给 对 从 到 就 都 也 还 这 那 这个 那个 一个 时候 什么时候 是否 有没有 ' +
    'の は が を に で と も か ですか ますか 何 どう どの いつ どこ 이 가 은 는 을 를 에 의 무엇 어떻게 언제'
  ).split(' '),
);

/** Lower-cased, stemmed content words; CJK runs as the segmenter's words (adjacent single characters joined). */
export function terms(text: string): string[] {
  const out: string[] = [];
  const latin = text.replace(HOW_ADJECTIVE, 'how');
  for (const raw of latin.toLowerCase().match(/[\p{L}\p{N}]+(?:['’][\p{L}]+)?/gu) ?? []) {
    if (CJK.test(raw)) {
      out.push(...cjkTerms(raw));
      continue;
    }
    const word = raw.replace(/['’]s$/, '');
    if (STOPWORDS.has(word) || STOPWORDS.has(raw)) continue;
    out.push(stem(word));
  }
  return out;
}

function cjkTerms(run: string): string[] {
  const out: string[] = [];
  let singles = '';
  const flush = () => {
    if (singles) out.push(singles);
    singles = '';
  };
  for (const s of segmenter(languageOf(run), 'word').segment(run)) {
    if (!s.isWordLike || CJK_STOPWORDS.has(s.segment)) {
      flush();
      continue;
    }
    // The dictionary may cut a word the text has whole (发/货 for 发货): neighbouring single characters are one term.
    if ([...s.segment].length === 1) singles += s.segment;
    else {
      flush();
      out.push(s.segment);
    }
  }
  flush();
  return out;
}

/** A light English stemmer: plural, -ing, -ed, -ly, -ies; enough to match "refunds"/"refunded"/"refund". */
export function stem(word: string): string {
  if (word.length <= 3 || /\d/.test(word)) return word;
  let w = word;
  if (w.endsWith('ies') && w.length > 4) w = w.slice(0, -3) + 'y';
  else if (w.endsWith('sses')) w = w.slice(0, -2);
  else if (w.endsWith('s') && !/(ss|us|is)$/.test(w)) w = w.slice(0, -1);
  if (w.endsWith('ing') && w.length > 5) w = undouble(w.slice(0, -3));
  else if (w.endsWith('ed') && w.length > 5) w = undouble(w.slice(0, -2));
  else if (w.endsWith('ly') && w.length > 4) w = w.slice(0, -2);
  if (w.endsWith('e') && w.length > 4) w = w.slice(0, -1);
  return w;
}

function undouble(w: string): string {
  return /([^aeiouslz])\1$/.test(w) ? w.slice(0, -1) : w;
}

/**
 * How well a question term is found in a text: 1 for the same stem, 0.9 when
 * one stem begins the other and the shorter has 5 letters or more
 * ("dimension" / "dimensional"), for CJK a substring of the text.
 */
export function termMatch(term: string, stems: Set<string>, text: string): number {
  if (CJK.test(term)) return text.includes(term) ? 1 : 0;
  if (stems.has(term)) return 1;
  if (term.length < 5 || /\d/.test(term)) return 0;
  for (const s of stems) {
    if (s.length >= 5 && (s.startsWith(term) || term.startsWith(s))) return 0.9;
  }
  return 0;
}
