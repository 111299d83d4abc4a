// Streaming edge cases: an upstream stream with no content (answered by the
// exact non-stream error), SSE lines of megabytes, channels whose upstream
// rejects stream_options, usage counted locally, and clients that go away.
import type OpenAI from 'openai';
import { startUpstreamSim, type UpstreamSim } from '@kbchat/upstream-sim';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { readSse, startTestGateway, type TestGateway } from './helpers.js';
import { apiError, collect, expectRequestId, openaiClient, simCount } from './relay-support.js';

type Chunk = OpenAI.Chat.Completions.ChatCompletionChunk;

const hi: OpenAI.Chat.Completions.ChatCompletionMessageParam[] = [{ role: 'user', content: 'tell me something' }];
const text = (chunks: Chunk[]) => chunks.map((c) => c.choices[0]?.delta.content ?? '').join('');

describe('relay streams', () => {
  let t: TestGateway;
  let client: OpenAI;
  /** Streams one word every 50 ms, and makes sim-slow wait 2 s. */
  let slow: UpstreamSim;

  beforeAll(async () => {
    t = await startTestGateway({
      models: ['sim-chat', 'sim-strict', 'sim-big-3000000', 'sim-nousage'],
      config: { disableThreshold: 2 },
    });
    client = openaiClient(t);
    slow = await startUpstreamSim({ port: 0, tokenDelayMs: 50, slowMs: 2000 });
    const { channels } = t.gw.services;
    // An upstream that rejects stream_options: the channel says so.
    await channels.create({
      type: 'openai',
      name: 'no stream_options',
      base_url: `${t.sim.url}/v1`,
      key: 'k',
      models: ['sim-no-stream-options'],
      options: { streamUsage: false },
    });
    await channels.create({
      type: 'openai',
      name: 'slow',
      base_url: `${slow.url}/v1`,
      key: 'k',
      models: ['slow-chat', 'sim-slow'],
      model_mapping: { 'slow-chat': 'sim-chat' },
      priority: 10,
    });
    // Where sim-slow would be retried if an abort counted as a channel failure.
    await channels.create({ type: 'openai', name: 'slow backup', base_url: `${t.sim.url}/v1`, key: 'k', models: ['sim-slow'], priority: 0 });
  });
  afterAll(async () => {
    await t?.close();
    await slow?.close();
  });

  async function logRow(requestId: string) {
    await t.gw.services.ledger.flush();
    const [row] = await t.gw.services.logsStore.list({ requestId }, 0, 10);
    return row!;
  }

  describe('an upstream stream with no content', () => {
    it('is asked again with stream=false, and the client gets that exact error inside the stream', async () => {
      const before = simCount(t.sim, 'sim-strict');
      const { data: stream, response } = await client.chat.completions
        .create({ model: 'sim-strict', messages: hi, temperature: 0, stream: true })
        .withResponse();
      expect(response.status).toBe(200);
      expect(response.headers.get('content-type')).toMatch(/^text\/event-stream/);
      const { chunks, error } = await collect(stream);
      expect(chunks).toEqual([]);
      const err = error as { error?: { message?: string; code?: string | null; param?: string | null } };
      expect(err.error?.message).toMatch(/^Invalid parameter: temperature must be greater than 0 \(request id: /);
      expect(err.error?.code).toBe('bad_response_status_code');
      expectRequestId(err.error?.message, response.headers.get('x-request-id'));
      // One stream, then one non-stream request, and nothing more.
      expect(simCount(t.sim, 'sim-strict') - before).toBe(2);
      const last = t.sim.stats().lastBody['sim-strict'] as Record<string, unknown>;
      expect(last.stream).toBe(false);
      expect(last).not.toHaveProperty('stream_options');
      const row = await logRow(response.headers.get('x-request-id')!);
      expect(row).toMatchObject({ status: 400, is_stream: 1 });
      expect(row.error).toBe('Invalid parameter: temperature must be greater than 0');
    });

    it('streams normally with a valid temperature', async () => {
      const before = simCount(t.sim, 'sim-strict');
      const { chunks, error } = await collect(await client.chat.completions.create({ model: 'sim-strict', messages: hi, temperature: 0.7, stream: true }));
      expect(error).toBeUndefined();
      expect(text(chunks)).toMatch(/^Echo: tell me something/);
      expect(chunks.at(-1)!.choices[0]!.finish_reason).toBe('stop');
      expect(simCount(t.sim, 'sim-strict') - before).toBe(1);
    });

    it('non-streamed, the same parameter is a plain 400 with the upstream message', async () => {
      const err = await apiError(client.chat.completions.create({ model: 'sim-strict', messages: hi, temperature: 0 }));
      expect(err.status).toBe(400);
      expect((err.error as any).message).toMatch(/^Invalid parameter: temperature must be greater than 0 \(request id: /);
    });
  });

  describe('long SSE lines', () => {
    it('passes a 3,000,000-character content chunk intact through the SDK', async () => {
      const { chunks, error } = await collect(await client.chat.completions.create({ model: 'sim-big-3000000', messages: hi, stream: true }));
      expect(error).toBeUndefined();
      const big = chunks.filter((c) => (c.choices[0]?.delta.content ?? '').length > 0);
      expect(big).toHaveLength(1);
      const content = big[0]!.choices[0]!.delta.content!;
      expect(content.length).toBe(3_000_000);
      expect(content).toBe('abcdefghij'.repeat(300_000));
      expect(chunks.at(-1)!.choices[0]!.finish_reason).toBe('stop');
    });

    it('as one data line of the raw stream', async () => {
      const res = await t.api('/v1/chat/completions', { method: 'POST', json: { model: 'sim-big-3000000', messages: hi, stream: true } });
      const { data, done } = await readSse(res);
      expect(done).toBe(true);
      const longest = data.reduce((a, b) => (b.length > a.length ? b : a), '');
      expect(longest.length).toBeGreaterThan(3_000_000);
      expect(JSON.parse(longest).choices[0].delta.content.length).toBe(3_000_000);
    });
  });

  describe('usage', () => {
    it('a channel with streamUsage: false sends no stream_options, and include_usage is still answered, counted locally', async () => {
      const { data: stream, response } = await client.chat.completions
        .create({ model: 'sim-no-stream-options', messages: hi, stream: true, stream_options: { include_usage: true } })
        .withResponse();
      const { chunks, error } = await collect(stream);
      expect(error).toBeUndefined();
      expect(t.sim.stats().lastBody['sim-no-stream-options']).not.toHaveProperty('stream_options');
      expect(text(chunks)).toMatch(/^Echo: tell me something/);
      const usage = chunks.at(-1)!;
      expect(usage.choices).toEqual([]);
      expect(usage.usage!.prompt_tokens).toBeGreaterThan(0);
      expect(usage.usage!.completion_tokens).toBeGreaterThan(0);
      expect(usage.usage!.total_tokens).toBe(usage.usage!.prompt_tokens + usage.usage!.completion_tokens);
      expect(usage.id).toBe(chunks[0]!.id);
      const row = await logRow(response.headers.get('x-request-id')!);
      expect(row).toMatchObject({ status: 200, usage_source: 'local' });
      expect(Number(row.prompt_tokens)).toBe(usage.usage!.prompt_tokens);
      expect(Number(row.completion_tokens)).toBe(usage.usage!.completion_tokens);
    });

    it('and without include_usage there is no usage chunk', async () => {
      const { chunks, error } = await collect(await client.chat.completions.create({ model: 'sim-no-stream-options', messages: hi, stream: true }));
      expect(error).toBeUndefined();
      expect(t.sim.stats().lastBody['sim-no-stream-options']).not.toHaveProperty('stream_options');
      expect(chunks.every((c) => c.choices.length === 1 && !('usage' in c))).toBe(true);
    });

    it('an upstream that reports no usage is billed from local counts (non-stream)', async () => {
      const { data: r, response } = await client.chat.completions.create({ model: 'sim-nousage', messages: hi }).withResponse();
      expect(r.usage).toBeUndefined();
      const row = await logRow(response.headers.get('x-request-id')!);
      expect(row).toMatchObject({ status: 200, usage_source: 'local' });
      expect(Number(row.prompt_tokens)).toBeGreaterThan(0);
      expect(Number(row.completion_tokens)).toBeGreaterThan(0);
      expect(Number(row.cost)).toBeGreaterThan(0);
    });

    it('and streamed, with a local usage chunk for a client that asked', async () => {
      const { data: stream, response } = await client.chat.completions
        .create({ model: 'sim-nousage', messages: hi, stream: true, stream_options: { include_usage: true } })
        .withResponse();
      const { chunks } = await collect(stream);
      const usage = chunks.at(-1)!.usage!;
      expect(usage.completion_tokens).toBeGreaterThan(0);
      const row = await logRow(response.headers.get('x-request-id')!);
      expect(row).toMatchObject({ usage_source: 'local', completion_tokens: usage.completion_tokens });
      // Every streamed chunk is counted: the same answer non-stream counts the same.
      const { response: plain } = await client.chat.completions.create({ model: 'sim-nousage', messages: hi }).withResponse();
      expect(Number((await logRow(plain.headers.get('x-request-id')!)).completion_tokens)).toBe(usage.completion_tokens);
    });
  });

  describe('clients that go away', () => {
    it('an abort mid-stream does not hurt the gateway: the next request works', async () => {
      const controller = new AbortController();
      const res = await t.api('/v1/chat/completions', { method: 'POST', json: { model: 'slow-chat', messages: hi, stream: true }, signal: controller.signal });
      const requestId = res.headers.get('x-request-id')!;
      const reader = res.body!.getReader();
      let got = '';
      while (!got.includes('"content":"Echo: "')) got += new TextDecoder().decode((await reader.read()).value);
      controller.abort();
      await reader.closed.catch(() => {});

      const { chunks, error } = await collect(await client.chat.completions.create({ model: 'slow-chat', messages: hi, stream: true }));
      expect(error).toBeUndefined();
      expect(text(chunks)).toMatch(/^Echo: tell me something/);
      // The aborted request is logged as the client's doing, not the upstream's.
      await vi.waitFor(async () => expect(await logRow(requestId)).toMatchObject({ status: 499, is_stream: 1 }));
    });

    it('aborts before the first byte are not held against the channel, nor retried elsewhere', async () => {
      const slowChannel = t.gw.services.registry.all().find((c) => c.name === 'slow')!;
      for (let i = 0; i < 3; i++) {
        const controller = new AbortController();
        const pending = t.api('/v1/chat/completions', {
          method: 'POST',
          json: { model: 'sim-slow', messages: hi, stream: i % 2 === 0 },
          signal: controller.signal,
        });
        await vi.waitFor(() => expect(simCount(slow, 'sim-slow')).toBe(i + 1));
        controller.abort();
        await pending.catch(() => {});
      }
      await vi.waitFor(async () => {
        await t.gw.services.ledger.flush();
        const rows = await t.gw.services.logsStore.list({ model: 'sim-slow' }, 0, 10);
        expect(rows.map((r) => [r.status, r.attempts, r.channel_id])).toEqual(Array(3).fill([499, 1, slowChannel.id]));
      });
      // Two failures would have disabled it (disableThreshold 2).
      expect(t.gw.services.registry.disabledModels()).toEqual([]);
      expect(simCount(slow, 'sim-slow')).toBe(3);
    });
  });
});
