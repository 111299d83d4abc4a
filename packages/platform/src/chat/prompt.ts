// The messages of the answering call: the app's system prompt (variables
// filled in), the history that fits the model's context, and the question,
// wrapped in the quote prompt when the search found quotes.
import { DEFAULT_QUOTE_PROMPT, DEFAULT_QUOTE_TEMPLATE } from '@kbchat/contracts';
import { countTextTokens } from '@kbchat/shared';
import { tokensWithin } from '../search/token-limits.js';

export { DEFAULT_QUOTE_PROMPT, DEFAULT_QUOTE_TEMPLATE };

export interface ChatTurn {
  role: 'user' | 'assistant';
  content: string;
}

export interface QuoteItem {
  q: string;
  a: string;
  sourceName: string;
  sourceId: string;
}

/** {{name}} replaced by values[name]; unknown names stay as they are. */
export function fillTemplate(template: string, values: Record<string, unknown>): string {
  return template.replace(/\{\{\s*([\w$.-]+)\s*\}\}/g, (all, name: string) => {
    if (!Object.prototype.hasOwnProperty.call(values, name)) return all;
    const v = values[name];
    return v === null || v === undefined ? '' : typeof v === 'string' ? v : JSON.stringify(v);
  });
}

/** A quote's text must not be able to close the element or container around it. */
function defang(text: string): string {
  return text.replace(/<\/(quote|reference)/gi, '< /$1');
}

export function formatQuotes(quotes: QuoteItem[], template = DEFAULT_QUOTE_TEMPLATE): string {
  return quotes
    .map((q, i) => {
      // An empty answer leaves no blank line behind.
      const t = q.a ? template : template.replace(/\n\{\{\s*a\s*\}\}/, '');
      return fillTemplate(t, { q: defang(q.q), a: defang(q.a), source: q.sourceName.replace(/"/g, "'"), sourceId: q.sourceId, index: i + 1 });
    })
    .join('\n');
}

export interface PromptInput {
  systemPrompt: string;
  variables: Record<string, unknown>;
  history: ChatTurn[];
  question: string;
  quotes: QuoteItem[];
  quoteTemplate?: string;
  quotePrompt?: string;
  /** Tokens the model may read in all (its maxContext), and what the answer needs of them. */
  maxContext: number;
  answerTokens: number;
}

export interface BuiltPrompt {
  messages: { role: 'system' | 'user' | 'assistant'; content: string }[];
  /** How many history turns fitted. */
  historyUsed: number;
}

export function buildMessages(input: PromptInput): BuiltPrompt {
  const vars = { cTime: new Date().toISOString().replace('T', ' ').slice(0, 19), ...input.variables };
  const system = fillTemplate(input.systemPrompt, vars).trim();
  const user = input.quotes.length
    ? fillTemplate(input.quotePrompt ?? DEFAULT_QUOTE_PROMPT, { quote: formatQuotes(input.quotes, input.quoteTemplate), question: input.question })
    : input.question;
  // Newest history first, while it fits; the question and system prompt always go.
  // Counted only when there is history to fit: o200k over a prompt of quotes
  // costs ~3-4 ms (14 KB), time the first token would otherwise wait.
  const kept: ChatTurn[] = [];
  let budget = input.history.length ? input.maxContext - input.answerTokens - countTextTokens(system) - countTextTokens(user) - 16 : 0;
  for (let i = input.history.length - 1; i >= 0; i--) {
    // Bounded: a turn of megabytes is not counted to the end to learn that it does not fit.
    const tokens = tokensWithin(input.history[i]!.content, budget - 4);
    if (tokens === undefined) break;
    budget -= tokens + 4;
    kept.unshift(input.history[i]!);
  }
  // A kept history starts with a user turn, as chat models expect.
  while (kept.length && kept[0]!.role !== 'user') kept.shift();
  const messages: BuiltPrompt['messages'] = [];
  if (system) messages.push({ role: 'system', content: system });
  messages.push(...kept, { role: 'user', content: user });
  return { messages, historyUsed: kept.length };
}
