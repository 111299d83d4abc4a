// The Anthropic translators against the upstream simulator over real HTTP:
// OpenAI request -> Anthropic body -> sim -> answer/stream -> OpenAI shapes,
// streams split at every byte, tools across two turns, usage, errors; and the
// inbound direction (an Anthropic client, the official SDK, served by an
// OpenAI-shaped upstream through inbound.ts).
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import Anthropic from '@anthropic-ai/sdk';
import { startUpstreamSim, type UpstreamSim } from '@kbchat/upstream-sim';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { GatewayError } from '../src/errors.js';
import { AnthropicEventStream, anthropicErrorBody, anthropicFromOpenAI, openAIFromAnthropic } from '../src/providers/anthropic/inbound.js';
import { DEFAULT_MAX_TOKENS } from '../src/providers/anthropic/request.js';
import { presets, providerOf, providerTypes, ProviderFailure, type ChatCompletionChunk, type WireAdapter } from '../src/providers/index.js';
import { CREATED, wireCalls } from './wire-support.js';

const KEY = 'sk-ant-test';
let sim: UpstreamSim;
let wire: WireAdapter;

beforeAll(async () => {
  sim = await startUpstreamSim({ port: 0, key: KEY, tokens: 12 });
  wire = providerOf('anthropic')!.wire!;
});
afterAll(() => sim.close());
beforeEach(() => sim.reset());

const { channel, send, complete, translate, recorded } = wireCalls(
  () => wire,
  () => sim.url,
  KEY,
);

const user = (content: unknown) => [{ role: 'user', content }];
const weather = [
  {
    type: 'function',
    function: {
      name: 'get_weather',
      description: 'Weather of a city',
      parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
    },
  },
];

function streamedToolCalls(chunks: ChatCompletionChunk[]) {
  const calls: { id?: string; name?: string; arguments: string }[] = [];
  for (const c of chunks) {
    for (const t of c.choices[0]?.delta.tool_calls ?? []) {
      calls[t.index] ??= { arguments: '' };
      if (t.id) calls[t.index]!.id = t.id;
      if (t.function.name) calls[t.index]!.name = t.function.name;
      calls[t.index]!.arguments += t.function.arguments;
    }
  }
  return calls;
}

