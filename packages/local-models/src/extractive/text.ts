// Sentences and words for the extractive model: a sentence splitter that
// survives common abbreviations, and terms with stopwords removed and a light
// suffix stemmer (BM25 on this kind of text loses ~0.04 R@100 without stemming).

const ABBREVIATIONS = new Set(['e.g', 'i.e', 'etc', 'vs', 'mr', 'mrs', 'ms', 'dr', 'prof', 'st', 'no', 'fig', 'approx', 'inc', 'ltd', 'jr', 'sr']);

/** Splits text into sentences at . ! ? (followed by space), CJK stops and line breaks. */
export function splitSentences(text: string): string[] {
  const out: string[] = [];
  for (const line of text.split(/\n+/)) {
    let start = 0;
    const re = /[.!?]+["')\]]*\s+|[。！？；]+/g;
    for (let m = re.exec(line); m; m = re.exec(line)) {
      const end = m.index + m[0].length;
      const before = line.slice(start, m.index);
      const lastWord = /([\p{L}.]+)$/u.exec(before)?.[1]?.toLowerCase() ?? '';
      // "e.g. x", "Dr. Smith", "J. Doe" and "No. 5" do not end a sentence.
      if (m[0].startsWith('.') && (ABBREVIATIONS.has(lastWord) || /^\p{Lu}$/u.test(lastWord.toUpperCase()) && lastWord.length === 1)) continue;
      push(out, line.slice(start, end));
      start = end;
    }
    push(out, line.slice(start));
  }
  return out;
}

function push(out: string[], sentence: string): void {
  const s = sentence.replace(/\s+/g, ' ').trim();
  // Bullets, headings of one word and stray punctuation are not answers.
  if (/[\p{L}\p{N}]/u.test(s) && s.length >= 3) out.push(s);
}

const STOPWORDS = new Set(
  (
    'a about above after again against all am an and any are as at be because been before being below between both but by ' +
    'can could did do does doing done down during each few for from further had has have having he her here hers herself him ' +
    'himself his how i if in into is it its itself just me more most my myself no nor not now of off on once only or other our ' +
    'ours ourselves out over own same she should so some such than that the their theirs them themselves then there these they ' +
    'this those through to too under until up very was we were what when where which while who whom why will with would you ' +
    'your yours yourself yourselves tell please know explain describe give list say said also may might must shall us let get ' +
    "got one ones thing things anything something there's what's it's don't doesn't i'm"
  ).split(' '),
);

/** Lower-cased, stemmed content words (Han text as character bigrams). */
export function terms(text: string): string[] {
  const out: string[] = [];
  for (const raw of text.toLowerCase().match(/[\p{L}\p{N}]+(?:'[\p{L}]+)?/gu) ?? []) {
    if (/\p{Script=Han}/u.test(raw)) {
      const chars = [...raw];
      if (chars.length === 1) out.push(raw);
      for (let i = 0; i + 1 < chars.length; i++) out.push(chars[i] + chars[i + 1]);
      continue;
    }
    const word = raw.replace(/'s$/, '');
    if (STOPWORDS.has(word) || STOPWORDS.has(raw)) continue;
    out.push(stem(word));
  }
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
  else if (w.endsWith('ed') && w.length > 4) w = undouble(w.slice(0, -2));
  else if (w.endsWith('ly') && w.length > 4) w = w.slice(0, -2);
  if (w.endsWith('e') && w.length > 4) w = w.slice(0, -1);
  return w;
}

function undouble(w: string): string {
  return /([^aeiouslz])\1$/.test(w) ? w.slice(0, -1) : w;
}
