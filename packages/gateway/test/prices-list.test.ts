// GET /api/prices lists, beside the priced models, the models with traffic or
// a channel that have no price, with what they are charged (the default, or
// nothing for in-process models); setting and deleting a price moves a model
// between the two lists, and the next request's logged cost follows it. On
// every store, over real HTTP, with the upstream simulator over HTTP.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestGateway, type TestGateway } from './helpers.js';
import { STORE_NAMES, testStore, type TestStore } from './stores.js';

const stores: TestStore[] = await Promise.all(STORE_NAMES.map((n) => testStore(n)));
afterAll(async () => {
  await Promise.all(stores.map((s) => s.drop()));
});

describe.each(stores)('prices list: $name', (t) => {
  const skip = Boolean(t.skipReason);
  let gw: TestGateway;
  let payerKey = '';

  async function call(path: string, init: { method?: string; json?: unknown } = {}) {
    const res = await gw.api(path, init);
    return { status: res.status, body: (await res.json()) as any };
  }

  async function chat(model: string) {
    const res = await fetch(`${gw.baseURL}/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${payerKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model, messages: [{ role: 'user', content: 'price me' }] }),
    });
    await res.text();
    return { status: res.status, requestId: res.headers.get('x-request-id')! };
  }

  beforeAll(async () => {
    if (skip) return;
    gw = await startTestGateway({ databaseUrl: t.url, models: ['sim-chat', 'sim-echo-prompt', 'sim-embed-8'] });
    const u = await call('/api/users', { method: 'POST', json: { username: 'payer', password: 'payer-password', balance: 100 } });
    payerKey = (await call('/api/tokens', { method: 'POST', json: { user_id: u.body.id, name: 'payer token' } })).body.key;
  }, 60_000);

  afterAll(async () => {
    await gw?.close();
  });

  it.skipIf(skip)('lists unpriced models of channels and traffic at the default, not a name nobody serves', async () => {
    expect((await chat('sim-chat')).status).toBe(200);
    expect((await chat('no-such-model')).status).toBeGreaterThanOrEqual(400);
    const list = await call('/api/prices');
    expect(list.status).toBe(200);
    expect(list.body.data).toEqual([]);
    expect(list.body.default).toEqual({ input_price: 2, output_price: 8 });
    const by = Object.fromEntries(list.body.unpriced.map((p: any) => [p.model, p]));
    expect(Object.keys(by)).toEqual(['sim-chat', 'sim-echo-prompt', 'sim-embed-8']);
    expect(by['sim-chat']).toEqual({
      model: 'sim-chat',
      input_price: 2,
      output_price: 8,
      model_ratio: 1,
      completion_ratio: 4,
      charged: 'default',
      in_channels: true,
      has_traffic: true,
    });
    expect(by['sim-echo-prompt']).toMatchObject({ charged: 'default', in_channels: true, has_traffic: false });

    // In-process models are free unless priced (gateway.ts marks them so at start).
    gw.gw.services.prices.markFree('sim-embed-8');
    const free = (await call('/api/prices')).body.unpriced.find((p: any) => p.model === 'sim-embed-8');
    expect(free).toMatchObject({ charged: 'free', input_price: 0, output_price: 0, model_ratio: 0, completion_ratio: null });
  });

  it.skipIf(skip)('moves a model between the lists as its price is set and deleted; the logged cost follows', async () => {
    const put = await call('/api/prices/sim-chat', { method: 'PUT', json: { model_ratio: 0.25, completion_ratio: 2 } });
    expect(put.body).toEqual({ model: 'sim-chat', input_price: 0.5, output_price: 1, model_ratio: 0.25, completion_ratio: 2 });
    let list = (await call('/api/prices')).body;
    expect(list.data.map((p: any) => p.model)).toEqual(['sim-chat']);
    expect(list.unpriced.map((p: any) => p.model)).not.toContain('sim-chat');

    const costOf = async (requestId: string) => {
      const rows = (await call(`/api/logs?request_id=${requestId}`)).body.data;
      expect(rows).toHaveLength(1);
      return rows[0];
    };
    const cheap = await costOf((await chat('sim-chat')).requestId);
    expect(cheap.prompt_tokens).toBeGreaterThan(0);
    expect(cheap.cost_micros).toBe(Math.ceil((cheap.prompt_tokens * 500_000 + cheap.completion_tokens * 1_000_000) / 1_000_000));

    expect((await call('/api/prices/sim-chat', { method: 'DELETE' })).status).toBe(200);
    list = (await call('/api/prices')).body;
    expect(list.data).toEqual([]);
    expect(list.unpriced.find((p: any) => p.model === 'sim-chat')).toMatchObject({ charged: 'default', input_price: 2, output_price: 8 });
    const full = await costOf((await chat('sim-chat')).requestId);
    expect(full.cost_micros).toBe(Math.ceil((full.prompt_tokens * 2_000_000 + full.completion_tokens * 8_000_000) / 1_000_000));
  });
});
