// Gemini channels through the real gateway: the official OpenAI client talks to
// the gateway, whose GEMINI_API_KEY channel speaks generateContent,
// streamGenerateContent?alt=sse and batchEmbedContents to the project's
// simulator. Answers and streams, tools across two turns, usage and its charge,
// safety blocks (a 400 content_filter, or finish_reason content_filter), the
// fault models, embeddings (normalised, dimensions, batches of 100), the
// channel test and /v1/models.
import type OpenAI from 'openai';
import { startUpstreamSim, type UpstreamSim } from '@kbchat/upstream-sim';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { costMicros } from '../src/accounts/pricing.js';
import { startTestGateway, type TestGateway } from './helpers.js';
import { apiError, collect, expectRequestId, openaiClient } from './relay-support.js';

const KEY = 'gemini-sim-key';
const GEMINI_MODELS = [
  'gemini-sim',
  'gemini-sim-tools',
  'gemini-sim-safety',
  'gemini-sim-safety-late',
  'gemini-sim-503',
  'gemini-sim-drop',
  'gemini-sim-embed-768',
];
const hi: OpenAI.Chat.Completions.ChatCompletionMessageParam[] = [{ role: 'user', content: 'hello from the openai client' }];
const weather: OpenAI.Chat.Completions.ChatCompletionTool[] = [
  {
    type: 'function',
    function: {
      name: 'get_weather',
      description: 'The weather in a city',
      parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
    },
  },
];
const norm = (v: number[]) => Math.sqrt(v.reduce((n, x) => n + x * x, 0));
const text = (chunks: OpenAI.Chat.Completions.ChatCompletionChunk[]) => chunks.map((c) => c.choices[0]?.delta.content ?? '').join('');

