// recordCall and stepCalls: the records of model calls that a trace shows,
// failures included (their request id comes from the gateway's error).
import { describe, expect, it } from 'vitest';
import { stepCalls } from '../src/chat/records.js';
import { GatewayError, recordCall, type ModelCall } from '../src/gateway-client/index.js';

describe('recordCall', () => {
  it('records a call with the request id read from its result, and returns the result', async () => {
    const calls: ModelCall[] = [];
    const r = await recordCall(
      calls,
      { step: 'embeddings', kind: 'embeddings', model: 'm' },
      async () => ({ requestId: 'req-1', n: 3 }),
      (x) => x.requestId,
    );
    expect(r.n).toBe(3);
    expect(calls).toEqual([{ step: 'embeddings', kind: 'embeddings', model: 'm', requestId: 'req-1', runningTime: expect.any(Number) }]);
    expect(calls[0]!.runningTime).toBeGreaterThanOrEqual(0);
  });

  it("records a failed call with the gateway error's request id and message, and rethrows it", async () => {
    const calls: ModelCall[] = [];
    const err = new GatewayError(503, 'model_not_found', 'No available channel (request id: req-9)', 'req-9', '{}');
    await expect(
      recordCall(
        calls,
        { step: 'rerank', kind: 'rerank', model: 'r' },
        async () => {
          throw err;
        },
        () => undefined,
      ),
    ).rejects.toBe(err);
    expect(calls).toEqual([{ step: 'rerank', kind: 'rerank', model: 'r', requestId: 'req-9', runningTime: expect.any(Number), error: err.message }]);
  });

  it('leaves the request id out when the gateway was not reached', async () => {
    const calls: ModelCall[] = [];
    await expect(
      recordCall(
        calls,
        { step: 'chatNode', kind: 'chat', model: 'c' },
        async () => {
          throw new Error('boom');
        },
        () => undefined,
      ),
    ).rejects.toThrow('boom');
    expect(calls[0]).not.toHaveProperty('requestId');
    expect(calls[0]!.error).toBe('boom');
  });
});

describe('stepCalls', () => {
  it('is empty for a step that called no model (no request id, no failure)', () => {
    expect(stepCalls('classifyQuestion', { model: 'm', runningTime: 0 })).toEqual({});
  });

  it('gives the call in seconds, with the failure when there was one', () => {
    expect(stepCalls('contentExtract', { model: 'm', requestId: 'req-2', runningTime: 1234 })).toEqual({
      modelCalls: [{ step: 'contentExtract', kind: 'chat', model: 'm', requestId: 'req-2', runningTime: 1.23 }],
    });
    const failure = new GatewayError(502, 'connection_error', 'Connection error: http://x', undefined, '{}');
    expect(stepCalls('classifyQuestion', { model: 'm', runningTime: 5, failure }).modelCalls).toEqual([
      { step: 'classifyQuestion', kind: 'chat', model: 'm', runningTime: 0.01, error: 'Connection error: http://x' },
    ]);
  });
});
