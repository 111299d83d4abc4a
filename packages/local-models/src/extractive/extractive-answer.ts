// local-extractive: answers by quoting the prompt's own knowledge, in whole
// sentences (or whole list items, table rows, CSV records: segment.ts).
// Every unit is scored against the question: the idf-weighted share of the
// question's terms it holds (its headings' terms count half), USE-lite cosine
// for the lexically best, and the rank of its quote (the platform's prompt
// lists quotes best first). compose.ts builds the answer around the best one.
import type { EmbedPool } from '../embeddings/embed-pool.js';
import { cosine, prepareForEmbedding } from '../embeddings/prepare.js';
import { choosePassages, stemsOf, writeAnswer, type ScoredUnit } from './compose.js';
import { hasAnswerType, hasCount, questionShape, type QuestionShape } from './question.js';
import { parsePrompt, type ParsedQuote } from './quotes.js';
import { segmentQuote, type Unit } from './segment.js';
import { hasCjk, SENTENCE_END, splitSentences, termMatch, terms } from './text.js';

export const NOT_FOUND_ANSWER = 'I could not find an answer to that in the provided knowledge.';
export const NO_QUESTION_ANSWER = 'I could not find a question to answer in the last user message.';

export interface ExtractiveOptions {
  /** Most sentences (rows, records) in an answer; a list is answered whole up to maxListItems. */
  maxSentences: number;
  /** Least combined score (0..1) the best sentence needs, else the answer is NOT_FOUND_ANSWER. */
  minScore: number;
  /** Least share (0..1, idf-weighted) of the question's terms the best sentence must hold. */
  minLexical: number;
  /** Units scored with embeddings at most (the rest only by words), bounding the cost of a huge prompt. */
  maxEmbedded: number;
  maxListItems: number;
}

export const DEFAULT_EXTRACTIVE_OPTIONS: ExtractiveOptions = { maxSentences: 3, minScore: 0.35, minLexical: 0.4, maxEmbedded: 24, maxListItems: 15 };

export interface ExtractiveAnswer {
  text: string;
  /** The units quoted (empty when it refused), in answer order, for tests and debugging. */
  picked: PickedUnit[];
  /** The best-scoring unit, also when it was not good enough (then `picked` is empty). */
  best?: PickedUnit;
}

interface PickedUnit {
  sentence: string;
  marker: string;
  score: number;
  lexical: number;
  dense: number;
}

const picked = (u: ScoredUnit): PickedUnit => ({ sentence: u.text, marker: u.marker, score: round(u.score), lexical: round(u.lexical), dense: round(u.dense) });

export async function answerFromPrompt(
  messages: { role: string; text: string }[],
  pool: EmbedPool,
  options: ExtractiveOptions = DEFAULT_EXTRACTIVE_OPTIONS,
): Promise<ExtractiveAnswer> {
  const { question, quotes } = parsePrompt(messages);
  if (!question) return { text: NO_QUESTION_ANSWER, picked: [] };
  const shape = questionShape(question);
  const units: ScoredUnit[] = quotes.flatMap((q, i) =>
    segmentQuote(q.text, i).map((u) => ({
      ...u,
      // A QA pair's question says what its answer is about as much as the answer does.
      context: q.question ? `${q.question} ${u.context}` : u.context,
      marker: q.marker,
      lexical: 0,
      ownLexical: 0,
      dense: 0,
      content: 0,
      score: 0,
    })),
  );
  markTails(units);
  stitchCutUnits(units);
  // "How many beds" is answered only by a sentence that counts beds (its neighbours may still join it).
  if (shape.wantsCount) for (const u of units) if (!hasCount(u.text, shape.counted)) u.anchorable = false;
  const candidates = units.filter((u) => u.answerable);
  if (candidates.length === 0) return { text: NOT_FOUND_ANSWER, picked: [] };

  scoreLexical(
    shape,
    units,
    quotes.map((q) => (q.question ? 1 : 0.5)),
  );
  // A yes/no question about something the knowledge never mentions ("Does it support SAML?") has no answer in it.
  if (shape.yesNo && shape.absent.size > 0) return { text: NOT_FOUND_ANSWER, picked: [] };
  keepToQuestionSubject(shape, quotes, units);
  // USE-lite is an English model: its cosines say nothing about CJK text.
  if (!hasCjk(question)) await scoreDense(question, candidates, pool, options.maxEmbedded);
  for (const u of candidates) u.score = combine(u, phraseShare(u, shape));

  const anchors = candidates.filter((u) => u.anchorable !== false);
  if (anchors.length === 0) return { text: NOT_FOUND_ANSWER, picked: [] };
  const best = anchors.reduce((a, b) => (b.score > a.score ? b : a));
  if (best.score < options.minScore || best.lexical < options.minLexical) return { text: NOT_FOUND_ANSWER, picked: [], best: picked(best) };
  const passages = choosePassages(units, shape, options);
  return { text: writeAnswer(passages), picked: passages.flatMap((p) => p.units).map(picked), best: picked(best) };
}