describe('anthropic outbound: OpenAI -> Anthropic -> OpenAI', () => {
  it('translates a chat request (system, default max_tokens, clamped temperature, stop) and its answer', async () => {
    const body = { model: 'x', messages: [{ role: 'system', content: 'Be brief.' }, ...user('Hello there world')], temperature: 1.6, stop: 'never-said' };
    const answer = await complete(body, 'claude-sim');
    const sent = sim.stats().lastBody['claude-sim'] as Record<string, unknown>;
    expect(sent).toEqual({
      model: 'claude-sim',
      system: 'Be brief.',
      messages: [{ role: 'user', content: [{ type: 'text', text: 'Hello there world' }] }],
      max_tokens: DEFAULT_MAX_TOKENS,
      temperature: 1,
      stop_sequences: ['never-said'],
    });
    expect(answer).toMatchObject({
      object: 'chat.completion',
      created: CREATED,
      model: 'client-name',
      choices: [{ index: 0, finish_reason: 'stop', message: { role: 'assistant' } }],
    });
    expect(answer.id).toMatch(/^chatcmpl-msg_/);
    expect(answer.choices[0]!.message.content).toMatch(/^Echo: hello there world hello/);
    // The sim counts 1.3 tokens a word: 2 + 3 prompt words, 12 answer words.
    expect(answer.usage).toEqual({
      prompt_tokens: 7,
      completion_tokens: 16,
      total_tokens: 23,
      prompt_tokens_details: { cached_tokens: 0 },
      cache_creation_input_tokens: 0,
      cache_read_input_tokens: 0,
    });
  });

  it('maps finish reasons: max_tokens -> length, stop sequence -> stop', async () => {
    const short = await complete({ messages: user('one two three'), max_tokens: 4 }, 'claude-sim');
    expect(short.choices[0]!.finish_reason).toBe('length');
    expect(short.usage.completion_tokens).toBe(4);
    const stopped = await complete({ messages: user('one two three'), stop: ['three'] }, 'claude-sim');
    expect(stopped.choices[0]).toMatchObject({ finish_reason: 'stop', message: { content: 'Echo: one two ' } });
  });

  it('keeps cache_control on system parts: a cache write, then reads in prompt_tokens_details', async () => {
    const system = { role: 'system', content: [{ type: 'text', text: 'a long shared instruction about office hours', cache_control: { type: 'ephemeral' } }] };
    const first = await complete({ messages: [system, ...user('first question')] }, 'claude-sim');
    expect(first.usage).toMatchObject({
      prompt_tokens: 13,
      cache_creation_input_tokens: 10,
      cache_read_input_tokens: 0,
      prompt_tokens_details: { cached_tokens: 0 },
    });
    const second = await complete({ messages: [system, ...user('second question')] }, 'claude-sim');
    expect(second.usage).toMatchObject({
      prompt_tokens: 13,
      cache_creation_input_tokens: 0,
      cache_read_input_tokens: 10,
      prompt_tokens_details: { cached_tokens: 10 },
    });
  });

  it('sends images as content blocks: data: URLs as base64, http URLs as url sources', async () => {
    const png = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==';
    const content = [
      { type: 'text', text: 'what is this' },
      { type: 'text', text: '' }, // Anthropic refuses empty text blocks: left out
      { type: 'image_url', image_url: { url: `data:image/png;base64,${png}` } },
      { type: 'image_url', image_url: { url: 'https://example.com/cat.jpg' } },
    ];
    await complete({ messages: user(content) }, 'claude-sim');
    const sent = (sim.stats().lastBody['claude-sim'] as any).messages[0].content;
    expect(sent.slice(1)).toEqual([
      { type: 'image', source: { type: 'base64', media_type: 'image/png', data: png } },
      { type: 'image', source: { type: 'url', url: 'https://example.com/cat.jpg' } },
    ]);
    expect(() => wire.chatRequest({ messages: user([{ type: 'image_url', image_url: { url: 'ftp://x/y.png' } }]) }, 'claude-sim')).toThrow(
      expect.objectContaining({ status: 400, param: 'messages[0].content[0].image_url.url' }),
    );
    expect(() => wire.chatRequest({ messages: user([{ type: 'input_audio', input_audio: {} }]) }, 'claude-sim')).toThrow(
      expect.objectContaining({ param: 'messages[0].content[0].type' }),
    );
  });

  it('streams: chunks of the gateway shape, identical for every split of the bytes', async () => {
    const bytes = await recorded({ messages: user('split me please') }, 'claude-sim');
    const whole = translate(bytes, []);
    expect(whole[0]).toEqual({
      id: whole[0]!.id,
      object: 'chat.completion.chunk',
      created: CREATED,
      model: 'client-name',
      choices: [{ index: 0, delta: { role: 'assistant', content: '' }, finish_reason: null }],
    });
    expect(whole.at(-2)!.choices).toEqual([{ index: 0, delta: {}, finish_reason: 'stop' }]);
    expect(whole.at(-1)).toMatchObject({ choices: [], usage: { prompt_tokens: 4, completion_tokens: 16, total_tokens: 20 } });
    const text = whole.map((c) => c.choices[0]?.delta.content ?? '').join('');
    const plain = await complete({ messages: user('split me please') }, 'claude-sim');
    expect(text).toBe(plain.choices[0]!.message.content);
    for (let i = 1; i < bytes.length; i++) expect(translate(bytes, [i])).toEqual(whole);
    expect(
      translate(
        bytes,
        Array.from({ length: bytes.length - 1 }, (_, i) => i + 1),
      ),
    ).toEqual(whole);
  });

  it('tools across two turns, non-stream and stream (the tool call streamed with its index)', async () => {
    const first = await complete({ messages: user('weather in Paris'), tools: weather }, 'claude-sim-tools');
    const choice = first.choices[0]!;
    expect(choice.finish_reason).toBe('tool_calls');
    expect(choice.message.content).toBe("I'll call get_weather.");
    const call = choice.message.tool_calls![0]!;
    expect(call).toMatchObject({ type: 'function', function: { name: 'get_weather', arguments: '{"city":"paris"}' } });
    expect(call.id).toMatch(/^toolu_/);

    const bytes = await recorded({ messages: user('weather in Paris'), tools: weather }, 'claude-sim-tools');
    const chunks = translate(bytes, []);
    expect(streamedToolCalls(chunks)).toEqual([{ id: call.id, name: 'get_weather', arguments: '{"city":"paris"}' }]);
    expect(chunks.at(-2)!.choices[0]!.finish_reason).toBe('tool_calls');
    for (let i = 1; i < bytes.length; i++) expect(translate(bytes, [i])).toEqual(chunks);

    const messages = [
      ...user('weather in Paris'),
      { role: 'assistant', content: choice.message.content, tool_calls: [call] },
      { role: 'tool', tool_call_id: call.id, content: 'sunny, 21C' },
      { role: 'user', content: 'and tomorrow?' },
    ];
    const second = await complete({ messages, tools: weather }, 'claude-sim-tools');
    expect(second.choices[0]).toMatchObject({ finish_reason: 'stop', message: { content: 'Tool result: sunny, 21C' } });
    // The tool result opens the user turn that follows the call, the user's words after it.
    const sent = (sim.stats().lastBody['claude-sim-tools'] as any).messages;
    expect(sent.map((m: any) => m.role)).toEqual(['user', 'assistant', 'user']);
    expect(sent[2].content.map((b: any) => b.type)).toEqual(['tool_result', 'text']);
  });

  it('tool_choice both ways: required and a named function force the call; none answers', async () => {
    const forced = await complete(
      { messages: user('weather in Paris'), tools: weather, tool_choice: 'required', parallel_tool_calls: false },
      'claude-sim-tools',
    );
    expect(forced.choices[0]!.message.content).toBeNull();
    expect((sim.stats().lastBody['claude-sim-tools'] as any).tool_choice).toEqual({ type: 'any', disable_parallel_tool_use: true });
    const named = await complete(
      { messages: user('weather in Paris'), tools: weather, tool_choice: { type: 'function', function: { name: 'get_weather' } } },
      'claude-sim-tools',
    );
    expect(named.choices[0]!.message.tool_calls![0]!.function.name).toBe('get_weather');
    const none = await complete({ messages: user('weather in Paris'), tools: weather, tool_choice: 'none' }, 'claude-sim-tools');
    expect(none.choices[0]).toMatchObject({ finish_reason: 'stop', message: { content: expect.stringMatching(/^Echo: weather/) } });
  });

  it('maps every fault model to a status, an OpenAI error and a retry decision', async () => {
    const cases: [string, number, string, string, boolean, boolean][] = [
      ['claude-sim-529', 503, 'upstream_error', 'upstream_overloaded', true, false],
      ['claude-sim-429', 429, 'rate_limit_exceeded', 'rate_limit_exceeded', true, false],
      ['claude-sim-500', 500, 'upstream_error', 'upstream_server_error', true, true],
      ['claude-nope', 404, 'invalid_request_error', 'model_not_found', false, false],
    ];
    for (const [model, status, type, code, retryable, counts] of cases) {
      const res = await send({ messages: user('hi') }, model);
      const f = wire.error(res.status, await res.text(), Object.fromEntries(res.headers));
      expect(f).toBeInstanceOf(ProviderFailure);
      expect([f.error.status, f.error.type, f.error.code, f.retryable, f.countsAgainstChannel], model).toEqual([status, type, code, retryable, counts]);
      expect(f.error.message).toMatch(/\(Anthropic request id: req_sim_\w+\)$/);
    }
    const limited = await send({ messages: user('hi') }, 'claude-sim-429');
    expect(wire.error(limited.status, await limited.text(), Object.fromEntries(limited.headers)).error.retryAfter).toBe('1');

    const wrongKey = await send({ messages: user('hi') }, 'claude-sim', 'sk-ant-wrong');
    const auth = wire.error(wrongKey.status, await wrongKey.text());
    expect([auth.error.status, auth.error.code, auth.retryable, auth.countsAgainstChannel]).toEqual([401, 'invalid_api_key', true, true]);
    expect(auth.error.message).toMatch(/^Incorrect API key provided: invalid x-api-key/);
    expect(auth.error.message).not.toContain('sk-ant-wrong');

    // A request the upstream finds wrong is the client's: never retried elsewhere.
    const target = wire.chatTarget('claude-sim', false, channel());
    const raw = await fetch(target.url, { method: 'POST', headers: target.headers, body: JSON.stringify({ model: 'claude-sim', messages: user('hi') }) });
    const invalid = wire.error(raw.status, await raw.text());
    expect([invalid.error.status, invalid.error.type, invalid.retryable]).toEqual([400, 'invalid_request_error', false]);
    expect(invalid.error.message).toContain('max_tokens: Field required');
  });

  it('in-stream errors: an error event sets failure; a dropped stream fails at end()', async () => {
    const bytes = await recorded({ messages: user('one two') }, 'claude-sim-stream-error');
    const s = wire.chatStream({ model: 'm', created: CREATED });
    const chunks = s.push(bytes);
    expect(chunks.map((c) => c.choices[0]?.delta.content ?? '').join('')).toBe('Echo: one two ');
    expect(s.failure).toBeInstanceOf(ProviderFailure);
    expect([s.failure!.error.status, s.failure!.error.code, s.failure!.retryable]).toEqual([503, 'upstream_overloaded', true]);

    // With a delay between words, the head and the first words go out before the connection is lost.
    const slow = await startUpstreamSim({ port: 0, key: KEY, tokens: 12, tokenDelayMs: 5 });
    try {
      const dropped = wire.chatStream({ model: 'm', created: CREATED });
      const target = wire.chatTarget('claude-sim-drop', true, { baseUrl: slow.url, key: KEY, options: {} });
      const res = await fetch(target.url, {
        method: 'POST',
        headers: target.headers,
        body: JSON.stringify(wire.chatRequest({ messages: user('one two'), stream: true }, 'claude-sim-drop')),
      });
      const got: ChatCompletionChunk[] = [];
      await expect(
        (async () => {
          for await (const part of res.body!) got.push(...dropped.push(part as Uint8Array));
        })(),
      ).rejects.toThrow();
      expect(got.map((c) => c.choices[0]?.delta.content ?? '').join('')).toBe('Echo: one two ');
      expect(() => dropped.end()).toThrow(expect.objectContaining({ error: expect.objectContaining({ code: 'stream_dropped' }) }));
    } finally {
      await slow.close();
    }
  });

  it('registers the provider: URL with or without /v1, key header, preset', async () => {
    const p = providerOf('anthropic')!;
    expect(p.target('chat', 'm', { baseUrl: 'https://api.anthropic.com', key: 'k', options: {} })).toEqual({
      url: 'https://api.anthropic.com/v1/messages',
      headers: { 'content-type': 'application/json', 'x-api-key': 'k', 'anthropic-version': '2023-06-01' },
    });
    expect(p.target('chat', 'm', { baseUrl: 'https://proxy.example/v1/', key: 'k', options: {} }).url).toBe('https://proxy.example/v1/messages');
    expect(p.endpoints).toEqual(['chat']);
    // Wired into the relay: offered for channels, and ANTHROPIC_API_KEY alone makes one.
    expect(providerTypes()).toContain('anthropic');
    expect(presets.find((x) => x.env === 'ANTHROPIC')).toMatchObject({ type: 'anthropic', baseUrl: 'https://api.anthropic.com' });
  });
});

