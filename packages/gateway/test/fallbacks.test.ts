// A model's fallbacks over HTTP on a real gateway in front of the upstream
// simulator: when every channel of sim-503 fails (its upstream answers 503),
// sim-chat answers, in stream and non-stream mode, charged at its own price
// and logged under its name with the model asked for; never after the
// caller's own error (sim-400), nor through a model the caller's token may
// not use; bad input names the field.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readSse, startTestGateway, type TestGateway } from './helpers.js';

describe('model fallbacks', () => {
  let t: TestGateway;
  beforeAll(async () => {
    t = await startTestGateway({ models: ['sim-chat', 'sim-503', 'sim-400'] });
  });
  afterAll(async () => {
    await t?.close();
  });

  async function call(path: string, init: { method?: string; json?: unknown; token?: string } = {}) {
    const res = await t.api(path, init);
    const text = await res.text();
    return { status: res.status, text, body: text ? JSON.parse(text) : undefined, requestId: res.headers.get('x-request-id') };
  }
  const chat = (model: string, token?: string, stream = false) =>
    call('/v1/chat/completions', { method: 'POST', token, json: { model, stream, messages: [{ role: 'user', content: 'hello there' }] } });
  const logOf = async (requestId: string) => {
    for (let i = 0; i < 100; i++) {
      const r = await call(`/api/logs/${requestId}`);
      if (r.status === 200) return r.body;
      await new Promise((done) => setTimeout(done, 20));
    }
    throw new Error(`no log row for ${requestId}`);
  };

  it('answers with the fallback when every channel of the model fails, charged and logged as the fallback', async () => {
    expect((await chat('sim-503')).status).toBe(503);
    const set = await call('/api/fallbacks/sim-503', { method: 'PUT', json: { fallbacks: ['sim-chat'] } });
    expect(set.status, set.text).toBe(200);
    expect((await call('/api/fallbacks')).body.data).toEqual([{ model: 'sim-503', fallbacks: ['sim-chat'] }]);
    await call('/api/prices/sim-chat', { method: 'PUT', json: { input_price: 3, output_price: 7 } });

    const r = await chat('sim-503');
    expect(r.status, r.text).toBe(200);
    expect(r.body.choices[0].message.content).toMatch(/^Echo: hello there/);
    expect(r.body.model).toBe('sim-chat');
    const log = await logOf(r.requestId!);
    expect(log).toMatchObject({ model: 'sim-chat', requested_model: 'sim-503', status: 200 });
    expect(log.attempts).toBeGreaterThanOrEqual(2);
    expect(log.cost_micros).toBe(log.prompt_tokens * 3 + log.completion_tokens * 7);

    const streamed = await t.api('/v1/chat/completions', {
      method: 'POST',
      json: { model: 'sim-503', stream: true, messages: [{ role: 'user', content: 'hello there' }] },
    });
    expect(streamed.status).toBe(200);
    const sse = await readSse(streamed);
    expect(sse.done).toBe(true);
    expect(sse.data.map((d) => JSON.parse(d).choices?.[0]?.delta?.content ?? '').join('')).toMatch(/^Echo: hello there/);
    expect(await logOf(streamed.headers.get('x-request-id')!)).toMatchObject({ model: 'sim-chat', requested_model: 'sim-503' });
  });

  it("never falls back after the caller's own error, nor to a model the token may not use", async () => {
    await call('/api/fallbacks/sim-400', { method: 'PUT', json: { fallbacks: ['sim-chat'] } });
    const refused = await chat('sim-400');
    expect(refused.status).toBe(400);
    expect(await logOf(refused.requestId!)).toMatchObject({ model: 'sim-400', requested_model: null });

    const me = (await call('/api/auth/me')).body.user;
    const made = await call('/api/tokens', { method: 'POST', json: { user_id: me.id, name: 'only 503', models: ['sim-503'] } });
    expect(made.status, made.text).toBe(201);
    const limited = await chat('sim-503', made.body.key);
    expect(limited.status).toBe(503);
  });

  it('names a bad field, and a model without fallbacks fails as before', async () => {
    const field = async (model: string, json: unknown) => {
      const r = await call(`/api/fallbacks/${model}`, { method: 'PUT', json });
      expect(r.status, r.text).toBe(400);
      expect(r.body.error.param).toBe('fallbacks');
    };
    await field('sim-chat', { fallbacks: ['sim-chat'] });
    await field('sim-chat', { fallbacks: [] });
    await field('sim-chat', { fallbacks: ['a', 'a'] });
    await field('sim-chat', { fallbacks: ['a', 'b', 'c', 'd', 'e', 'f'] });
    expect((await call('/api/fallbacks/sim-503', { method: 'DELETE' })).body).toEqual({ deleted: true, model: 'sim-503' });
    expect((await call('/api/fallbacks/sim-503', { method: 'DELETE' })).status).toBe(404);
    expect((await chat('sim-503')).status).toBe(503);
  });
});