/**
 * What the question is about decides which units may anchor its answer.
 * A name it gives ("How do I install Fastify?") that the knowledge holds:
 * a unit of a quote that never names it (not in its text, its headings, its
 * QA question or its source's name) is about something else, however well
 * it holds the other words ("Each application … will install a single XML
 * file"). And when the knowledge holds more of the question than the names
 * most quotes hold (its subject), a unit must hold some of that more:
 * "Version 3 of Fastify is EOL" does not say how to install it. Names and
 * words the knowledge never holds are left to the scores.
 */
function keepToQuestionSubject(shape: QuestionShape, quotes: ParsedQuote[], units: ScoredUnit[]): void {
  if (shape.names.length === 0) return;
  const texts = quotes.map((q) => `${q.sourceName ?? ''} ${q.question ?? ''} ${q.text}`);
  const stems = texts.map((t) => new Set(terms(t)));
  const names = (i: number, term: string) => termMatch(term, stems[i]!, texts[i]!) > 0;
  const quotesNaming = (term: string) => quotes.filter((_, i) => names(i, term)).length;
  const held = shape.names.filter((name) => quotesNaming(name) > 0);
  const subject = new Set(held.filter((name) => quotesNaming(name) * 2 >= quotes.length));
  const rest = shape.terms.filter((t) => !subject.has(t) && quotesNaming(t) > 0);
  const holdsRest = (u: ScoredUnit) =>
    rest.some((t) => termMatch(t, stemsOf(u), u.text) > 0 || termMatch(t, new Set(terms(u.context)), u.context) > 0) || hasAnswerType(shape, u.text) === true;
  for (const u of units) if (!held.every((name) => names(u.quote, name)) || (rest.length > 0 && !holdsRest(u))) u.anchorable = false;
}

/**
 * A quote's first sentence is the tail of a sentence cut in the previous
 * chunk (its overlap) when another quote holds it inside a longer sentence,
 * or when it starts in lower case with a word that is not a name written in
 * lower case (a stopword, a word the knowledge also writes capitalised, or
 * one it has only once).
 */
function markTails(units: Unit[]): void {
  const capitalised = new Set<string>();
  const lower = new Map<string, number>();
  for (const u of units) {
    for (const w of u.text.match(/(?<![\p{L}\p{N}])\p{L}[\p{L}\p{N}]*/gu) ?? []) {
      if (/^\p{Lu}\p{Ll}+$/u.test(w)) capitalised.add(w.toLowerCase());
      else if (/^\p{Ll}+$/u.test(w)) lower.set(w, (lower.get(w) ?? 0) + 1);
    }
  }
  const flat = new Map(units.map((u) => [u, u.text.replace(/\s+/g, ' ')]));
  for (const u of units) {
    if (!u.opening || !u.answerable) continue;
    const text = flat.get(u)!;
    // A whole word in lower case ("iPhone" is not one).
    const firstWord = /^\p{Ll}+(?![\p{L}\p{N}])/u.exec(text)?.[0];
    // A name written in lower case ("kbchat is ...") is never capitalised, and the knowledge uses it more than once.
    const lowerStart = firstWord !== undefined && (capitalised.has(firstWord) || terms(firstWord).length === 0 || (lower.get(firstWord) ?? 0) < 2);
    const inside = units.some((o) => o !== u && flat.get(o)!.length > text.length && flat.get(o)!.includes(text));
    // The chunker's overlap repeats the last words of a cut sentence: another quote that ends cut on this one's first word.
    const firstToken = text.split(' ')[0]!;
    const continues = units.some((o) => o.cut && o.quote !== u.quote && flat.get(o)!.endsWith(` ${firstToken}`));
    if (lowerStart || inside || continues) u.answerable = false;
  }
}

