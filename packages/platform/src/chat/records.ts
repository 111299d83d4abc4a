// responseData: one record per step of a chat, in FastGPT's field names
// (moduleName, moduleType, runningTime in seconds, model, inputTokens, ...).
import type { InputCut } from '../search/token-limits.js';

export interface StepRecord {
  moduleName: string;
  moduleType: 'queryExtension' | 'classifyQuestion' | 'datasetSearchNode' | 'contentExtract' | 'chatNode' | 'answerNode';
  runningTime: number;
  model?: string;
  inputTokens?: number;
  outputTokens?: number;
  query?: string;
  error?: string;
  [field: string]: unknown;
}

/** A step's record says what its model was not sent (nothing when it was sent everything). */
export function cutRecord(cut: InputCut | undefined): { inputCut?: InputCut } {
  return cut ? { inputCut: cut } : {};
}

/** Milliseconds as seconds with two decimals (FastGPT's unit). */
export function seconds(ms: number): number {
  return Math.round(ms / 10) / 100;
}

/** Seconds since `startedAt` (performance.now()), two decimals. */
export function secondsSince(startedAt: number): number {
  return seconds(performance.now() - startedAt);
}

export interface TokenUsage {
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
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
