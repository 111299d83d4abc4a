// The model calls of a search or a chat turn, as the platform saw them: which
// step made each, the model, how long it took, and the gateway's request id,
// under which the gateway's request log keeps the channel, the cost and its
// own latency (read back when a trace is opened: model-calls.ts in chat/).
import type { ModelCallKind, ModelCall } from '@kbchat/contracts';
import { GatewayError } from './errors.js';

export type { ModelCallKind, ModelCall };

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
