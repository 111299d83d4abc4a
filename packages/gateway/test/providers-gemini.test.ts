// The Gemini translators against the upstream simulator over real HTTP:
// OpenAI request -> generateContent -> OpenAI answer, SSE streams split at
// every byte, function calls across two turns, safety blocks, usage, errors,
// and embeddings through batchEmbedContents.
import { startUpstreamSim, type UpstreamSim } from '@kbchat/upstream-sim';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { presets, providerOf, providerTypes, ProviderFailure, type ChatCompletionChunk, type WireAdapter } from '../src/providers/index.js';
import { CREATED, wireCalls } from './wire-support.js';

const KEY = 'AIza-test';
let sim: UpstreamSim;
let wire: WireAdapter;

beforeAll(async () => {
  sim = await startUpstreamSim({ port: 0, key: KEY, tokens: 12 });
  wire = providerOf('gemini')!.wire!;
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
      parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'], additionalProperties: false },
    },
  },
];
const contentOf = (chunks: ChatCompletionChunk[]) => chunks.map((c) => c.choices[0]?.delta.content ?? '').join('');
const norm = (v: number[]) => Math.sqrt(v.reduce((n, x) => n + x * x, 0));

describe('gemini: OpenAI -> Gemini -> OpenAI', () => {
  it('translates a chat request (systemInstruction, roles, generationConfig) and its answer', async () => {
    const messages = [{ role: 'system', content: 'Be brief.' }, ...user('Hello there'), { role: 'assistant', content: 'Hi.' }, ...user('Hello there world')];
    const answer = await complete({ messages, temperature: 1.5, max_tokens: 100, top_p: 0.9, stop: ['never-said'], seed: 7 }, 'gemini-sim');
    expect(sim.stats().lastBody['gemini-sim']).toEqual({
      contents: [
        { role: 'user', parts: [{ text: 'Hello there' }] },
        { role: 'model', parts: [{ text: 'Hi.' }] },
        { role: 'user', parts: [{ text: 'Hello there world' }] },
      ],
      systemInstruction: { parts: [{ text: 'Be brief.' }] },
      generationConfig: { temperature: 1.5, topP: 0.9, maxOutputTokens: 100, stopSequences: ['never-said'], seed: 7 },
    });
    expect(answer).toMatchObject({
      object: 'chat.completion',
      created: CREATED,
      model: 'client-name',
      choices: [{ index: 0, finish_reason: 'stop', message: { role: 'assistant' } }],
    });
    expect(answer.id).toMatch(/^chatcmpl-sim/);
    expect(answer.choices[0]!.message.content).toMatch(/^Echo: hello there world hello/);
    // The sim counts 1.3 tokens a word, rounded up per text: 3 + 3 + 2 + 4 prompt tokens, 12 answer words.
    expect(answer.usage).toEqual({ prompt_tokens: 12, completion_tokens: 16, total_tokens: 28, prompt_tokens_details: { cached_tokens: 0 } });
  });

  it('maps finish reasons: MAX_TOKENS -> length; sends n as candidateCount and response_format as a MIME type', async () => {
    const short = await complete({ messages: user('one two three'), max_completion_tokens: 4 }, 'gemini-sim');
    expect(short.choices[0]!.finish_reason).toBe('length');
    expect(short.usage.completion_tokens).toBe(4);
    expect(wire.chatRequest({ messages: user('x'), n: 2, response_format: { type: 'json_object' } }, 'gemini-sim').generationConfig).toEqual({
      candidateCount: 2,
      responseMimeType: 'application/json',
    });
  });

  it('sends images as inlineData (data: URLs) and fileData (http URLs)', async () => {
    const png = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==';
    const content = [
      { type: 'text', text: 'what is this' },
      { type: 'image_url', image_url: { url: `data:image/png;base64,${png}` } },
      { type: 'image_url', image_url: { url: 'https://example.com/cat.webp?size=2' } },
    ];
    await complete({ messages: user(content) }, 'gemini-sim');
    expect((sim.stats().lastBody['gemini-sim'] as any).contents[0].parts.slice(1)).toEqual([
      { inlineData: { mimeType: 'image/png', data: png } },
      { fileData: { mimeType: 'image/webp', fileUri: 'https://example.com/cat.webp?size=2' } },
    ]);
  });

  it('streams: chunks of the gateway shape, identical for every split of the bytes (CRLF frames)', async () => {
    const bytes = await recorded({ messages: user('split me please') }, 'gemini-sim');
    expect(Buffer.from(bytes).toString()).toContain('\r\n\r\n');
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
    const plain = await complete({ messages: user('split me please') }, 'gemini-sim');
    expect(contentOf(whole)).toBe(plain.choices[0]!.message.content);
    for (let i = 1; i < bytes.length; i++) expect(translate(bytes, [i])).toEqual(whole);
    expect(
      translate(
        bytes,
        Array.from({ length: bytes.length - 1 }, (_, i) => i + 1),
      ),
    ).toEqual(whole);
  });

  it('function calls across two turns, non-stream and stream (tool_calls with index, finish tool_calls)', async () => {
    const first = await complete({ messages: user('weather in Paris'), tools: weather }, 'gemini-sim-tools');
    const sentTools = (sim.stats().lastBody['gemini-sim-tools'] as any).tools;
    expect(sentTools).toEqual([
      {
        functionDeclarations: [
          {
            name: 'get_weather',
            description: 'Weather of a city',
            parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
          },
        ],
      },
    ]);
    const choice = first.choices[0]!;
    expect(choice.finish_reason).toBe('tool_calls');
    expect(choice.message.content).toBeNull();
    const call = choice.message.tool_calls![0]!;
    expect(call).toMatchObject({ type: 'function', function: { name: 'get_weather', arguments: '{"city":"paris"}' } });

    const bytes = await recorded({ messages: user('weather in Paris'), tools: weather }, 'gemini-sim-tools');
    const chunks = translate(bytes, []);
    const deltas = chunks.flatMap((c) => c.choices[0]?.delta.tool_calls ?? []);
    expect(deltas).toEqual([{ index: 0, id: call.id, type: 'function', function: { name: 'get_weather', arguments: '{"city":"paris"}' } }]);
    expect(chunks.at(-2)!.choices[0]!.finish_reason).toBe('tool_calls');
    for (let i = 1; i < bytes.length; i++) expect(translate(bytes, [i])).toEqual(chunks);

    const messages = [
      ...user('weather in Paris'),
      { role: 'assistant', content: null, tool_calls: [call] },
      { role: 'tool', tool_call_id: call.id, content: 'sunny, 21C' },
    ];
    const second = await complete({ messages, tools: weather }, 'gemini-sim-tools');
    expect(second.choices[0]).toMatchObject({ finish_reason: 'stop', message: { content: 'Tool result: sunny, 21C' } });
    expect((sim.stats().lastBody['gemini-sim-tools'] as any).contents.slice(1)).toEqual([
      { role: 'model', parts: [{ functionCall: { name: 'get_weather', args: { city: 'paris' } } }] },
      { role: 'user', parts: [{ functionResponse: { name: 'get_weather', response: { result: 'sunny, 21C' } } }] },
    ]);
    expect(() => wire.chatRequest({ messages: [...user('x'), { role: 'tool', tool_call_id: 'nope', content: 'r' }] }, 'm')).toThrow(
      expect.objectContaining({ status: 400, param: 'messages[1].tool_call_id' }),
    );
  });

  it('tool_choice: none answers, a named function is forced with allowedFunctionNames', async () => {
    const none = await complete({ messages: user('weather in Paris'), tools: weather, tool_choice: 'none' }, 'gemini-sim-tools');
    expect(none.choices[0]!.message.content).toMatch(/^Echo: weather/);
    await complete(
      { messages: user('weather in Paris'), tools: weather, tool_choice: { type: 'function', function: { name: 'get_weather' } } },
      'gemini-sim-tools',
    );
    expect((sim.stats().lastBody['gemini-sim-tools'] as any).toolConfig).toEqual({
      functionCallingConfig: { mode: 'ANY', allowedFunctionNames: ['get_weather'] },
    });
  });

  it('safety: a blocked prompt is a 400 content_filter error (stream too); a late block is finish_reason content_filter', async () => {
    const res = await send({ messages: user('hi') }, 'gemini-sim-safety');
    expect(res.status).toBe(200);
    let thrown: unknown;
    try {
      wire.chatResponse(await res.json(), { model: 'm' });
    } catch (err) {
      thrown = err;
    }
    expect(thrown).toBeInstanceOf(ProviderFailure);
    expect([(thrown as ProviderFailure).error.status, (thrown as ProviderFailure).error.code, (thrown as ProviderFailure).retryable]).toEqual([
      400,
      'content_filter',
      false,
    ]);
    expect((thrown as ProviderFailure).error.message).toContain('blockReason SAFETY');

    const s = wire.chatStream({ model: 'm' });
    expect(s.push(await recorded({ messages: user('hi') }, 'gemini-sim-safety'))).toEqual([]);
    expect(s.failure?.error.code).toBe('content_filter');

    const late = translate(await recorded({ messages: user('one two') }, 'gemini-sim-safety-late'), []);
    expect(contentOf(late)).toBe('Echo: one two one two one two one ');
    expect(late.at(-2)!.choices[0]!.finish_reason).toBe('content_filter');
    expect((await complete({ messages: user('hi') }, 'gemini-sim-safety-late')).choices[0]).toMatchObject({
      finish_reason: 'content_filter',
      message: { content: '' },
    });
  });

  it('maps every fault model and a refused key to a status, an OpenAI error and a retry decision', async () => {
    const cases: [string, number, string, string, boolean, boolean][] = [
      ['gemini-sim-429', 429, 'rate_limit_exceeded', 'rate_limit_exceeded', true, false],
      ['gemini-sim-503', 503, 'upstream_error', 'upstream_overloaded', true, true],
      ['gemini-sim-500', 500, 'upstream_error', 'upstream_server_error', true, true],
      ['gemini-sim-400', 400, 'invalid_request_error', 'invalid_request', false, false],
      ['gemini-nope', 404, 'invalid_request_error', 'model_not_found', false, false],
    ];
    for (const [model, status, type, code, retryable, counts] of cases) {
      const res = await send({ messages: user('hi') }, model);
      const f = wire.error(res.status, await res.text());
      expect([f.error.status, f.error.type, f.error.code, f.retryable, f.countsAgainstChannel], model).toEqual([status, type, code, retryable, counts]);
    }
    const wrongKey = await send({ messages: user('hi') }, 'gemini-sim', 'AIza-wrong');
    expect(wrongKey.status).toBe(400);
    const auth = wire.error(wrongKey.status, await wrongKey.text());
    expect([auth.error.status, auth.error.code, auth.retryable, auth.countsAgainstChannel]).toEqual([401, 'invalid_api_key', true, true]);
    expect(auth.error.message).toBe('Incorrect API key provided: API key not valid. Please pass a valid API key.');
  });

  it('a dropped stream fails at end() with what arrived translated', async () => {
    const slow = await startUpstreamSim({ port: 0, key: KEY, tokens: 12, tokenDelayMs: 5 });
    try {
      const s = wire.chatStream({ model: 'm' });
      const target = wire.chatTarget('gemini-sim-drop', true, channel(KEY, slow.url));
      const res = await fetch(target.url, {
        method: 'POST',
        headers: target.headers,
        body: JSON.stringify(wire.chatRequest({ messages: user('one two') }, 'gemini-sim-drop')),
      });
      const got: ChatCompletionChunk[] = [];
      await expect(
        (async () => {
          for await (const part of res.body!) got.push(...s.push(part as Uint8Array));
        })(),
      ).rejects.toThrow();
      expect(contentOf(got)).toBe('Echo: one two one two one two one ');
      expect(() => s.end()).toThrow(expect.objectContaining({ error: expect.objectContaining({ code: 'stream_dropped' }) }));
    } finally {
      await slow.close();
    }
  });

  it('registers the provider: the key in a header (never the URL), stream URL with alt=sse', () => {
    const p = providerOf('gemini')!;
    const t = p.target('chat', 'gemini-2.5-flash', { baseUrl: 'https://generativelanguage.googleapis.com', key: 'k', options: {} });
    expect(t).toEqual({
      url: 'https://generativelanguage.googleapis.com/v1beta/models/gemini-2.5-flash:generateContent',
      headers: { 'content-type': 'application/json', 'x-goog-api-key': 'k' },
    });
    expect(wire.chatTarget('m', true, { baseUrl: 'https://proxy.example/v1beta', key: 'k', options: {} }).url).toBe(
      'https://proxy.example/v1beta/models/m:streamGenerateContent?alt=sse',
    );
    expect(p.endpoints).toEqual(['chat', 'embeddings']);
    // Wired into the relay: offered for channels, and GEMINI_API_KEY alone makes one.
    expect(providerTypes()).toContain('gemini');
    expect(presets.find((x) => x.env === 'GEMINI')).toMatchObject({ type: 'gemini', baseUrl: 'https://generativelanguage.googleapis.com' });
  });
});

