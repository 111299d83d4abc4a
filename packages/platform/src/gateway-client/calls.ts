// The model calls of a search or a chat turn, as the platform saw them: which
// step made each, the model, how long it took, and the gateway's request id,
// under which the gateway's request log keeps the channel, the cost and its
// own latency (read back when a trace is opened: model-calls.ts in chat/).
import { GatewayError } from './errors.js';

export type ModelCallKind = 'chat' | 'embeddings' | 'rerank';

export interface ModelCall {
  /** What the call was for: queryExtension, classifyQuestion, contentExtract, embeddings, rerank, chatNode. */
  step: string;
  kind: ModelCallKind;
  model: string;
  /** The gateway's X-Request-Id; absent only when the gateway was not reached. */
  requestId?: string;
  /** Seconds, as the platform measured it (two decimals, FastGPT's unit). */
  runningTime: number;
  error?: string;
}

/**
 * Runs one model call and appends its record to `calls`, failures included
 * (their request id comes from the GatewayError). `idOf` reads the request id
 * from the call's result.
 */
export async function recordCall<T>(
  calls: ModelCall[],
  call: { step: string; kind: ModelCallKind; model: string },
  run: () => Promise<T>,
  idOf: (result: T) => string | undefined,
): Promise<T> {
  const started = performance.now();
  const runningTime = () => Math.round((performance.now() - started) / 10) / 100;
  try {
    const result = await run();
    const requestId = idOf(result);
    calls.push({ ...call, ...(requestId ? { requestId } : {}), runningTime: runningTime() });
    return result;
  } catch (err) {
    const requestId = err instanceof GatewayError ? err.requestId : undefined;
    calls.push({ ...call, ...(requestId ? { requestId } : {}), runningTime: runningTime(), error: (err as Error)?.message ?? String(err) });
    throw err;
  }
}
