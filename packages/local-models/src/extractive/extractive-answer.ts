// local-extractive: answers by quoting the prompt's own knowledge. Every
// quoted sentence is scored against the question by word overlap (stemmed,
// stopwords out, weighted by how rare a word is among the quoted sentences)
// and by USE-lite cosine; the best few above a threshold are returned in
// their original order, each followed by its quote's marker.
import type { EmbedPool } from '../embeddings/embed-pool.js';
import { cosine, prepareForEmbedding } from '../embeddings/prepare.js';
import { parsePrompt, type ParsedQuote } from './quotes.js';
import { splitSentences, terms } from './text.js';

export const NOT_FOUND_ANSWER = 'I could not find an answer to that in the provided knowledge.';
export const NO_QUESTION_ANSWER = 'I could not find a question to answer in the last user message.';

export interface ExtractiveOptions {
  /** Most sentences in an answer. */
  maxSentences: number;
  /** Least combined score (0..1) a sentence needs to be quoted. */
  minScore: number;
  /** Sentences scored with embeddings at most (the rest only by words), bounding the cost of a huge prompt. */
  maxEmbedded: number;
}

export const DEFAULT_EXTRACTIVE_OPTIONS: ExtractiveOptions = { maxSentences: 3, minScore: 0.3, maxEmbedded: 64 };

interface Candidate {
  quote: ParsedQuote;
  sentence: string;
  order: number;
  terms: Set<string>;
  lexical: number;
  dense: number;
  score: number;
}

export interface ExtractiveAnswer {
  text: string;
  /** The sentences quoted (empty when it refused), best first, for tests and debugging. */
  picked: { sentence: string; marker: string; score: number }[];
}

export async function answerFromPrompt(
  messages: { role: string; text: string }[],
  pool: EmbedPool,
  options: ExtractiveOptions = DEFAULT_EXTRACTIVE_OPTIONS,
): Promise<ExtractiveAnswer> {
  const { question, quotes } = parsePrompt(messages);
  if (!question) return { text: NO_QUESTION_ANSWER, picked: [] };
  const candidates = sentenceCandidates(quotes);
  if (candidates.length === 0) return { text: NOT_FOUND_ANSWER, picked: [] };

  scoreLexical(question, candidates);
  // Embeddings are the costly part (~75 sentences/s): only the lexically best are embedded.
  const embedded = [...candidates].sort((a, b) => b.lexical - a.lexical || a.order - b.order).slice(0, options.maxEmbedded);
  const texts = [question, ...embedded.map((c) => (c.quote.question ? `${c.quote.question} ${c.sentence}` : c.sentence))];
  const prepared = texts.map(prepareForEmbedding);
  const usable = prepared.map((t) => t.length > 0);
  const { vectors } = await pool.embed(prepared.filter((_, i) => usable[i]));
  const byText: (Float32Array | undefined)[] = [];
  for (let i = 0, v = 0; i < prepared.length; i++) byText.push(usable[i] ? vectors[v++] : undefined);
  const q = byText[0];
  embedded.forEach((c, i) => {
    const v = byText[i + 1];
    c.dense = q && v ? cosine(q, v) : 0;
  });

  for (const c of candidates) c.score = combine(c.lexical, c.dense);
  const ranked = candidates.filter((c) => c.score >= options.minScore).sort((a, b) => b.score - a.score);
  const best = ranked[0]?.score ?? 0;
  // Keep only sentences close to the best one, so a strong answer is not diluted by loose matches.
  const picked = ranked.filter((c) => c.score >= best * 0.6).slice(0, options.maxSentences);
  if (picked.length === 0) return { text: NOT_FOUND_ANSWER, picked: [] };
  const text = [...picked]
    .sort((a, b) => a.order - b.order)
    .map((c) => `${c.sentence} [${c.quote.marker}]`)
    .join(' ');
  return { text, picked: picked.map((c) => ({ sentence: c.sentence, marker: c.quote.marker, score: round(c.score) })) };
}

/**
 * Words decide, the embedding nudges (USE-lite alone ranks poorly: see
 * local-models.md), but a close paraphrase with no shared word can still pass.
 * USE-lite cosines of unrelated English sentences sit near 0.0-0.3.
 */
function combine(lexical: number, dense: number): number {
  const denseScaled = Math.min(1, Math.max(0, (dense - 0.25) / 0.5));
  return 0.6 * lexical + 0.4 * denseScaled;
}

function sentenceCandidates(quotes: ParsedQuote[]): Candidate[] {
  const out: Candidate[] = [];
  for (const quote of quotes) {
    const questionTerms = quote.question ? terms(quote.question) : [];
    for (const sentence of splitSentences(quote.text)) {
      out.push({
        quote,
        sentence,
        order: out.length,
        terms: new Set([...terms(sentence), ...questionTerms]),
        lexical: 0,
        dense: 0,
        score: 0,
      });
    }
  }
  return out;
}

/** The idf-weighted share of the question's words that a sentence contains. */
function scoreLexical(question: string, candidates: Candidate[]): void {
  const qTerms = [...new Set(terms(question))];
  if (qTerms.length === 0) return;
  const n = candidates.length;
  const idf = qTerms.map((t) => {
    let df = 0;
    for (const c of candidates) if (c.terms.has(t)) df++;
    return Math.log(1 + (n + 1) / (df + 0.5));
  });
  const total = idf.reduce((a, b) => a + b, 0);
  for (const c of candidates) {
    let hit = 0;
    qTerms.forEach((t, i) => {
      if (c.terms.has(t)) hit += idf[i];
    });
    c.lexical = hit / total;
  }
}

function round(x: number): number {
  return Math.round(x * 1000) / 1000;
}
