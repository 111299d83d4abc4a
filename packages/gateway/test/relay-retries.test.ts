// Retries across channels, timeouts, and auto-disable / re-enable. Two
// simulators stand for two providers serving the same gateway model names;
// model mapping with a ':' suffix (ignored by the simulator, counted as sent)
// makes every upstream request of a test countable on its own.
import type OpenAI from 'openai';
import { startUpstreamSim, type UpstreamSim } from '@kbchat/upstream-sim';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { startTestGateway, type TestGateway } from './helpers.js';
import { apiError, collect, expectRequestId, openaiClient, simCount } from './relay-support.js';

const hi: OpenAI.Chat.Completions.ChatCompletionMessageParam[] = [{ role: 'user', content: 'retry me' }];
const TIMEOUT_MS = 1000;

describe('relay retries, timeouts and auto-disable', () => {
  let t: TestGateway;
  let client: OpenAI;
  /** Second provider, lower priority. */
  let second: UpstreamSim;
  /** Streams slowly (so content reaches the client before sim-drop cuts the connection). */
  let slow: UpstreamSim;
  /** Allows one request a minute, then answers 429. */
  let limited: UpstreamSim;
  let envChannelId: number;

  beforeAll(async () => {
    t = await startTestGateway({
      models: ['sim-chat', 'sim-hang', 'sim-503', 'sim-flaky-4'],
      config: { disableThreshold: 3, upstreamTimeoutMs: TIMEOUT_MS },
    });
    client = openaiClient(t);
    [second, slow, limited] = await Promise.all([
      startUpstreamSim({ port: 0 }),
      startUpstreamSim({ port: 0, tokenDelayMs: 30 }),
      startUpstreamSim({ port: 0, rpm: 1 }),
    ]);
    const { channels, registry } = t.gw.services;
    envChannelId = registry.all()[0]!.id;
    await channels.create({
      type: 'openai',
      name: 'primary',
      base_url: `${t.sim.url}/v1`,
      key: 'k',
      priority: 10,
      models: ['retry-503', 'both-503', 'both-400', 'stream-retry'],
      model_mapping: { 'retry-503': 'sim-503:retry', 'both-503': 'sim-503:both', 'both-400': 'sim-400:both', 'stream-retry': 'sim-503:stream' },
    });
    await channels.create({
      type: 'openai',
      name: 'secondary',
      base_url: `${second.url}/v1`,
      key: 'k',
      priority: 0,
      weight: 3,
      models: ['retry-503', 'both-503', 'both-400', 'stream-retry', 'drop-model', 'rate-model', 'embed-any', 'rerank-any', 'weighted'],
      model_mapping: {
        'embed-any': 'sim-embed-384:any',
        'rerank-any': 'sim-rerank:any',
        weighted: 'sim-chat:w3',
        'retry-503': 'sim-chat:retry',
        'both-503': 'sim-503:both',
        'both-400': 'sim-400:both',
        'stream-retry': 'sim-chat:stream',
        'drop-model': 'sim-chat:drop',
        'rate-model': 'sim-chat:rate',
      },
    });
    // Nothing listens there: a connection failure on the highest priority.
    await channels.create({ type: 'openai', name: 'dead', base_url: 'http://127.0.0.1:9/v1', key: 'k', priority: 20, models: ['embed-any', 'rerank-any'] });
    // Same tier as the secondary (weight 3) for 'weighted'.
    await channels.create({
      type: 'openai',
      name: 'light',
      base_url: `${t.sim.url}/v1`,
      key: 'k',
      priority: 0,
      weight: 1,
      models: ['weighted'],
      model_mapping: { weighted: 'sim-chat:w1' },
    });
    await channels.create({
      type: 'openai',
      name: 'slow',
      base_url: `${slow.url}/v1`,
      key: 'k',
      priority: 10,
      models: ['drop-model'],
      model_mapping: { 'drop-model': 'sim-drop' },
    });
    await channels.create({
      type: 'openai',
      name: 'limited',
      base_url: `${limited.url}/v1`,
      key: 'k',
      priority: 10,
      models: ['rate-model'],
      model_mapping: { 'rate-model': 'sim-chat:limited' },
    });
  });
  afterAll(async () => {
    await t?.close();
    await Promise.all([second?.close(), slow?.close(), limited?.close()]);
  });

  async function logRow(requestId: string) {
    await t.gw.services.ledger.flush();
    const [row] = await t.gw.services.logsStore.list({ requestId }, 0, 10);
    return row!;
  }

  describe('retries', () => {
    it('a 503 on the first channel is retried on the other one, invisibly', async () => {
      const { data: r, response } = await client.chat.completions.create({ model: 'retry-503', messages: hi }).withResponse();
      expect(r.choices[0]!.message.content).toMatch(/^Echo: retry me/);
      expect(simCount(t.sim, 'sim-503:retry')).toBe(1);
      expect(simCount(second, 'sim-chat:retry')).toBe(1);
      const row = await logRow(response.headers.get('x-request-id')!);
      expect(row).toMatchObject({ status: 200, attempts: 2, upstream_model: 'sim-chat:retry' });
    });

    it('tries each channel once, never the same one twice, and reports the last failure', async () => {
      const err = await apiError(client.chat.completions.create({ model: 'both-503', messages: hi }));
      expect(err.status).toBe(503);
      expect(err.code).toBe('bad_response_status_code');
      expect((err.error as any).message).toMatch(/^The server is overloaded or not ready yet\. \(request id: /);
      expectRequestId((err.error as any).message, err.requestID);
      // Two channels, three attempts allowed: two requests upstream, one each.
      expect(simCount(t.sim, 'sim-503:both')).toBe(1);
      expect(simCount(second, 'sim-503:both')).toBe(1);
      expect((await logRow(err.requestID!)).attempts).toBe(2);
    });

    it('never retries a 400', async () => {
      const err = await apiError(client.chat.completions.create({ model: 'both-400', messages: hi }));
      expect(err.status).toBe(400);
      expect(err.code).toBe('bad_response_status_code');
      expect((err.error as any).message).toMatch(/^Invalid 'messages\[0\]\.role': unknown role/);
      expect(simCount(t.sim, 'sim-400:both') + simCount(second, 'sim-400:both')).toBe(1);
      expect(simCount(t.sim, 'sim-400:both')).toBe(1);
    });

    it('retries a 429 elsewhere without holding it against the channel', async () => {
      const first = await client.chat.completions.create({ model: 'rate-model', messages: hi });
      expect(first.choices[0]!.message.content).toMatch(/^Echo:/);
      expect(simCount(limited, 'sim-chat:limited')).toBe(1);
      for (let i = 0; i < 3; i++) {
        const r = await client.chat.completions.create({ model: 'rate-model', messages: hi });
        expect(r.choices[0]!.message.content).toMatch(/^Echo:/);
      }
      expect(simCount(second, 'sim-chat:rate')).toBe(3);
      const limitedChannel = t.gw.services.registry.all().find((c) => c.name === 'limited')!;
      expect(t.gw.services.registry.isModelDisabled(limitedChannel.id, 'rate-model')).toBeUndefined();
    });

    it('a stream is retried on another channel while nothing has reached the client', async () => {
      const { data: stream, response } = await client.chat.completions.create({ model: 'stream-retry', messages: hi, stream: true }).withResponse();
      const { chunks, error } = await collect(stream);
      expect(error).toBeUndefined();
      expect(chunks.map((c) => c.choices[0]?.delta.content ?? '').join('')).toMatch(/^Echo: retry me/);
      expect(simCount(t.sim, 'sim-503:stream')).toBe(1);
      expect(simCount(second, 'sim-chat:stream')).toBe(1);
      expect(await logRow(response.headers.get('x-request-id')!)).toMatchObject({ status: 200, attempts: 2, is_stream: 1 });
    });

    it('a stream that breaks after content reached the client ends with an error event, and is not retried', async () => {
      const { data: stream, response } = await client.chat.completions.create({ model: 'drop-model', messages: hi, stream: true }).withResponse();
      const requestId = response.headers.get('x-request-id');
      const { chunks, error } = await collect(stream);
      // The partial answer arrived first: role, then three words.
      expect(chunks.map((c) => c.choices[0]?.delta.content ?? '').join('')).toBe('Echo: retry me ');
      expect(error).toBeDefined();
      const message = (error as { error?: { message?: string } }).error?.message;
      expect(message).toMatch(/^upstream stream ended abruptly: /);
      expectRequestId(message, requestId);
      expect(simCount(slow, 'sim-drop')).toBe(1);
      expect(simCount(second, 'sim-chat:drop')).toBe(0);
      const row = await logRow(requestId!);
      expect(row).toMatchObject({ status: 502, attempts: 1, is_stream: 1 });
      expect(row.error).toMatch(/^upstream stream ended abruptly/);

      // Broken streams count against the channel: two more (three in all) switch the model off there.
      for (let i = 0; i < 2; i++) await collect(await client.chat.completions.create({ model: 'drop-model', messages: hi, stream: true }));
      const { registry } = t.gw.services;
      const slowChannel = registry.all().find((c) => c.name === 'slow')!;
      await vi.waitFor(() => expect(registry.isModelDisabled(slowChannel.id, 'drop-model')?.reason).toMatch(/upstream stream ended abruptly/));
    });

    it('embeddings and rerank are retried past a channel that cannot be reached', async () => {
      const e = await client.embeddings.create({ model: 'embed-any', input: 'hello', encoding_format: 'float' });
      expect(e.data[0]!.embedding).toHaveLength(384);
      expect(simCount(second, 'sim-embed-384:any')).toBe(1);
      const res = await t.api('/v1/rerank', { method: 'POST', json: { model: 'rerank-any', query: 'tea', documents: ['coffee', 'tea'] } });
      expect(res.status).toBe(200);
      expect(((await res.json()) as any).results[0].index).toBe(1);
      const row = await logRow(res.headers.get('x-request-id')!);
      expect(row).toMatchObject({ status: 200, attempts: 2, endpoint: 'rerank' });
    });

    it('spreads load by weight inside a priority tier', async () => {
      const n = 200;
      for (let i = 0; i < n; i += 20) {
        await Promise.all(Array.from({ length: 20 }, () => client.chat.completions.create({ model: 'weighted', messages: hi })));
      }
      const heavy = simCount(second, 'sim-chat:w3');
      expect(heavy + simCount(t.sim, 'sim-chat:w1')).toBe(n);
      // Expected 150 of 200 (sd about 6).
      expect(heavy).toBeGreaterThan(115);
      expect(heavy).toBeLessThan(185);
    });
  });

  describe('timeouts', () => {
    it('an upstream that never answers is 504 upstream_timeout after upstreamTimeoutMs', async () => {
      const started = Date.now();
      const err = await apiError(client.chat.completions.create({ model: 'sim-hang', messages: hi }));
      const took = Date.now() - started;
      expect(err.status).toBe(504);
      expect(err.code).toBe('upstream_timeout');
      expect((err.error as any).message).toMatch(new RegExp(`^upstream did not answer within ${TIMEOUT_MS} ms \\(request id: `));
      expectRequestId((err.error as any).message, err.requestID);
      expect(took).toBeGreaterThanOrEqual(TIMEOUT_MS - 50);
      expect(took).toBeLessThan(TIMEOUT_MS * 5);
    });

    it('also for streams, before the first byte', async () => {
      const err = await apiError(client.chat.completions.create({ model: 'sim-hang', messages: hi, stream: true }));
      expect(err.status).toBe(504);
      expect(err.code).toBe('upstream_timeout');
    });
  });

  describe('auto-disable and re-enable', () => {
    /** The stored auto-disable row, which every gateway process reads at refresh. */
    async function stateRow(model: string) {
      return t.gw.services.store.db
        .selectFrom('channel_model_state')
        .selectAll()
        .where('channel_id', '=', envChannelId)
        .where('model', '=', model)
        .executeTakeFirst();
    }

    it('disables a channel+model after 3 failures in a row, with the reason recorded', async () => {
      const { registry } = t.gw.services;
      for (let i = 1; i <= 3; i++) {
        expect(registry.isModelDisabled(envChannelId, 'sim-503'), `before failure ${i}`).toBeUndefined();
        expect((await apiError(client.chat.completions.create({ model: 'sim-503', messages: hi }))).status).toBe(503);
      }
      const disabled = registry.isModelDisabled(envChannelId, 'sim-503');
      expect(disabled?.reason).toMatch(/^auto-disabled after 3 failures in 60 s; last error: The server is overloaded/);
      await vi.waitFor(async () => expect((await stateRow('sim-503'))?.reason).toBe(disabled!.reason));
      // Only that model: the channel still serves the others.
      expect(registry.isModelDisabled(envChannelId, 'sim-chat')).toBeUndefined();
      expect((await client.chat.completions.create({ model: 'sim-chat', messages: hi })).object).toBe('chat.completion');

      // Now nothing serves it, and the upstream is spared.
      const seen = simCount(t.sim, 'sim-503');
      const err = await apiError(client.chat.completions.create({ model: 'sim-503', messages: hi }));
      expect(err.status).toBe(503);
      expect(err.code).toBe('model_not_found');
      expect(simCount(t.sim, 'sim-503')).toBe(seen);
      expect((await client.models.list()).data.map((m) => m.id)).not.toContain('sim-503');
    });

    it('the periodic test re-enables a model only once it answers again', async () => {
      const { registry, channels } = t.gw.services;
      // sim-flaky-4 answers 503 to its first four requests.
      for (let i = 0; i < 3; i++) await apiError(client.chat.completions.create({ model: 'sim-flaky-4', messages: hi }));
      expect(registry.isModelDisabled(envChannelId, 'sim-flaky-4')).toBeDefined();
      await vi.waitFor(async () => expect(await stateRow('sim-flaky-4')).toBeDefined());

      const flaky = (r: Awaited<ReturnType<typeof channels.retestDisabled>>) => r.find((x) => x.model === 'sim-flaky-4');
      const stillDown = flaky(await channels.retestDisabled()); // 4th request upstream: 503 again
      expect(stillDown).toMatchObject({ channel_id: envChannelId, enabled: false });
      expect(stillDown!.error).toMatch(/overloaded/);
      expect(registry.isModelDisabled(envChannelId, 'sim-flaky-4')).toBeDefined();

      const back = flaky(await channels.retestDisabled()); // 5th: it answers
      expect(back).toMatchObject({ channel_id: envChannelId, enabled: true });
      expect(registry.isModelDisabled(envChannelId, 'sim-flaky-4')).toBeUndefined();
      expect(await stateRow('sim-flaky-4')).toBeUndefined();
      const r = await client.chat.completions.create({ model: 'sim-flaky-4', messages: hi });
      expect(r.choices[0]!.message.content).toMatch(/^Echo: retry me/);

      // sim-503 still fails its test and stays disabled.
      expect((await channels.retestDisabled()).find((x) => x.model === 'sim-503')).toMatchObject({ enabled: false });
      expect(registry.isModelDisabled(envChannelId, 'sim-503')).toBeDefined();
    });
  });
});