describe('gemini embeddings: OpenAI -> batchEmbedContents -> OpenAI', () => {
  async function embed(body: Record<string, unknown>, model = 'gemini-sim-embed-768') {
    const e = wire.embeddings!;
    const target = e.target(model, channel());
    const answers: unknown[] = [];
    for (const b of e.requests(body, model)) {
      const res = await fetch(target.url, { method: 'POST', headers: target.headers, body: JSON.stringify(b) });
      expect(res.status).toBe(200);
      answers.push(await res.json());
    }
    return e.response(answers, body, { model: 'client-embed' });
  }

  it('answers in the OpenAI shape, unit vectors even when dimensions cut them, in batches of 100', async () => {
    const full = await embed({ input: 'the office opens at nine' });
    expect(full).toMatchObject({ object: 'list', model: 'client-embed', data: [{ object: 'embedding', index: 0 }] });
    expect(full.data[0]!.embedding).toHaveLength(768);
    expect(norm(full.data[0]!.embedding as number[])).toBeCloseTo(1, 6);
    expect(full.usage.prompt_tokens).toBeGreaterThan(0);
    expect(full.usage.total_tokens).toBe(full.usage.prompt_tokens);

    const cut = await embed({ input: ['the office opens at nine'], dimensions: 256 });
    const v = cut.data[0]!.embedding as number[];
    expect(v).toHaveLength(256);
    expect(norm(v)).toBeCloseTo(1, 6); // Gemini sent it unnormalised (the sim's test checks that)
    // The same direction as the full vector's first 256 values.
    const head = (full.data[0]!.embedding as number[]).slice(0, 256);
    expect(v.reduce((dot, x, i) => dot + x * head[i]!, 0) / norm(head)).toBeCloseTo(1, 6);

    const inputs = Array.from({ length: 250 }, (_, i) => `text number ${i}`);
    expect(wire.embeddings!.requests({ input: inputs }, 'gemini-sim-embed-768').map((b: any) => b.requests.length)).toEqual([100, 100, 50]);
    const many = await embed({ input: inputs });
    expect(many.data.map((d) => d.index)).toEqual(inputs.map((_, i) => i));
    const single = await embed({ input: 'text number 249' });
    expect(many.data[249]!.embedding).toEqual(single.data[0]!.embedding);
  });

  it('base64 on request; token arrays refused naming the field', async () => {
    const b64 = await embed({ input: 'abc', encoding_format: 'base64' });
    const buf = Buffer.from(b64.data[0]!.embedding as string, 'base64');
    expect(buf.length).toBe(768 * 4);
    expect(() => wire.embeddings!.requests({ input: [[1, 2, 3]] }, 'm')).toThrow(expect.objectContaining({ status: 400, param: 'input' }));
  });
});
