// Anthropic Messages answer -> OpenAI chat.completion: text blocks joined into
// `content`, tool_use blocks as `tool_calls` (the tool_use id kept, so the next
// turn's tool_call_id maps straight back), usage with the cache figures.
import { nowSeconds, type ChatCompletion, type FinishReason, type OpenAIToolCall, type OpenAIUsage, type WireContext } from '../wire.js';

const FINISH: Record<string, FinishReason> = {
  end_turn: 'stop',
  stop_sequence: 'stop',
  pause_turn: 'stop',
  max_tokens: 'length',
  model_context_window_exceeded: 'length',
  tool_use: 'tool_calls',
  refusal: 'content_filter',
};

export const finishReasonOf = (stopReason: unknown): FinishReason => FINISH[String(stopReason)] ?? 'stop';

const count = (v: unknown): number => (typeof v === 'number' && Number.isFinite(v) && v > 0 ? Math.floor(v) : 0);

/**
 * Anthropic's input_tokens leaves out what was read from or written to the
 * prompt cache; OpenAI's prompt_tokens counts the whole prompt, with the cached
 * part in prompt_tokens_details. Both cache figures are kept as they came.
 */
export function usageOf(u: any): OpenAIUsage {
  const read = count(u?.cache_read_input_tokens);
  const written = count(u?.cache_creation_input_tokens);
  const prompt = count(u?.input_tokens) + read + written;
  const completion = count(u?.output_tokens);
  return {
    prompt_tokens: prompt,
    completion_tokens: completion,
    total_tokens: prompt + completion,
    prompt_tokens_details: { cached_tokens: read },
    cache_creation_input_tokens: written,
    cache_read_input_tokens: read,
  };
}

export function anthropicResponse(answer: any, ctx: WireContext): ChatCompletion {
  let text = '';
  const calls: OpenAIToolCall[] = [];
  for (const b of Array.isArray(answer?.content) ? answer.content : []) {
    if (b?.type === 'text' && typeof b.text === 'string') text += b.text;
    else if (b?.type === 'tool_use')
      calls.push({ id: String(b.id), type: 'function', function: { name: String(b.name), arguments: JSON.stringify(b.input ?? {}) } });
  }
  return {
    id: `chatcmpl-${answer?.id ?? 'anthropic'}`,
    object: 'chat.completion',
    created: ctx.created ?? nowSeconds(),
    model: ctx.model,
    choices: [
      {
        index: 0,
        message: { role: 'assistant', content: calls.length && !text ? null : text, ...(calls.length ? { tool_calls: calls } : {}) },
        finish_reason: finishReasonOf(answer?.stop_reason),
      },
    ],
    usage: usageOf(answer?.usage),
  };
}
