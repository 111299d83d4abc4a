// UpstreamClient over the agent: what the relay's stream path relies on.
import { describe, expect, it } from 'vitest';
import { UpstreamClient } from '../src/relay/upstream.js';
import { cleanupAfterEach, httpServer, sleep } from './agent-support.js';

cleanupAfterEach();

describe('UpstreamClient.postStream', () => {
  it('resolves only after the last chunk handed on has been taken, even when the answer ended first', async () => {
    // The whole answer arrives in one read: the agent ends it while the handler still waits on the client.
    const up = await httpServer((_req, res) => res.end('data: {"x":1}\n\n'));
    const client = new UpstreamClient({ connectTimeoutMs: 5000, headersTimeoutMs: 5000, idleTimeoutMs: 5000 });
    const order: string[] = [];
    const status = await client.postStream(
      { url: `${up.origin}/v1/chat/completions`, headers: { 'content-type': 'application/json' } },
      '{}',
      undefined,
      async (chunk) => {
        order.push(`chunk ${chunk.length}`);
        await sleep(100);
        order.push('chunk taken');
      },
    );
    order.push('resolved');
    expect(status).toBe(200);
    expect(order).toEqual(['chunk 15', 'chunk taken', 'resolved']);
    await client.close();
  });

  it('rejects with the write error when the last chunk cannot be handed on', async () => {
    const up = await httpServer((_req, res) => res.end('data: {"x":1}\n\n'));
    const client = new UpstreamClient({ connectTimeoutMs: 5000, headersTimeoutMs: 5000, idleTimeoutMs: 5000 });
    const failed = client.postStream({ url: `${up.origin}/v1/chat/completions`, headers: {} }, '{}', undefined, async () => {
      await sleep(20);
      throw new Error('the client went away');
    });
    await expect(failed).rejects.toThrow('the client went away');
    await client.close();
  });
});
