// Anthropic channels through the real gateway: the official OpenAI client talks
// to the gateway, whose channels speak Anthropic's Messages API to the
// project's simulator. Answers and streams in OpenAI's shapes, tools across two
// turns, usage and its charge in the request log, the fault models (529
// retried elsewhere or a clear 503, 401 wording, a dropped stream, an error
// event), <PREFIX>_TYPE, ANTHROPIC_API_KEY, the channel test and /v1/models.
import type OpenAI from 'openai';
import { startUpstreamSim, type UpstreamSim } from '@kbchat/upstream-sim';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { costMicros } from '../src/accounts/pricing.js';
import { startTestGateway, type TestGateway } from './helpers.js';
import { apiError, collect, expectRequestId, openaiClient } from './relay-support.js';

const KEY = 'sk-ant-sim-key';
const CLAUDE_MODELS = ['claude-sim', 'claude-sim-tools', 'claude-sim-529', 'claude-sim-drop', 'claude-sim-stream-error'];
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

describe('relay to Anthropic channels', () => {
  let sim: UpstreamSim;
  /** Streams slowly, so that content reaches the client before claude-sim-drop cuts the connection. */
  let slow: UpstreamSim;
  let t: TestGateway;
  let client: OpenAI;

  beforeAll(async () => {
    sim = await startUpstreamSim({ port: 0, key: KEY });
    t = await startTestGateway({
      simInstance: sim,
      sim: { key: KEY },
      config: { disableThreshold: 2 },
      models: ['sim-chat'],
      env: {
        // Any prefix with _TYPE=anthropic: a Claude proxy, or a second Anthropic key.
        CLAUDE_API_KEY: KEY,
        CLAUDE_BASE_URL: sim.url,
        CLAUDE_TYPE: 'anthropic',
        CLAUDE_MODELS: CLAUDE_MODELS.join(','),
        // The preset: the key alone names the provider (its base URL pointed at the simulator here).
        ANTHROPIC_API_KEY: KEY,
        ANTHROPIC_BASE_URL: sim.url,
        // A prefix whose _TYPE is not a wire format makes no channel.
        ODD_API_KEY: KEY,
        ODD_BASE_URL: 'http://127.0.0.1:9',
        ODD_TYPE: 'cohere',
        ODD_MODELS: 'odd-model',
      },
    });
    client = openaiClient(t);
    slow = await startUpstreamSim({ port: 0, key: KEY, tokenDelayMs: 30 });
    const { channels } = t.gw.services;
    // claude-retry: overloaded on the preferred channel, answered by the other.
    await channels.create({
      type: 'anthropic',
      name: 'overloaded',
      base_url: t.sim.url,
      key: KEY,
      priority: 10,
      models: ['claude-retry'],
      model_mapping: { 'claude-retry': 'claude-sim-529' },
    });
    await channels.create({
      type: 'anthropic',
      name: 'fallback',
      base_url: t.sim.url,
      key: KEY,
      priority: 0,
      models: ['claude-retry'],
      model_mapping: { 'claude-retry': 'claude-sim' },
    });
    await channels.create({
      type: 'anthropic',
      name: 'slow',
      base_url: slow.url,
      key: KEY,
      models: ['claude-slow-drop', 'claude-drop-health'],
      model_mapping: { 'claude-slow-drop': 'claude-sim-drop', 'claude-drop-health': 'claude-sim-drop' },
    });
    await channels.create({
      type: 'anthropic',
      name: 'wrong key',
      base_url: t.sim.url,
      key: 'sk-ant-wrong',
      models: ['claude-badkey'],
      model_mapping: { 'claude-badkey': 'claude-sim' },
    });
  });
  afterAll(async () => {
    await t?.close();
    await Promise.all([sim?.close(), slow?.close()]);
  });
  beforeEach(() => t.sim.reset());

  async function logRow(requestId: string) {
    await t.gw.services.ledger.flush();
    const [row] = await t.gw.services.logsStore.list({ requestId }, 0, 10);
    return row!;
  }

  it('makes channels from <PREFIX>_TYPE=anthropic and ANTHROPIC_API_KEY, and none for an unknown _TYPE', () => {
    const all = t.gw.services.registry.all();
    expect(all.find((c) => c.name === 'claude (from environment)')).toMatchObject({ type: 'anthropic', models: CLAUDE_MODELS });
    expect(all.find((c) => c.name === 'anthropic (from environment)')).toMatchObject({
      type: 'anthropic',
      models: ['claude-sonnet-4-5', 'claude-haiku-4-5', 'claude-opus-4-1'],
    });
    expect(all.some((c) => c.name.startsWith('odd'))).toBe(false);
    expect(t.gw.services.startupNotes.join('\n')).toContain('ODD_API_KEY: skipped, ODD_TYPE must be one of openai, anthropic, gemini (got "cohere")');
  });

  it('answers a non-stream chat in OpenAI shape, with usage, charged in the request log', async () => {
    const { data: r, response } = await client.chat.completions.create({ model: 'claude-sim', messages: hi, max_tokens: 64 }).withResponse();
    expect(r.object).toBe('chat.completion');
    expect(r.model).toBe('claude-sim');
    expect(r.choices[0]!.message.content).toMatch(/^Echo: hello from the openai client/);
    expect(r.choices[0]!.finish_reason).toBe('stop');
    expect(r.usage!.prompt_tokens).toBeGreaterThan(0);
    expect(r.usage!.completion_tokens).toBeGreaterThan(0);
    expect(r.usage!.total_tokens).toBe(r.usage!.prompt_tokens + r.usage!.completion_tokens);
    const row = await logRow(response.headers.get('x-request-id')!);
    expect(row).toMatchObject({
      status: 200,
      channel_id: expect.any(Number),
      upstream_model: 'claude-sim',
      usage_source: 'upstream',
      prompt_tokens: r.usage!.prompt_tokens,
      completion_tokens: r.usage!.completion_tokens,
    });
    expect(Number(row.cost)).toBe(costMicros(t.gw.services.prices.priceOf('claude-sim'), r.usage!.prompt_tokens, r.usage!.completion_tokens));
    expect(Number(row.cost)).toBeGreaterThan(0);
    // What went upstream was Anthropic's shape: max_tokens, the model, no OpenAI-only fields.
    expect(t.sim.stats().byModel['claude-sim']).toBe(1);
  });

  it('streams OpenAI chunks; the usage chunk only when the client asks', async () => {
    const plain = await collect(await client.chat.completions.create({ model: 'claude-sim', messages: hi, stream: true }));
    expect(plain.error).toBeUndefined();
    expect(plain.chunks[0]!.choices[0]!.delta.role).toBe('assistant');
    expect(plain.chunks.map((c) => c.choices[0]?.delta.content ?? '').join('')).toMatch(/^Echo: hello from the openai client/);
    expect(plain.chunks.at(-1)!.choices[0]!.finish_reason).toBe('stop');
    expect(plain.chunks.every((c) => c.object === 'chat.completion.chunk' && c.model === 'claude-sim' && !c.usage)).toBe(true);

    const { data: stream, response } = await client.chat.completions
      .create({ model: 'claude-sim', messages: hi, stream: true, stream_options: { include_usage: true } })
      .withResponse();
    const withUsage = await collect(stream);
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
    expect(row.ttft_ms).not.toBeNull();
    expect(Number(row.cost)).toBe(costMicros(t.gw.services.prices.priceOf('claude-sim'), last.usage!.prompt_tokens, last.usage!.completion_tokens));
  });

  it('calls a tool and answers its result on the second turn, stream and not', async () => {
    const first = await client.chat.completions.create({
      model: 'claude-sim-tools',
      messages: [{ role: 'user', content: 'Weather in Paris?' }],
      tools: weather,
    });
    const call = first.choices[0]!.message.tool_calls![0]! as OpenAI.Chat.Completions.ChatCompletionMessageFunctionToolCall;
    expect(first.choices[0]!.finish_reason).toBe('tool_calls');
    expect(call.function.name).toBe('get_weather');
    expect(() => JSON.parse(call.function.arguments)).not.toThrow();

    // The same turn streamed: tool_calls deltas with their index, the arguments in pieces that join up.
    const streamed = await collect(
      await client.chat.completions.create({
        model: 'claude-sim-tools',
        messages: [{ role: 'user', content: 'Weather in Paris?' }],
        tools: weather,
        stream: true,
      }),
    );
    const deltas = streamed.chunks.flatMap((c) => c.choices[0]?.delta.tool_calls ?? []);
    expect(deltas.length).toBeGreaterThan(1);
    expect(deltas.every((d) => d.index === 0)).toBe(true);
    expect(deltas[0]!.function!.name).toBe('get_weather');
    expect(deltas.map((d) => d.function?.arguments ?? '').join('')).toBe(call.function.arguments);
    expect(streamed.chunks.at(-1)!.choices[0]!.finish_reason).toBe('tool_calls');

    const second = await client.chat.completions.create({
      model: 'claude-sim-tools',
      tools: weather,
      messages: [{ role: 'user', content: 'Weather in Paris?' }, first.choices[0]!.message, { role: 'tool', tool_call_id: call.id, content: 'sunny, 21 C' }],
    });
    expect(second.choices[0]!.finish_reason).toBe('stop');
    expect(second.choices[0]!.message.content).toContain('Tool result: sunny, 21 C');
  });

  it('retries an overloaded (529) channel on another one, invisibly', async () => {
    const { data: r, response } = await client.chat.completions.create({ model: 'claude-retry', messages: hi }).withResponse();
    expect(r.choices[0]!.message.content).toMatch(/^Echo:/);
    expect(t.sim.stats().byModel['claude-sim-529']).toBe(1);
    const row = await logRow(response.headers.get('x-request-id')!);
    expect(row).toMatchObject({ status: 200, attempts: 2, upstream_model: 'claude-sim' });
  });

  it('answers a clear 503 with the request id when no other channel serves the model', async () => {
    for (const stream of [false, true]) {
      const err = await apiError(client.chat.completions.create({ model: 'claude-sim-529', messages: hi, stream }));
      expect(err.status).toBe(503);
      expect(err.message).toMatch(/overloaded/i);
      expectRequestId((err.error as { message?: string }).message, err.requestID);
    }
  });

  it("keeps the upstream's refusal of the key in OpenAI's wording", async () => {
    const err = await apiError(client.chat.completions.create({ model: 'claude-badkey', messages: hi }));
    expect(err.status).toBe(401);
    expect((err.error as { message: string }).message).toMatch(/^Incorrect API key provided: /);
    expect(err.code).toBe('invalid_api_key');
    expect(JSON.stringify(err.error)).not.toContain(KEY);
  });

  it('names the field it cannot translate with a 400, and sends nothing upstream', async () => {
    const audio = [{ type: 'input_audio' as const, input_audio: { data: 'AAAA', format: 'wav' as const } }];
    const err = await apiError(client.chat.completions.create({ model: 'claude-sim', messages: [{ role: 'user', content: audio }] }));
    expect(err.status).toBe(400);
    expect(err.param).toBe('messages[0].content[0].type');
    expect(err.message).toMatch(/input_audio.*Anthropic/);
    expect(t.sim.stats().byModel['claude-sim'] ?? 0).toBe(0);
  });

  it('ends a stream the upstream drops, or fails inside, with the documented error after the content', async () => {
    // Dropped before any content: nothing was sent, so it is a clear 502 the client can retry.
    const early = await apiError(client.chat.completions.create({ model: 'claude-sim-drop', messages: hi, stream: true }));
    expect(early.status).toBe(502);
    expectRequestId((early.error as { message?: string }).message, early.requestID);

    const dropped = await collect(await client.chat.completions.create({ model: 'claude-slow-drop', messages: hi, stream: true }));
    expect(dropped.chunks.map((c) => c.choices[0]?.delta.content ?? '').join('')).not.toBe('');
    expect((dropped.error as Error).message).toMatch(/upstream stream ended abruptly/);

    const { data: s, response } = await client.chat.completions.create({ model: 'claude-sim-stream-error', messages: hi, stream: true }).withResponse();
    const failed = await collect(s);
    expect(failed.chunks.length).toBeGreaterThan(0);
    expect((failed.error as Error).message).toMatch(/overloaded/i);
    const row = await logRow(response.headers.get('x-request-id')!);
    expect(row.status).toBe(503);
    expect(row.error).toMatch(/overloaded/i);
  });

  it('counts a dropped stream against the channel model, an overload inside the stream not', async () => {
    const slowId = t.gw.services.registry.all().find((c) => c.name === 'slow')!.id;
    const envId = t.gw.services.registry.all().find((c) => c.name === 'claude (from environment)')!.id;
    for (let i = 0; i < 3; i++) await collect(await client.chat.completions.create({ model: 'claude-sim-stream-error', messages: hi, stream: true }));
    expect(!!t.gw.services.registry.isModelDisabled(envId, 'claude-sim-stream-error')).toBe(false);
    for (let i = 0; i < 2; i++) await collect(await client.chat.completions.create({ model: 'claude-drop-health', messages: hi, stream: true }));
    expect(!!t.gw.services.registry.isModelDisabled(slowId, 'claude-drop-health')).toBe(true);
  });

  it('lists the models in /v1/models and passes the channel test', async () => {
    const models = await client.models.list();
    const ids = models.data.map((m) => m.id);
    for (const m of ['claude-sim', 'claude-sonnet-4-5', 'claude-retry']) expect(ids).toContain(m);
    expect(models.data.find((m) => m.id === 'claude-sim')).toMatchObject({ owned_by: 'anthropic', endpoint: 'chat' });

    const id = t.gw.services.registry.all().find((c) => c.name === 'claude (from environment)')!.id;
    const ok = await t.api(`/api/channels/${id}/test`, { method: 'POST', json: { model: 'claude-sim' } });
    expect(ok.status).toBe(200);
    expect((await ok.json()).data[0]).toMatchObject({ model: 'claude-sim', ok: true, status: 200 });
    const bad = await t.api(`/api/channels/${id}/test`, { method: 'POST', json: { model: 'claude-sim-529' } });
    expect((await bad.json()).data[0]).toMatchObject({ model: 'claude-sim-529', ok: false, status: 503, error: expect.stringMatching(/overloaded/i) });
  });
});
