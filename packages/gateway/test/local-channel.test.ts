// The built-in local models as a gateway channel: created at start, listed by
// /v1/models with their facts, relayed like any other channel, free by default,
// tested by the channel test, and absent with LOCAL_MODELS=off.
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { formatQuotesForPrompt } from '@kbchat/local-models';
import { startTestGateway, type TestGateway } from './helpers.js';
import { loadGatewayConfig } from '../src/index.js';

describe('local models channel', () => {
  let t: TestGateway;
  let client: OpenAI;

  beforeAll(async () => {
    t = await startTestGateway({ env: { LOCAL_MODELS: 'on' } });
    client = new OpenAI({ apiKey: 'sk-test-root-token-0123456789', baseURL: t.baseURL, maxRetries: 0 });
  }, 120_000);
  afterAll(async () => t?.close());

  it('creates one channel at start, with no address stored and the models typed', async () => {
    const channels = (await (await t.api('/api/channels')).json()).data as any[];
    const local = channels.filter((c) => c.type === 'local');
    expect(local).toHaveLength(1);
    expect(local[0].models).toEqual(expect.arrayContaining(['local-embed', 'local-extractive']));
    expect(local[0].base_url).toBe('in-process://local-models');
    expect(local[0].options.modelTypes).toMatchObject({ 'local-embed': 'embeddings', 'local-extractive': 'chat' });
  });

  it('lists the local models in /v1/models with what they can do', async () => {
    const models = (await client.models.list()).data as any[];
    const embed = models.find((m) => m.id === 'local-embed');
    const extractive = models.find((m) => m.id === 'local-extractive');
    expect(embed).toMatchObject({ endpoint: 'embeddings', dimensions: 512, supports_tools: false });
    expect(extractive).toMatchObject({ endpoint: 'chat', supports_tools: false });
    expect(extractive.description).toMatch(/extractive/i);
  });

  it('embeds through the relay: unit vectors of 512 dimensions', async () => {
    const r = await client.embeddings.create({ model: 'local-embed', input: ['The cat sat on the mat.', 'Stock markets fell sharply today.'] });
    expect(r.data).toHaveLength(2);
    for (const d of r.data) {
      expect(d.embedding).toHaveLength(512);
      const norm = Math.sqrt(d.embedding.reduce((s, x) => s + x * x, 0));
      expect(Math.abs(norm - 1)).toBeLessThan(1e-3);
    }
  });

  it('an empty input is a 400 naming the field, relayed with a request id', async () => {
    const res = await t.api('/v1/embeddings', { method: 'POST', json: { model: 'local-embed', input: ['fine', ''] } });
    expect(res.status).toBe(400);
    const body = await res.json();
    expect(body.error.message).toMatch(/input/);
    expect(body.error.message).toMatch(/request id: /);
  });

  it('X-Kbchat-Priority reaches the local model server (which checks it), and no other upstream', async () => {
    const embed = (model: string, priority: string) =>
      t.api('/v1/embeddings', { method: 'POST', json: { model, input: ['one chunk to index'] }, headers: { 'X-Kbchat-Priority': priority } });
    expect((await embed('local-embed', 'bulk')).status).toBe(200);
    // The gateway does not read the value itself: the local server's 400 shows the header got there.
    const bad = await embed('local-embed', 'urgent');
    expect(bad.status).toBe(400);
    const error = (await bad.json()).error;
    expect(error.type).toBe('invalid_request_error');
    expect(error.message).toMatch(/X-Kbchat-Priority.*'bulk' or 'interactive'.*"urgent"/);
    // An OpenAI-type upstream (the simulator's channel) gets the request without it.
    const sim = await embed('sim-embed-384', 'bulk');
    expect(sim.status).toBe(200);
    expect(t.sim.stats().lastRequest).toMatchObject({ path: '/v1/embeddings', model: 'sim-embed-384', kbchatPriority: null });
  });

  it("the local server's limits are the caller's errors with their number, not an upstream failure", async () => {
    // 9 MB: under the gateway's 64 MiB edge, over the local server's 8 MiB.
    const big = await t.api('/v1/chat/completions', {
      method: 'POST',
      json: { model: 'local-extractive', messages: [{ role: 'user', content: 'x'.repeat(9 * 1024 * 1024) }] },
    });
    expect(big.status).toBe(413);
    const bigError = (await big.json()).error;
    expect(bigError).toMatchObject({ type: 'invalid_request_error', code: 'request_too_large' });
    expect(bigError.message).toMatch(/8388608 bytes/);

    const long = await t.api('/v1/embeddings', { method: 'POST', json: { model: 'local-embed', input: 'word '.repeat(40_000) } });
    expect(long.status).toBeGreaterThanOrEqual(400);
    expect(long.status).toBeLessThan(500);
    const longError = (await long.json()).error;
    expect(longError.type).toBe('invalid_request_error');
    expect(longError.message).toMatch(/32768/);
  });

  it('answers from quotes through the relay, streamed, and charges nothing', async () => {
    const prompt = formatQuotesForPrompt(
      [
        { id: 'a1', sourceName: 'guide.md', text: 'The office opens at 9 am on weekdays. Parking is free for visitors.' },
        { id: 'b2', sourceName: 'menu.md', text: 'The canteen serves pasta on Fridays.' },
      ],
      'When does the office open?',
    );
    const stream = await client.chat.completions.create({
      model: 'local-extractive',
      messages: [{ role: 'user', content: prompt }],
      stream: true,
      stream_options: { include_usage: true },
    });
    let text = '';
    let usage: any;
    for await (const chunk of stream) {
      text += chunk.choices[0]?.delta?.content ?? '';
      if (chunk.usage) usage = chunk.usage;
    }
    expect(text).toMatch(/9 am/);
    expect(text).toMatch(/\[a1\]/);
    expect(text).not.toMatch(/pasta/);
    expect(usage.prompt_tokens).toBeGreaterThan(10);
    expect(usage.completion_tokens).toBeGreaterThan(0);
    // The log row is written in batches: wait for it.
    await new Promise((r) => setTimeout(r, 300));
    const logs = (await (await t.api('/api/logs?model=local-extractive')).json()).data as any[];
    expect(logs.length).toBeGreaterThan(0);
    expect(logs[0]).toMatchObject({ status: 200, cost: 0 });
    expect(logs[0].prompt_tokens).toBeGreaterThan(10);
  });

  it('tools are refused with a 400 (the model says it does not support them)', async () => {
    const err = await client.chat.completions
      .create({
        model: 'local-extractive',
        messages: [{ role: 'user', content: 'hi' }],
        tools: [{ type: 'function', function: { name: 'f', parameters: { type: 'object', properties: {} } } }],
      })
      .catch((e) => e);
    expect(err.status).toBe(400);
    expect(err.message).toMatch(/tools/);
  });

  it('the channel test covers both models', async () => {
    const channels = (await (await t.api('/api/channels')).json()).data as any[];
    const id = channels.find((c) => c.type === 'local').id;
    const results = (await (await t.api(`/api/channels/${id}/test`, { method: 'POST' })).json()).data as any[];
    expect(results.map((r) => r.model).sort()).toEqual(expect.arrayContaining(['local-embed', 'local-extractive']));
    for (const r of results) expect(r.ok, JSON.stringify(r)).toBe(true);
  });

  it('keeps what the operator set when synced again; LOCAL_MODELS=off creates and serves nothing', async () => {
    const channels = (await (await t.api('/api/channels')).json()).data as any[];
    const id = channels.find((c) => c.type === 'local').id;
    expect((await t.api(`/api/channels/${id}`, { method: 'PATCH', json: { priority: 5 } })).status).toBe(200);
    const again = await t.gw.services.channels.syncLocalModels([
      { id: 'local-embed', kind: 'embeddings' },
      { id: 'local-extractive', kind: 'chat' },
    ]);
    expect(again).toMatch(/serves local-embed, local-extractive/);
    expect((await (await t.api(`/api/channels/${id}`)).json()).priority).toBe(5);

    const off = await startTestGateway({ simInstance: t.sim });
    try {
      const offChannels = (await (await off.api('/api/channels')).json()).data as any[];
      expect(offChannels.some((c) => c.type === 'local')).toBe(false);
      const res = await off.api('/v1/embeddings', { method: 'POST', json: { model: 'local-embed', input: 'x' } });
      expect(res.status).toBe(503);
    } finally {
      await off.close();
    }
  });
});

it('LOCAL_EMBED_PRIORITY: a typo is refused at start (naming the variable and the values), not taken for "on"', () => {
  expect(() => loadGatewayConfig({ LOCAL_EMBED_PRIORITY: 'of' })).toThrow('LOCAL_EMBED_PRIORITY must be on or off (got "of")');
  expect(loadGatewayConfig({ LOCAL_EMBED_PRIORITY: 'off' }).localEmbedPriority).toBe(false);
  expect(loadGatewayConfig({}).localEmbedPriority).toBe(true);
});