/**
 * A sentence longer than a chunk is cut by the chunker at a clause, and the
 * next chunk opens with that clause again (its overlap) and goes on. When
 * both quotes are here, the cut unit and the rest make the whole sentence
 * again: it is quoted whole, citing both quotes. Up to three pieces.
 */
function stitchCutUnits(units: ScoredUnit[]): void {
  const flat = (u: Unit) => u.text.replace(/\s+/g, ' ');
  for (const u of units) {
    if (!u.cut) continue;
    let text = flat(u);
    const markers = [u.marker];
    let piece: Unit = u;
    for (let hop = 0; hop < 2 && !SENTENCE_END.test(text); hop++) {
      const rest = units.find((v) => v.opening && v.quote !== piece.quote && v.quote !== u.quote && overlapOf(text, flat(v)) > 0);
      if (!rest) break;
      const restText = flat(rest);
      text += ' ' + restText.slice(overlapOf(text, restText));
      markers.push((rest as ScoredUnit).marker);
      piece = rest;
      // The rest goes on past its first sentence only when the whole quote is that one cut sentence.
      if (!SENTENCE_END.test(text) && !rest.cut) break;
    }
    if (markers.length > 1 && SENTENCE_END.test(text)) Object.assign(u, { text, answerable: true, cut: false, marker: markers.join('] [') });
  }
}

/** Where `next` goes on after its longest start (two words at least) that `text` ends with (the overlap); 0 if none. */
function overlapOf(text: string, next: string): number {
  const words = next.split(' ');
  for (let n = Math.min(words.length - 1, 40); n >= 2; n--) {
    const start = words.slice(0, n).join(' ');
    if (text.endsWith(` ${start}`)) return start.length + 1;
  }
  return 0;
}

/** The idf-weighted share of the question's terms a unit holds (its context's at `contextWeight` of its quote). */
function scoreLexical(shape: QuestionShape, units: ScoredUnit[], contextWeight: number[]): void {
  if (shape.terms.length === 0) return;
  const contextStems = new Map<ScoredUnit, Set<string>>(units.map((u) => [u, new Set(terms(u.context))]));
  const matches = units.map((u) =>
    shape.terms.map((t) => Math.max(ownMatch(t, u, shape), contextWeight[u.quote]! * termMatch(t, contextStems.get(u)!, u.context))),
  );
  const n = units.length;
  const idf = shape.terms.map((_, i) => {
    let df = 0;
    for (const m of matches) if (m[i]! > 0) df++;
    return Math.log(1 + (n + 1) / (df + 0.5));
  });
  // A question for a quantity or a time also asks for a number or a time word: half a term's weight.
  const typeWeight = hasAnswerType(shape, '') === undefined ? 0 : (0.5 * idf.reduce((a, b) => a + b, 0)) / idf.length;
  const total = idf.reduce((a, b) => a + b, 0) + typeWeight;
  shape.terms.forEach((t, i) => {
    shape.weights.set(t, idf[i]! / total);
    if (!matches.some((m) => m[i]! > 0)) shape.absent.add(t);
  });
  const share = (m: number[], typed: boolean) => (m.reduce((s, x, i) => s + x * idf[i]!, 0) + (typed ? typeWeight : 0)) / total;
  const typed = units.map((u) => typeWeight > 0 && hasAnswerType(shape, u.text) === true);
  units.forEach((u, k) => {
    u.lexical = share(matches[k]!, typed[k]!);
    // A row or record names its subject first ("Model: Zorblax 3000"): prefer the one the question names exactly.
    if ((u.kind === 'record' || u.kind === 'row') && u.lexical > 0) u.lexical = Math.min(1, u.lexical + 0.15 * subjectPrecision(u, shape));
  });
  // A sentence whose neighbours in its paragraph hold the rest of the question is half as good as one holding it all:
  // "Wi-Fi is available in the library." + "The password changes every month."
  const windowed = units.map((u, k) => {
    if (u.kind !== 'sentence') return u.lexical;
    const near = [k - 1, k + 1].filter(
      (j) => units[j]?.kind === 'sentence' && units[j]!.quote === u.quote && units[j]!.block === u.block && units[j]!.answerable,
    );
    if (near.length === 0) return u.lexical;
    const union = matches[k]!.map((m, i) => Math.max(m, ...near.map((j) => matches[j]![i]!)));
    return Math.max(u.lexical, (u.lexical + share(union, typed[k]! || near.some((j) => typed[j]!))) / 2);
  });
  units.forEach((u, k) => {
    u.ownLexical = u.lexical;
    u.lexical = windowed[k]!;
  });
}

