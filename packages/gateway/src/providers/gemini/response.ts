// Gemini generateContent answer -> OpenAI chat.completion. Text parts are
// joined (thought parts left out), functionCall parts become tool_calls with
// ids the gateway makes up (Gemini's calls have none), one choice per
// candidate. A prompt Gemini blocked is an error; an answer it stopped for
// safety is finish_reason "content_filter".
import { nowSeconds, type ChatCompletion, type FinishReason, type OpenAIToolCall, type OpenAIUsage, type WireContext } from '../wire.js';
import { blockedPrompt } from './errors.js';

const FINISH: Record<string, FinishReason> = {
  STOP: 'stop',
  MAX_TOKENS: 'length',
  SAFETY: 'content_filter',
  RECITATION: 'content_filter',
  BLOCKLIST: 'content_filter',
  PROHIBITED_CONTENT: 'content_filter',
  SPII: 'content_filter',
  IMAGE_SAFETY: 'content_filter',
};

/** Gemini says STOP after function calls too: with calls, "tool_calls". */
export function finishReasonOf(reason: unknown, hasCalls: boolean): FinishReason {
  const r = FINISH[String(reason)] ?? 'stop';
  return r === 'stop' && hasCalls ? 'tool_calls' : r;
}

const count = (v: unknown): number => (typeof v === 'number' && Number.isFinite(v) && v > 0 ? Math.floor(v) : 0);

/** usageMetadata -> OpenAI usage; thinking tokens are output, as OpenAI counts reasoning. */
export function usageOf(u: any): OpenAIUsage {
  const prompt = count(u?.promptTokenCount);
  const completion = count(u?.candidatesTokenCount) + count(u?.thoughtsTokenCount);
  return {
    prompt_tokens: prompt,
    completion_tokens: completion,
    total_tokens: prompt + completion,
    prompt_tokens_details: { cached_tokens: count(u?.cachedContentTokenCount) },
  };
}

/** A made-up call id: the answer's id, the candidate and the call's place in it. */
export const callId = (responseId: unknown, candidate: number, n: number): string => `call_${String(responseId ?? 'gemini')}_${candidate}_${n}`;

export function geminiResponse(answer: any, ctx: WireContext): ChatCompletion {
  const candidates: any[] = Array.isArray(answer?.candidates) ? answer.candidates : [];
  if (candidates.length === 0 && answer?.promptFeedback?.blockReason) throw blockedPrompt(answer.promptFeedback.blockReason);
  const choices = candidates.map((c, i) => {
    const index = typeof c?.index === 'number' ? c.index : i;
    let text = '';
    const calls: OpenAIToolCall[] = [];
    for (const p of Array.isArray(c?.content?.parts) ? c.content.parts : []) {
      if (typeof p?.text === 'string' && !p.thought) text += p.text;
      else if (p?.functionCall) {
        const id = typeof p.functionCall.id === 'string' ? p.functionCall.id : callId(answer.responseId, index, calls.length);
        calls.push({ id, type: 'function', function: { name: String(p.functionCall.name), arguments: JSON.stringify(p.functionCall.args ?? {}) } });
      }
    }
    return {
      index,
      message: { role: 'assistant' as const, content: calls.length && !text ? null : text, ...(calls.length ? { tool_calls: calls } : {}) },
      finish_reason: finishReasonOf(c?.finishReason, calls.length > 0),
    };
  });
  return {
    id: `chatcmpl-${answer?.responseId ?? 'gemini'}`,
    object: 'chat.completion',
    created: ctx.created ?? nowSeconds(),
    model: ctx.model,
    choices,
    usage: usageOf(answer?.usageMetadata),
  };
}
