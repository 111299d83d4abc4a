// GET /api/core/ai/model/list's parts: the failures the platform saw per model
// (a failing channel before the gateway disables it) and the one sentence
// that says the gateway is down (its address once).
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, expect, it } from 'vitest';
import { GatewayClient } from '../src/gateway-client/index.js';
import { ModelFailures } from '../src/gateway-client/model-failures.js';
import { parseModelConfig } from '../src/models/config-file.js';
import { modelStatus } from '../src/models/routes.js';

describe('ModelFailures', () => {
  it("counts gateway-side failures in a row, forgets them at a success or when old, and ignores a caller's 4xx", () => {
    const f = new ModelFailures();
    const t0 = Date.parse('2026-11-25T10:00:00Z');
    f.noteFailure('m', 400, 'bad request', t0);
    expect(f.failing('m', t0)).toBeUndefined();
    f.noteFailure('m', 503, 'No available channel', t0);
    f.noteFailure('m', 429, 'rate limited', t0 + 1000);
    expect(f.failing('m', t0 + 1000)).toEqual({
      failures: 2,
      since: '2026-11-25T10:00:00.000Z',
      lastAt: '2026-11-25T10:00:01.000Z',
      lastError: 'rate limited',
    });
    expect(f.failing('m', t0 + 16 * 60_000)).toBeUndefined();
    f.noteSuccess('m');
    expect(f.failing('m', t0 + 2000)).toBeUndefined();
  });
});

describe('modelStatus', () => {
  const models = parseModelConfig({ llmModels: [{ model: 'chat-a' }], vectorModels: [{ model: 'embed-a' }] });

  it('says once that the gateway does not answer, naming its address', async () => {
    const closed = createServer();
    await new Promise<void>((r) => closed.listen(0, '127.0.0.1', r));
    const url = `http://127.0.0.1:${(closed.address() as AddressInfo).port}`;
    await new Promise((r) => closed.close(r));
    const gateway = new GatewayClient({ url, token: 't' });
    const list = await modelStatus(models, gateway);
    expect(list.gateway.reachable).toBe(false);
    expect(list.gateway.message).toMatch(new RegExp(`^The gateway at ${url} did not answer: Connection error: .*ECONNREFUSED`));
    expect(list.gateway.message!.split(url)).toHaveLength(2);
    expect(list.models.map((m) => [m.model, m.served])).toEqual([
      ['chat-a', false],
      ['embed-a', false],
    ]);
    await gateway.close();
  });

  it("marks a served model failing after the platform's calls to it failed at the gateway", async () => {
    // A gateway that lists both models and answers every chat with 503.
    const server = createServer((req, res) => {
      res.setHeader('content-type', 'application/json');
      if (req.url === '/v1/models') return res.end(JSON.stringify({ data: [{ id: 'chat-a' }, { id: 'embed-a' }] }));
      res.statusCode = 503;
      res.end(JSON.stringify({ error: { message: 'upstream overloaded', type: 'upstream_error' } }));
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const gateway = new GatewayClient({ url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, token: 't' });
    await expect(gateway.forRequest('r1').chat({ model: 'chat-a', messages: [] })).rejects.toThrow('upstream overloaded');
    const list = await modelStatus(models, gateway);
    const chat = list.models.find((m) => m.model === 'chat-a')!;
    expect(chat).toMatchObject({ served: true, failing: { failures: 1, lastError: expect.stringContaining('upstream overloaded') } });
    expect(list.models.find((m) => m.model === 'embed-a')!.failing).toBeUndefined();
    await gateway.close();
    await new Promise((r) => server.close(r));
  });
});
