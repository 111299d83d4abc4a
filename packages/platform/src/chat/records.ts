// responseData: one record per step of a chat, in FastGPT's field names
// (moduleName, moduleType, runningTime in seconds, model, inputTokens, ...).
import type { StepRecord, TokenUsage } from '@kbchat/contracts';
import type { GatewayError, ModelCall } from '../gateway-client/index.js';
import type { InputCut } from '../search/token-limits.js';

export type { StepRecord, TokenUsage };

/** A step's record says what its model was not sent (nothing when it was sent everything). */
export function cutRecord(cut: InputCut | undefined): { inputCut?: InputCut } {
  return cut ? { inputCut: cut } : {};
}

/**
 * The model call of a classification or extraction step, for its record's
 * `modelCalls` (none when the step called no model: no categories or fields).
 */
export function stepCalls(step: string, r: { model: string; requestId?: string; runningTime: number; failure?: GatewayError }): { modelCalls?: ModelCall[] } {
  if (!r.requestId && !r.failure) return {};
  const call: ModelCall = {
    step,
    kind: 'chat',
    model: r.model,
    ...(r.requestId ? { requestId: r.requestId } : {}),
    runningTime: seconds(r.runningTime),
    ...(r.failure ? { error: r.failure.message } : {}),
  };
  return { modelCalls: [call] };
}

/** Milliseconds as seconds with two decimals (FastGPT's unit). */
export function seconds(ms: number): number {
  return Math.round(ms / 10) / 100;
}

/** Seconds since `startedAt` (performance.now()), two decimals. */
export function secondsSince(startedAt: number): number {
  return seconds(performance.now() - startedAt);
}

export class UsageTotal {
  prompt = 0;
  completion = 0;

  add(input: number | undefined, output: number | undefined): void {
    this.prompt += input ?? 0;
    this.completion += output ?? 0;
  }

  toJSON(): TokenUsage {
    return { prompt_tokens: this.prompt, completion_tokens: this.completion, total_tokens: this.prompt + this.completion };
  }
}
