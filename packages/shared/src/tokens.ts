// Local token counting with a tokenizer bundled in the npm package: nothing is
// downloaded, ever (gateway users' top complaint is start-up dying offline).
// o200k_base is the encoding of current OpenAI models; for other models it is
// an estimate, used only when the upstream reports no usage.

type Counter = (text: string) => number;
let counter: Counter | undefined;
let loading: Promise<void> | undefined;

/** Loads the encoding tables (about 200 ms); safe to call many times. */
export function loadTokenizer(): Promise<void> {
  loading ??= import('gpt-tokenizer/encoding/o200k_base').then((m) => {
    counter = (text: string) => m.countTokens(text);
  });
  return loading;
}

/** Whether counts are exact o200k counts yet (else estimates). */
export function tokenizerLoaded(): boolean {
  return counter !== undefined;
}

const RUN = 1000;
const LONG_RUN = new RegExp(`\\S{${RUN + 1},}`, 'g');

/**
 * o200k tokens once loaded; a conservative estimate (4 chars a token) before.
 * gpt-tokenizer is quadratic on one long whitespace-free run (16k CJK
 * characters without punctuation: 1.4 s; 1 MB: minutes, enough for one request
 * body to stall a process), so runs over 1000 characters are counted in
 * 1000-character slices: linear, and for ordinary text exact. Slicing only
 * prevents merges, so a sliced count is never below the exact one in practice
 * (+0.8% measured on 'aaaa…').
 */
export function countTextTokens(text: string): number {
  if (!text) return 0;
  if (!counter) return Math.ceil(text.length / 4);
  if (text.length <= RUN) return counter(text);
  let n = 0;
  let last = 0;
  for (const m of text.matchAll(LONG_RUN)) {
    if (m.index > last) n += counter(text.slice(last, m.index));
    for (let i = 0; i < m[0].length; i += RUN) n += counter(m[0].slice(i, i + RUN));
    last = m.index + m[0].length;
  }
  return n + (last < text.length ? counter(text.slice(last)) : 0);
}

function contentText(content: unknown): string {
  if (typeof content === 'string') return content;
  if (Array.isArray(content)) {
    let out = '';
    for (const part of content) {
      if (part && typeof part === 'object' && typeof (part as { text?: unknown }).text === 'string') {
        out += (part as { text: string }).text + ' ';
      }
    }
    return out;
  }
  return '';
}

/** Prompt tokens of a chat request, counted the way OpenAI frames messages (3 per message + 3). */
export function countChatPromptTokens(messages: unknown[], tools?: unknown): number {
  let n = 3;
  for (const m of messages) {
    if (!m || typeof m !== 'object') continue;
    const msg = m as Record<string, unknown>;
    n += 3 + countTextTokens(contentText(msg.content));
    if (typeof msg.name === 'string') n += 1 + countTextTokens(msg.name);
    if (msg.tool_calls) n += countTextTokens(JSON.stringify(msg.tool_calls));
  }
  if (tools) n += countTextTokens(JSON.stringify(tools));
  return n;
}

export function countInputTokens(input: unknown): number {
  if (typeof input === 'string') return countTextTokens(input);
  if (Array.isArray(input)) {
    let n = 0;
    for (const item of input) n += typeof item === 'string' ? countTextTokens(item) : Array.isArray(item) ? item.length : 0;
    return n;
  }
  return 0;
}
