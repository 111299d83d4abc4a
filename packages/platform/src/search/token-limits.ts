// What a model can read. The search and the helper steps (classification,
// extraction, question completion) cut a long question to the model's limit
// instead of sending it whole and being refused, and leave out the oldest
// history turns. Counting never reads more than a window of a text, so a
// 20 MB question costs what its first few pages cost.
import type { InputCut } from '@kbchat/contracts';
import { countTextTokens } from '@kbchat/shared';

export type { InputCut };

/**
 * o200k tokens are rarely longer than this many characters: a text longer
 * than `max` times this is taken to be over `max` without being counted.
 */
const MAX_CHARS_PER_TOKEN = 8;

/** A vector model whose config.json entry has no maxToken: the smallest limit common embedding servers have (BERT-style models, TEI). */
export const DEFAULT_VECTOR_MAX_TOKENS = 512;

/** An LLM whose config.json entry has no maxContext. */
export const DEFAULT_MAX_CONTEXT = 16_000;

/** Full-text search and rerank read at most this much of a question. */
export const SEARCH_TEXT_MAX_TOKENS = 2_000;

/** The text's tokens when they are at most `max`, else undefined. */
export function tokensWithin(text: string, max: number): number | undefined {
  if (text.length > max * MAX_CHARS_PER_TOKEN) return undefined;
  const n = countTextTokens(text);
  return n <= max ? n : undefined;
}

export interface CutText {
  text: string;
  /** The text was longer than the limit. */
  cut: boolean;
}

/** The text, or as much of its start as fits `max` tokens (at a word boundary when one is near). */
export function cutToTokens(text: string, max: number): CutText {
  if (tokensWithin(text, max) !== undefined) return { text, cut: false };
  let end = Math.min(text.length, max * MAX_CHARS_PER_TOKEN);
  // Shrinks in proportion to the overshoot: two or three counts in practice.
  for (let n = countTextTokens(text.slice(0, end)); n > max; n = countTextTokens(text.slice(0, end))) {
    end = Math.max(0, Math.min(end - 1, Math.floor(((end * max) / n) * 0.98)));
  }
  const space = text.lastIndexOf(' ', end);
  if (space > end * 0.9) end = space;
  const code = text.charCodeAt(end - 1);
  if (code >= 0xd800 && code <= 0xdbff) end -= 1; // a surrogate pair stays whole
  return { text: text.slice(0, end).trimEnd(), cut: true };
}

export interface Turn {
  role: string;
  content: string;
}

export interface StepInput<T extends Turn> {
  question: string;
  history: T[];
  /** Set when something was left out, for the step's responseData record. */
  inputCut?: InputCut;
}

/**
 * A step's question and history within its model's context: the question gets
 * up to half of it, the newest whole history turns up to a quarter; the rest
 * is the step's own instructions (categories, fields, background) and answer.
 */
export function fitStepInput<T extends Turn>(question: string, history: T[], maxContext: number | undefined): StepInput<T> {
  const context = maxContext ?? DEFAULT_MAX_CONTEXT;
  const q = cutToTokens(question, Math.floor(context / 2));
  let budget = Math.floor(context / 4);
  let kept = 0;
  for (let i = history.length - 1; i >= 0; i--) {
    const cost = tokensWithin(history[i]!.content, budget);
    if (cost === undefined) break;
    budget -= cost;
    kept++;
  }
  const fitted = { question: q.text, history: history.slice(history.length - kept) };
  if (!q.cut && kept === history.length) return fitted;
  return {
    ...fitted,
    inputCut: { questionChars: question.length, sentChars: q.text.length, historyTurns: history.length, sentHistoryTurns: kept, maxContext: context },
  };
}