describe('relay to Gemini channels', () => {
  let sim: UpstreamSim;
  /** Streams slowly, so that content reaches the client before gemini-sim-drop cuts the connection. */
  let slow: UpstreamSim;
  let t: TestGateway;
  let client: OpenAI;

  beforeAll(async () => {
    [sim, slow] = await Promise.all([startUpstreamSim({ port: 0, key: KEY }), startUpstreamSim({ port: 0, key: KEY, tokenDelayMs: 30 })]);
    t = await startTestGateway({
      simInstance: sim,
      sim: { key: KEY },
      models: ['sim-chat'],
      env: { GEMINI_API_KEY: KEY, GEMINI_BASE_URL: sim.url, GEMINI_MODELS: GEMINI_MODELS.join(',') },
    });
    client = openaiClient(t);
    const { channels } = t.gw.services;
    await channels.create({
      type: 'gemini',
      name: 'slow',
      base_url: slow.url,
      key: KEY,
      models: ['gemini-slow-drop'],
      model_mapping: { 'gemini-slow-drop': 'gemini-sim-drop' },
    });
    // gemini-retry: unavailable on the preferred channel, answered by the other.
    await channels.create({
      type: 'gemini',
      name: 'unavailable',
      base_url: sim.url,
      key: KEY,
      priority: 10,
      models: ['gemini-retry'],
      model_mapping: { 'gemini-retry': 'gemini-sim-503' },
    });
    await channels.create({
      type: 'gemini',
      name: 'fallback',
      base_url: sim.url,
      key: KEY,
      models: ['gemini-retry'],
      model_mapping: { 'gemini-retry': 'gemini-sim' },
    });
    await channels.create({
      type: 'gemini',
      name: 'wrong key',
      base_url: sim.url,
      key: 'wrong-key',
      models: ['gemini-badkey'],
      model_mapping: { 'gemini-badkey': 'gemini-sim' },
    });
  });
  afterAll(async () => {
    await t?.close();
    await Promise.all([sim?.close(), slow?.close()]);
  });
  beforeEach(() => sim.reset());

  async function logRow(requestId: string) {
    await t.gw.services.ledger.flush();
    const [row] = await t.gw.services.logsStore.list({ requestId }, 0, 10);
    return row!;
  }

  it('makes a channel of GEMINI_API_KEY', () => {
    expect(t.gw.services.registry.all().find((c) => c.name === 'gemini (from environment)')).toMatchObject({ type: 'gemini', models: GEMINI_MODELS });
  });

  it('answers a non-stream chat in OpenAI shape, with usage, charged in the request log', async () => {
    const { data: r, response } = await client.chat.completions
      .create({ model: 'gemini-sim', messages: [{ role: 'system', content: 'Be brief.' }, ...hi] })
      .withResponse();
    expect(r).toMatchObject({ object: 'chat.completion', model: 'gemini-sim' });
    expect(r.choices[0]!.message.content).toMatch(/^Echo: hello from the openai client/);
    expect(r.choices[0]!.finish_reason).toBe('stop');
    expect(r.usage!.completion_tokens).toBeGreaterThan(0);
    const row = await logRow(response.headers.get('x-request-id')!);
    expect(row).toMatchObject({
      status: 200,
      usage_source: 'upstream',
      upstream_model: 'gemini-sim',
      prompt_tokens: r.usage!.prompt_tokens,
      completion_tokens: r.usage!.completion_tokens,
    });
    expect(Number(row.cost)).toBe(costMicros(t.gw.services.prices.priceOf('gemini-sim'), r.usage!.prompt_tokens, r.usage!.completion_tokens));
    expect(Number(row.cost)).toBeGreaterThan(0);
  });

  it('streams OpenAI chunks; the usage chunk only when the client asks', async () => {
    const plain = await collect(await client.chat.completions.create({ model: 'gemini-sim', messages: hi, stream: true }));
    expect(plain.error).toBeUndefined();
    expect(plain.chunks[0]!.choices[0]!.delta.role).toBe('assistant');
    expect(text(plain.chunks)).toMatch(/^Echo: hello from the openai client/);
    expect(plain.chunks.at(-1)!.choices[0]!.finish_reason).toBe('stop');
    expect(plain.chunks.some((c) => c.usage)).toBe(false);

    const { data: s, response } = await client.chat.completions
      .create({ model: 'gemini-sim', messages: hi, stream: true, stream_options: { include_usage: true } })
      .withResponse();
    const withUsage = await collect(s);
    const last = withUsage.chunks.at(-1)!;
    expect(last.choices).toEqual([]);
    expect(last.usage!.completion_tokens).toBeGreaterThan(0);
    const row = await logRow(response.headers.get('x-request-id')!);
    expect(row).toMatchObject({
      status: 200,
      is_stream: 1,
      usage_source: 'upstream',
      prompt_tokens: last.usage!.prompt_tokens,
      completion_tokens: last.usage!.completion_tokens,
    });
  });

  it('calls a tool and answers its result on the second turn', async () => {
    const first = await client.chat.completions.create({
      model: 'gemini-sim-tools',
      messages: [{ role: 'user', content: 'Weather in Paris?' }],
      tools: weather,
    });
    expect(first.choices[0]!.finish_reason).toBe('tool_calls');
    const call = first.choices[0]!.message.tool_calls![0]! as OpenAI.Chat.Completions.ChatCompletionMessageFunctionToolCall;
    expect(call.function.name).toBe('get_weather');

    const streamed = await collect(
      await client.chat.completions.create({
        model: 'gemini-sim-tools',
        messages: [{ role: 'user', content: 'Weather in Paris?' }],
        tools: weather,
        stream: true,
      }),
    );
    const deltas = streamed.chunks.flatMap((c) => c.choices[0]?.delta.tool_calls ?? []);
    expect(deltas).toEqual([{ index: 0, id: expect.any(String), type: 'function', function: { name: 'get_weather', arguments: call.function.arguments } }]);
    expect(streamed.chunks.at(-1)!.choices[0]!.finish_reason).toBe('tool_calls');

    const second = await client.chat.completions.create({
      model: 'gemini-sim-tools',
      tools: weather,
      messages: [{ role: 'user', content: 'Weather in Paris?' }, first.choices[0]!.message, { role: 'tool', tool_call_id: call.id, content: 'sunny, 21 C' }],
    });
    expect(second.choices[0]!.finish_reason).toBe('stop');
    expect(second.choices[0]!.message.content).toMatch(/sunny, 21 C/);
  });

  it('reports a blocked prompt as a 400 content_filter, and a blocked answer as finish_reason content_filter', async () => {
    for (const stream of [false, true]) {
      const err = await apiError(client.chat.completions.create({ model: 'gemini-sim-safety', messages: hi, stream }));
      expect(err.status).toBe(400);
      expect(err.code).toBe('content_filter');
      expect(err.message).toMatch(/blocked the prompt \(blockReason SAFETY\)/);
      expectRequestId((err.error as { message?: string }).message, err.requestID);
    }
    const late = await client.chat.completions.create({ model: 'gemini-sim-safety-late', messages: hi });
    expect(late.choices[0]!.finish_reason).toBe('content_filter');
    const lateStream = await collect(await client.chat.completions.create({ model: 'gemini-sim-safety-late', messages: hi, stream: true }));
    expect(text(lateStream.chunks)).not.toBe('');
    expect(lateStream.chunks.at(-1)!.choices[0]!.finish_reason).toBe('content_filter');
  });

  it('retries an unavailable (503) channel on another one; alone, a clear 503 with the request id', async () => {
    const { data: r, response } = await client.chat.completions.create({ model: 'gemini-retry', messages: hi }).withResponse();
    expect(r.choices[0]!.message.content).toMatch(/^Echo:/);
    expect(await logRow(response.headers.get('x-request-id')!)).toMatchObject({ status: 200, attempts: 2, upstream_model: 'gemini-sim' });

    const err = await apiError(client.chat.completions.create({ model: 'gemini-sim-503', messages: hi, stream: true }));
    expect(err.status).toBe(503);
    expect(err.message).toMatch(/overloaded/i);
    expectRequestId((err.error as { message?: string }).message, err.requestID);
  });

  it("answers Gemini's refusal of the key in OpenAI's wording, without the key", async () => {
    const err = await apiError(client.chat.completions.create({ model: 'gemini-badkey', messages: hi }));
    expect(err.status).toBe(401);
    expect(err.code).toBe('invalid_api_key');
    expect((err.error as { message: string }).message).toMatch(/^Incorrect API key provided: /);
    expect(JSON.stringify(err.error)).not.toContain('wrong-key');
  });

  it('ends a stream the upstream drops after content with the documented error', async () => {
    const { data: s, response } = await client.chat.completions.create({ model: 'gemini-slow-drop', messages: hi, stream: true }).withResponse();
    const dropped = await collect(s);
    expect(text(dropped.chunks)).not.toBe('');
    expect((dropped.error as Error).message).toMatch(/upstream stream ended abruptly/);
    const row = await logRow(response.headers.get('x-request-id')!);
    expect(row).toMatchObject({ status: 502 });
  });

  it('embeds through batchEmbedContents: unit vectors, dimensions, 100 inputs a call', async () => {
    const inputs = Array.from({ length: 150 }, (_, i) => `sentence number ${i}`);
    const { data: r, response } = await client.embeddings.create({ model: 'gemini-sim-embed-768', input: inputs }).withResponse();
    expect(r.data).toHaveLength(150);
    expect(r.data.map((d) => d.index)).toEqual(inputs.map((_, i) => i));
    expect(r.data[0]!.embedding).toHaveLength(768);
    for (const d of r.data) expect(norm(d.embedding)).toBeCloseTo(1, 5);
    expect(r.data[0]!.embedding).not.toEqual(r.data[1]!.embedding);
    expect(sim.stats().byModel['gemini-sim-embed-768']).toBe(2);
    const row = await logRow(response.headers.get('x-request-id')!);
    expect(row).toMatchObject({ status: 200, endpoint: 'embeddings', usage_source: 'local', prompt_tokens: r.usage.prompt_tokens });
    expect(r.usage.prompt_tokens).toBeGreaterThan(0);

    // Cut short by `dimensions`, Gemini's vectors are not unit vectors; the gateway's are.
    const short = await client.embeddings.create({ model: 'gemini-sim-embed-768', input: 'one sentence', dimensions: 64 });
    expect(short.data[0]!.embedding).toHaveLength(64);
    expect(norm(short.data[0]!.embedding)).toBeCloseTo(1, 5);
    // The SDK's default base64 encoding decodes to the same numbers.
    const b64 = await client.embeddings.create({ model: 'gemini-sim-embed-768', input: 'one sentence', dimensions: 64, encoding_format: 'base64' });
    expect(typeof b64.data[0]!.embedding).toBe('string');
  });

  it('lists the models in /v1/models and passes the channel test for chat and embeddings', async () => {
    const models = await client.models.list();
    expect(models.data.find((m) => m.id === 'gemini-sim')).toMatchObject({ owned_by: 'gemini', endpoint: 'chat' });
    expect(models.data.find((m) => m.id === 'gemini-sim-embed-768')).toMatchObject({ owned_by: 'gemini', endpoint: 'embeddings' });
    const id = t.gw.services.registry.all().find((c) => c.name === 'gemini (from environment)')!.id;
    for (const model of ['gemini-sim', 'gemini-sim-embed-768']) {
      const r = await t.api(`/api/channels/${id}/test`, { method: 'POST', json: { model } });
      expect((await r.json()).data[0]).toMatchObject({ model, ok: true, status: 200 });
    }
    const blocked = await t.api(`/api/channels/${id}/test`, { method: 'POST', json: { model: 'gemini-sim-safety' } });
    expect((await blocked.json()).data[0]).toMatchObject({ ok: false, status: 400, error: expect.stringMatching(/blockReason SAFETY/) });
  });
});