/** A stand-in for the gateway's /v1/messages: inbound translation over an OpenAI-shaped upstream (the sim). */
async function inboundServer(): Promise<{ url: string; close(): Promise<void> }> {
  const server = http.createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    let body: Record<string, any>;
    try {
      body = openAIFromAnthropic(JSON.parse(Buffer.concat(chunks).toString()));
    } catch (err) {
      const e = err as GatewayError;
      res.writeHead(e.status, { 'content-type': 'application/json' }).end(JSON.stringify(anthropicErrorBody(e, 'req-test')));
      return;
    }
    const up = await fetch(`${sim.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${KEY}` },
      body: JSON.stringify(body),
    });
    if (!up.ok) {
      const e = new GatewayError(up.status, (await up.json()).error.message, 'upstream_error');
      res.writeHead(up.status, { 'content-type': 'application/json' }).end(JSON.stringify(anthropicErrorBody(e, 'req-test')));
      return;
    }
    if (!body.stream) {
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(anthropicFromOpenAI(await up.json(), body.model)));
      return;
    }
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    const events = new AnthropicEventStream(body.model, 3);
    for await (const part of up.body!) res.write(events.push(part as Uint8Array));
    res.end(events.finish());
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, close: () => new Promise((r) => server.close(() => r())) };
}