/**
 * A term in the unit's own text: a word of the same stem but another form
 * than the question's ("embedded" for "embedding"; a plural is the same form)
 * counts 0.9, so that of two units with the same terms the one in the
 * question's words wins.
 */
function ownMatch(term: string, u: Unit, shape: QuestionShape): number {
  const m = termMatch(term, stemsOf(u), u.text);
  if (m < 1 || hasCjk(term)) return m;
  const forms = shape.surface.get(term);
  if (!forms) return m;
  const words = new Set((u.text.toLowerCase().match(/[\p{L}\p{N}][\p{L}\p{N}-]*/gu) ?? []).map(singular));
  return [...forms].some((f) => words.has(singular(f))) ? 1 : 0.9;
}

const singular = (w: string) => (w.length > 3 ? w.replace(/(?<=[^s])s$/, '') : w);

/**
 * The share of the question's neighbouring term pairs ("worker thread",
 * "embedding worker") that stand next to each other in one sentence of the
 * unit (a list item is read sentence by sentence): the unit then says it in
 * the question's words, not just somewhere in a long item.
 */
function phraseShare(u: Unit, shape: QuestionShape): number {
  if (shape.pairs.length === 0 || u.kind === 'row' || u.kind === 'record' || u.kind === 'code') return 0;
  let best = 0;
  for (const sentence of splitSentences(u.text)) {
    const seq = terms(sentence);
    const adjacent = new Set(seq.slice(1).map((t, i) => `${seq[i]} ${t}`));
    best = Math.max(best, shape.pairs.filter(([a, b]) => adjacent.has(`${a} ${b}`)).length / shape.pairs.length);
  }
  return best;
}

/** The share of a row's or record's first field's terms that the question holds. */
function subjectPrecision(u: Unit, shape: QuestionShape): number {
  const first = u.kind === 'record' ? u.text.split('\n')[0]!.replace(/^[^:]*:/, '') : (u.text.split('|')[1] ?? '');
  const subject = [...new Set(terms(first))];
  if (subject.length === 0) return 0;
  return subject.filter((t) => shape.terms.includes(t)).length / subject.length;
}

/** USE-lite cosine between the question and the lexically best units (with their headings), others 0. */
async function scoreDense(question: string, candidates: ScoredUnit[], pool: EmbedPool, maxEmbedded: number): Promise<void> {
  const embedded = [...candidates].sort((a, b) => b.lexical - a.lexical || a.quote - b.quote || a.pos - b.pos).slice(0, maxEmbedded);
  const texts = [question, ...embedded.map((u) => `${u.context} ${u.text}`)].map(prepareForEmbedding);
  const usable = texts.map((t) => t.length > 0);
  const { vectors } = await pool.embed(texts.filter((_, i) => usable[i]));
  const byText: (Float32Array | undefined)[] = [];
  for (let i = 0, v = 0; i < texts.length; i++) byText.push(usable[i] ? vectors[v++] : undefined);
  const q = byText[0];
  embedded.forEach((u, i) => {
    const v = byText[i + 1];
    // USE-lite cosines of unrelated English sentences sit near 0.0-0.3.
    u.dense = q && v ? Math.min(1, Math.max(0, (cosine(q, v) - 0.25) / 0.5)) : 0;
  });
}

/**
 * Words decide, the embedding and the question's word pairs in a row
 * (phraseShare) nudge (USE-lite alone ranks poorly) and the search's ranking
 * breaks near-ties. A row or a record is scored by its
 * words, with an ordinary sentence's cosine: its own embedding is mostly its
 * column names.
 */
function combine(u: ScoredUnit, phrase: number): number {
  const nudge = 0.3 * (u.kind === 'record' || u.kind === 'row' ? TYPICAL_DENSE : u.dense) + 0.1 * phrase;
  u.content = 0.6 * u.ownLexical + nudge;
  return 0.6 * u.lexical + nudge + 0.1 / (1 + 0.15 * u.quote);
}

/** About what a sentence on the question's topic gets from USE-lite (scaled), for units whose embedding says little. */
const TYPICAL_DENSE = 0.4;

function round(x: number): number {
  return Math.round(x * 1000) / 1000;
}
