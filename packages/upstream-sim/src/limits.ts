// What the Anthropic and Gemini simulators share: an answer cut at a stop
// sequence or at the request's output token limit, as the providers do.
import { tokenCount } from './text.js';

export interface LimitedAnswer {
  /** The streamed pieces left after the cut. */
  parts: string[];
  text: string;
  outputTokens: number;
  /** Why it ended early: the limit, a stop sequence, or null (it did not). */
  cut: 'max_tokens' | 'stop_sequence' | null;
  stopSequence: string | null;
}

/** Streamed pieces of a text: split after each space, as a provider streams words. */
export const splitWords = (text: string): string[] => (text ? text.split(/(?<= )/) : []);

/**
 * `parts` (one word each, as the echo answers are) cut at the first stop
 * sequence found in the text, then at `maxTokens` (1.3 tokens a word, the
 * simulator's count). `outputTokens` is the given count when nothing is cut.
 */
export function limitAnswer(parts: string[], outputTokens: number, maxTokens: number | undefined, stops: string[]): LimitedAnswer {
  let text = parts.join('');
  let cut: LimitedAnswer['cut'] = null;
  let stopSequence: string | null = null;
  let at = -1;
  for (const s of stops) {
    const i = s ? text.indexOf(s) : -1;
    if (i >= 0 && (at < 0 || i < at)) {
      at = i;
      stopSequence = s;
    }
  }
  if (at >= 0) {
    text = text.slice(0, at);
    parts = splitWords(text);
    outputTokens = tokenCount(text);
    cut = 'stop_sequence';
  }
  if (maxTokens !== undefined && outputTokens > maxTokens) {
    let n = parts.length;
    while (n > 0 && tokenCount(parts.slice(0, n).join('')) > maxTokens) n--;
    parts = parts.slice(0, n);
    text = parts.join('');
    outputTokens = maxTokens;
    cut = 'max_tokens';
    stopSequence = null;
  }
  return { parts, text, outputTokens, cut, stopSequence };
}