describe('anthropic inbound: an Anthropic client over an OpenAI-shaped channel', () => {
  let front: { url: string; close(): Promise<void> };
  let client: Anthropic;
  beforeAll(async () => {
    front = await inboundServer();
    client = new Anthropic({ apiKey: 'gateway-token', baseURL: front.url, maxRetries: 0 });
  });
  afterAll(() => front.close());

  it('translates the request to OpenAI and the answer back, non-stream and stream (the SDK accumulates the events)', async () => {
    const params = {
      model: 'sim-chat',
      max_tokens: 100,
      system: 'Be brief.',
      messages: [{ role: 'user' as const, content: 'Hello there world' }],
      stop_sequences: ['never'],
    };
    const msg = await client.messages.create(params);
    expect(sim.stats().lastBody['sim-chat']).toMatchObject({
      messages: [
        { role: 'system', content: 'Be brief.' },
        { role: 'user', content: 'Hello there world' },
      ],
      max_tokens: 100,
      stop: ['never'],
    });
    expect(msg).toMatchObject({
      type: 'message',
      role: 'assistant',
      model: 'sim-chat',
      stop_reason: 'end_turn',
      usage: { input_tokens: 7, output_tokens: 16 },
    });
    const text = (msg.content[0] as Anthropic.TextBlock).text;
    expect(text).toMatch(/^Echo: hello there world/);

    const final = await client.messages.stream(params).finalMessage();
    expect(final.content).toEqual([expect.objectContaining({ type: 'text', text })]);
    expect(final.usage).toMatchObject({ input_tokens: 7, output_tokens: 16 });
    expect(final.stop_reason).toBe('end_turn');
  });

  it('tools across two turns through the SDK (tool_use <- tool_calls, tool_result -> tool message)', async () => {
    const tools: Anthropic.Tool[] = [
      { name: 'get_weather', description: 'Weather', input_schema: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] } },
    ];
    const messages: Anthropic.MessageParam[] = [{ role: 'user', content: 'weather in Paris' }];
    const first = await client.messages.stream({ model: 'sim-tools', max_tokens: 100, tools, messages }).finalMessage();
    expect(first.stop_reason).toBe('tool_use');
    const use = first.content.find((b) => b.type === 'tool_use') as Anthropic.ToolUseBlock;
    expect(use).toMatchObject({ name: 'get_weather', input: { city: 'paris' } });
    messages.push(
      { role: 'assistant', content: first.content },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: use.id, content: 'sunny, 21C' }] },
    );
    const second = await client.messages.create({ model: 'sim-tools', max_tokens: 100, tools, tool_choice: { type: 'auto' }, messages });
    expect(second.content).toEqual([{ type: 'text', text: 'Tool result: sunny, 21C' }]);
    expect((sim.stats().lastBody['sim-tools'] as any).messages.at(-1)).toEqual({ role: 'tool', tool_call_id: use.id, content: 'sunny, 21C' });
  });

  it('bad requests and upstream faults come back in Anthropic error shapes', async () => {
    const noMax = client.messages.create({ model: 'sim-chat', messages: [{ role: 'user', content: 'hi' }] } as never);
    await expect(noMax).rejects.toMatchObject({
      status: 400,
      error: { type: 'error', error: { type: 'invalid_request_error', message: expect.stringContaining("'max_tokens'") } },
    });
    const overloaded = client.messages.create({ model: 'sim-503', max_tokens: 10, messages: [{ role: 'user', content: 'hi' }] });
    await expect(overloaded).rejects.toMatchObject({
      status: 503,
      error: { error: { type: 'overloaded_error', message: expect.stringContaining('(request id: req-test)') } },
    });
  });

  it('the event translation is the same for every split of an OpenAI stream', async () => {
    const res = await fetch(`${sim.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${KEY}` },
      body: JSON.stringify({ model: 'sim-tools', stream: true, stream_options: { include_usage: true }, tools: weather, messages: user('weather in Paris') }),
    });
    const bytes = new Uint8Array(await res.arrayBuffer());
    const run = (cut: number) => {
      const s = new AnthropicEventStream('sim-tools');
      return s.push(bytes.subarray(0, cut)) + s.push(bytes.subarray(cut)) + s.finish();
    };
    const whole = run(bytes.length);
    const names = [...whole.matchAll(/^event: (\w+)$/gm)].map((m) => m[1]);
    expect(names).toEqual([
      'message_start',
      'ping',
      'content_block_start',
      'content_block_delta',
      'content_block_delta',
      'content_block_stop',
      'message_delta',
      'message_stop',
    ]);
    expect(whole).toContain('"stop_reason":"tool_use"');
    for (let i = 1; i < bytes.length; i++) expect(run(i)).toBe(whole);
  });
});
