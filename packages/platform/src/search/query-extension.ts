// Query extension ("question completion"): one generation turns the question
// (and the conversation so far) into 3 to 5 search queries. Its answer is read
// leniently: a JSON array anywhere in the text, else one query per line.
import type { ExtensionResult } from '@kbchat/contracts';
import type { GatewayClient } from '../gateway-client/index.js';
import type { LlmModel } from '../models/config-file.js';
import { fitStepInput } from './token-limits.js';

export type { ExtensionResult };

export const QUERY_EXTENSION_PROMPT = `You rewrite a user's question into search queries for a knowledge base.
Write 3 to 5 different short queries that together cover what the question asks: resolve pronouns from the conversation, add synonyms and the likely technical terms, and split compound questions.
Answer with a JSON array of strings and nothing else.`;

export function parseQueries(text: string, question: string): string[] {
  let list: unknown;
  const m = /\[[\s\S]*\]/.exec(text);
  if (m) {
    try {
      list = JSON.parse(m[0]);
    } catch {
      list = undefined;
    }
  }
  const raw = Array.isArray(list)
    ? list.filter((q): q is string => typeof q === 'string')
    : text.split('\n').map((l) => l.replace(/^\s*(?:[-*•]|\d+[.)])\s*/, '').replace(/^["']|["']$/g, ''));
  const seen = new Set([question.trim().toLowerCase()]);
  const out: string[] = [];
  for (const q of raw.map((s) => s.trim()).filter((s) => s.length > 1 && s.length < 500)) {
    const key = q.toLowerCase();
    if (seen.has(key)) continue;
    seen.add(key);
    out.push(q);
  }
  return out.slice(0, 5);
}

export async function extendQuery(
  gateway: GatewayClient,
  model: LlmModel,
  question: string,
  opts: { background?: string; history?: { role: string; content: string }[] } = {},
): Promise<ExtensionResult> {
  const fitted = fitStepInput(question, (opts.history ?? []).slice(-6), model.maxContext);
  const history = fitted.history.map((m) => `${m.role}: ${m.content}`).join('\n');
  const user = [opts.background ? `Background: ${opts.background}` : '', history ? `Conversation:\n${history}` : '', `Question: ${fitted.question}`]
    .filter(Boolean)
    .join('\n\n');
  const { json, requestId } = await gateway.chat({
    model: model.model,
    messages: [
      { role: 'system', content: QUERY_EXTENSION_PROMPT },
      { role: 'user', content: user },
    ],
    temperature: 0.1,
  });
  const text = String(json?.choices?.[0]?.message?.content ?? '');
  return {
    queries: parseQueries(text, question),
    model: model.model,
    inputTokens: Number(json?.usage?.prompt_tokens ?? 0),
    outputTokens: Number(json?.usage?.completion_tokens ?? 0),
    ...(requestId ? { requestId } : {}),
    ...(fitted.inputCut ? { inputCut: fitted.inputCut } : {}),
  };
}
