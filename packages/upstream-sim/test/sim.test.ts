import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startUpstreamSim, type UpstreamSim } from '../src/index.js';

let sim: UpstreamSim;

beforeAll(async () => {
  sim = await startUpstreamSim({ port: 0, key: '', tokens: 20, tokenDelayMs: 0, embedDelayMs: 0, rpm: 0 });
});
afterAll(async () => {
  await sim.close();
});
beforeEach(() => sim.reset());

const user = (content: string) => [{ role: 'user', content }];

function post(path: string, body: unknown, headers: Record<string, string> = {}, base = sim.url): Promise<Response> {
  return fetch(base + path, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify(body),
  });
}

/** The `data:` payloads of an SSE response, in order (including "[DONE]"). */
async function sseData(res: Response): Promise<string[]> {
  const text = await res.text();
  return text
    .split('\n\n')
    .filter((e) => e.length > 0)
    .map((e) => {
      expect(e.startsWith('data: ')).toBe(true);
      return e.slice('data: '.length);
    });
}

const chunks = (data: string[]) => data.filter((d) => d !== '[DONE]').map((d) => JSON.parse(d));
const streamedText = (data: string[]) =>
  chunks(data)
    .map((c) => c.choices[0]?.delta?.content ?? '')
    .join('');

function decodeBase64(b64: string): number[] {
  const buf = Buffer.from(b64, 'base64');
  return Array.from(new Float32Array(buf.buffer, buf.byteOffset, buf.byteLength / 4));
}
const norm = (v: number[]) => Math.sqrt(v.reduce((n, x) => n + x * x, 0));

describe('chat', () => {
  it('answers non-stream with the OpenAI shape and usage', async () => {
    const res = await post('/v1/chat/completions', { model: 'sim-chat', messages: user('Hello there world') });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('application/json');
    const body = await res.json();
    expect(body).toMatchObject({
      object: 'chat.completion',
      model: 'sim-chat',
      system_fingerprint: 'fp_sim',
      choices: [{ index: 0, message: { role: 'assistant' }, logprobs: null, finish_reason: 'stop' }],
    });
    expect(body.id).toMatch(/^chatcmpl-[0-9a-f]+$/);
    expect(typeof body.created).toBe('number');
    const content: string = body.choices[0].message.content;
    expect(content.startsWith('Echo: hello there world hello')).toBe(true);
    expect(content.split(' ')).toHaveLength(20);
    expect(body.usage).toEqual({ prompt_tokens: 4, completion_tokens: 26, total_tokens: 30 });
    // Deterministic: the same request gives the same id and content.
    const again = await (await post('/v1/chat/completions', { model: 'sim-chat', messages: user('Hello there world') })).json();
    expect(again.id).toBe(body.id);
    expect(again.choices[0].message.content).toBe(content);
  });

  it('streams chunks and [DONE]; usage chunk only with include_usage', async () => {
    const res = await post('/v1/chat/completions', { model: 'sim-chat', stream: true, messages: user('one two') });
    expect(res.headers.get('content-type')).toBe('text/event-stream');
    const data = await sseData(res);
    expect(data.at(-1)).toBe('[DONE]');
    const cs = chunks(data);
    expect(cs[0].choices[0].delta).toEqual({ role: 'assistant', content: '', refusal: null });
    expect(cs.at(-1).choices[0]).toMatchObject({ delta: {}, finish_reason: 'stop' });
    expect(cs.every((c) => c.object === 'chat.completion.chunk' && !('usage' in c))).toBe(true);
    expect(cs.length).toBe(1 + 20 + 1); // role, one chunk a word, stop
    expect(streamedText(data)).toBe(`Echo: ${'one two '.repeat(9)}one`); // 20 words: "Echo:" + 19

    const withUsage = await sseData(
      await post('/v1/chat/completions', { model: 'sim-chat', stream: true, stream_options: { include_usage: true }, messages: user('one two') }),
    );
    const cu = chunks(withUsage);
    const last = cu.at(-1);
    expect(last.choices).toEqual([]);
    expect(last.usage).toEqual({ prompt_tokens: 3, completion_tokens: 26, total_tokens: 29 });
    expect(cu.slice(0, -1).every((c) => c.usage === null)).toBe(true);
    expect(withUsage.at(-1)).toBe('[DONE]');
  });

  it('sim-tools calls the tool, then answers with the tool result', async () => {
    const tools = [{ type: 'function', function: { name: 'get_weather', parameters: { required: ['city'] } } }];
    const first = await (await post('/v1/chat/completions', { model: 'sim-tools', tools, messages: user('weather in Paris') })).json();
    expect(first.choices[0].finish_reason).toBe('tool_calls');
    const call = first.choices[0].message.tool_calls[0];
    expect(first.choices[0].message.content).toBeNull();
    expect(call).toMatchObject({ type: 'function', function: { name: 'get_weather', arguments: '{"city":"paris"}' } });
    expect(call.id).toMatch(/^call_[0-9a-f]+$/);

    // Streamed: the call's arguments arrive in two pieces.
    const streamed = chunks(await sseData(await post('/v1/chat/completions', { model: 'sim-tools', stream: true, tools, messages: user('weather in Paris') })));
    const args = streamed.map((c) => c.choices[0]?.delta?.tool_calls?.[0]?.function?.arguments ?? '').join('');
    expect(args).toBe('{"city":"paris"}');
    expect(streamed.at(-1).choices[0].finish_reason).toBe('tool_calls');

    const messages = [
      ...user('weather in Paris'),
      { role: 'assistant', content: null, tool_calls: [call] },
      { role: 'tool', tool_call_id: call.id, content: 'sunny, 21C' },
    ];
    const second = await (await post('/v1/chat/completions', { model: 'sim-tools', tools, messages })).json();
    expect(second.choices[0]).toMatchObject({ finish_reason: 'stop', message: { role: 'assistant', content: 'Tool result: sunny, 21C' } });
  });

  it('sim-tools answers the legacy functions field with a function_call', async () => {
    const functions = [{ name: 'get_weather', parameters: { required: ['city', 'day'] } }];
    const first = await (
      await post('/v1/chat/completions', { model: 'sim-tools', functions, function_call: { name: 'get_weather' }, messages: user('weather in Paris') })
    ).json();
    expect(first.choices[0].finish_reason).toBe('function_call');
    expect(first.choices[0].message).toEqual({
      role: 'assistant',
      content: null,
      function_call: { name: 'get_weather', arguments: '{"city":"paris","day":"paris"}' },
    });

    const streamed = chunks(
      await sseData(await post('/v1/chat/completions', { model: 'sim-tools', stream: true, functions, messages: user('weather in Paris') })),
    );
    expect(streamed[1].choices[0].delta).toEqual({ function_call: { name: 'get_weather', arguments: '' } });
    expect(streamed.map((c) => c.choices[0]?.delta?.function_call?.arguments ?? '').join('')).toBe('{"city":"paris","day":"paris"}');
    expect(streamed.some((c) => c.choices[0]?.delta?.tool_calls)).toBe(false);
    expect(streamed.at(-1).choices[0].finish_reason).toBe('function_call');

    const messages = [
      ...user('weather in Paris'),
      { role: 'assistant', content: null, function_call: first.choices[0].message.function_call },
      { role: 'function', name: 'get_weather', content: 'sunny, 21C' },
    ];
    const second = await (await post('/v1/chat/completions', { model: 'sim-tools', functions, messages })).json();
    expect(second.choices[0]).toMatchObject({ finish_reason: 'stop', message: { content: 'Tool result: sunny, 21C' } });
    // function_call "none": an ordinary answer.
    const none = await (await post('/v1/chat/completions', { model: 'sim-tools', functions, function_call: 'none', messages: user('hi') })).json();
    expect(none.choices[0].message.content).toMatch(/^Echo: hi/);
  });

  it('sim-strict: 400 without stream, empty 200 stream with stream', async () => {
    for (const [params, message] of [
      [{ temperature: 0 }, 'Invalid parameter: temperature must be greater than 0'],
      [{ temperature: 0.25 }, 'Invalid parameter: temperature allows one decimal place'],
      [{ max_tokens: 5000 }, 'Invalid parameter: max_tokens must be at most 4096'],
    ] as const) {
      const res = await post('/v1/chat/completions', { model: 'sim-strict', ...params, messages: user('hi') });
      expect(res.status).toBe(400);
      expect(await res.json()).toEqual({ error: { message, type: 'invalid_request_error', param: null, code: 'invalid_parameter' } });
    }
    const res = await post('/v1/chat/completions', { model: 'sim-strict', temperature: 0, stream: true, messages: user('hi') });
    expect(res.status).toBe(200);
    const data = await sseData(res);
    expect(data.at(-1)).toBe('[DONE]');
    expect(chunks(data)).toHaveLength(1); // only the role chunk: no content, no finish
    expect(streamedText(data)).toBe('');
    const ok = await post('/v1/chat/completions', { model: 'sim-strict', temperature: 0.7, messages: user('hi') });
    expect(ok.status).toBe(200);
  });

  it('unknown model is 404 model_not_found', async () => {
    const res = await post('/v1/chat/completions', { model: 'gpt-nope', messages: user('x') });
    expect(res.status).toBe(404);
    expect((await res.json()).error).toMatchObject({ code: 'model_not_found', type: 'invalid_request_error' });
  });
});

describe('embeddings and rerank', () => {
  it('sim-embed-<D>: norm 1, D dims, base64 decodes to the same vector', async () => {
    const body = await (await post('/v1/embeddings', { model: 'sim-embed-64', input: ['hello world', 'other text'] })).json();
    expect(body.object).toBe('list');
    expect(body.data).toHaveLength(2);
    expect(body.data[1]).toMatchObject({ object: 'embedding', index: 1 });
    const v: number[] = body.data[0].embedding;
    expect(v).toHaveLength(64);
    expect(norm(v)).toBeCloseTo(1, 4);
    expect(body.usage).toEqual({ prompt_tokens: 6, total_tokens: 6 });

    const defaultDims = await (await post('/v1/embeddings', { model: 'sim-embed', input: 'hello world' })).json();
    expect(defaultDims.data[0].embedding).toHaveLength(384);

    const b64 = await (await post('/v1/embeddings', { model: 'sim-embed-64', input: 'hello world', encoding_format: 'base64' })).json();
    expect(typeof b64.data[0].embedding).toBe('string');
    const decoded = decodeBase64(b64.data[0].embedding);
    expect(decoded).toHaveLength(64);
    decoded.forEach((x, i) => expect(x).toBeCloseTo(v[i], 6));
  });

  it('sim-embed-raw-<D> is not normalised', async () => {
    const body = await (await post('/v1/embeddings', { model: 'sim-embed-raw-32', input: 'hello world' })).json();
    const v: number[] = body.data[0].embedding;
    expect(v).toHaveLength(32);
    expect(Math.abs(norm(v) - 1)).toBeGreaterThan(0.5);
  });

  it('rejects bad input', async () => {
    const res = await post('/v1/embeddings', { model: 'sim-embed-32', input: [1, 2] });
    expect(res.status).toBe(400);
    expect((await res.json()).error.param).toBe('input');
  });

  it('sim-rerank orders by word overlap and honours top_n', async () => {
    const body = await (
      await post('/v1/rerank', {
        model: 'sim-rerank',
        query: 'red apple pie',
        documents: ['green pear', 'apple pie recipe', { text: 'red apple pie' }, 'pie'],
        top_n: 3,
      })
    ).json();
    expect(body.id).toMatch(/^rerank-/);
    expect(body.results.map((r: { index: number }) => r.index)).toEqual([2, 1, 3]);
    expect(body.results[0].relevance_score).toBe(1);
    expect(body.meta.tokens.input_tokens).toBeGreaterThan(0);
  });
});

describe('gateway-test models', () => {
  it('sim-big-<N> streams one content chunk of N bytes', async () => {
    const n = 3_000_000;
    const res = await post('/v1/chat/completions', { model: `sim-big-${n}`, stream: true, messages: user('x') });
    const data = await sseData(res);
    const contentChunks = chunks(data).filter((c) => c.choices[0]?.delta?.content);
    expect(contentChunks).toHaveLength(1);
    const content: string = contentChunks[0].choices[0].delta.content;
    expect(content.length).toBe(n);
    expect(content.slice(0, 25)).toBe('abcdefghijabcdefghijabcde');
    const bigLine = data.find((d) => d.includes('"content":"abcdefghij'))!;
    expect(bigLine.length).toBeGreaterThan(n);

    const nonStream = await (await post('/v1/chat/completions', { model: 'sim-big-25', messages: user('x') })).json();
    expect(nonStream.choices[0].message.content).toBe('abcdefghijabcdefghijabcde');
  });

  it('sim-flaky-<K> fails K times, then answers; reset starts over', async () => {
    const statuses = async (model: string, n: number) => {
      const out: number[] = [];
      for (let i = 0; i < n; i++) {
        const res = await post('/v1/chat/completions', { model, messages: user('hi') });
        await res.arrayBuffer();
        out.push(res.status);
      }
      return out;
    };
    expect(await statuses('sim-flaky-2', 4)).toEqual([503, 503, 200, 200]);
    expect(await statuses('sim-flaky-2:other', 3)).toEqual([503, 503, 200]); // counted per exact name
    expect(await statuses('sim-flaky', 2)).toEqual([503, 200]);
    sim.reset();
    expect(await statuses('sim-flaky-2', 3)).toEqual([503, 503, 200]);
    const res = await post('/sim/reset', {});
    expect(await res.json()).toEqual({ ok: true });
    expect(await statuses('sim-flaky-1', 2)).toEqual([503, 200]);
  });

  it('sim-nousage never sends usage', async () => {
    const body = await (await post('/v1/chat/completions', { model: 'sim-nousage', messages: user('hi') })).json();
    expect(body.choices[0].message.content).toMatch(/^Echo: hi/);
    expect('usage' in body).toBe(false);
    const data = await sseData(
      await post('/v1/chat/completions', { model: 'sim-nousage', stream: true, stream_options: { include_usage: true }, messages: user('hi') }),
    );
    expect(data.at(-1)).toBe('[DONE]');
    expect(chunks(data).some((c) => 'usage' in c)).toBe(false);
    expect(streamedText(data)).toMatch(/^Echo: hi hi/);
  });

  it('sim-no-stream-options rejects stream_options', async () => {
    const res = await post('/v1/chat/completions', {
      model: 'sim-no-stream-options',
      stream: true,
      stream_options: { include_usage: true },
      messages: user('hi'),
    });
    expect(res.status).toBe(400);
    expect(await res.text()).toBe(
      '{"error":{"message":"Unrecognized request argument supplied: stream_options","type":"invalid_request_error","param":"stream_options","code":null}}',
    );
    const ok = await post('/v1/chat/completions', { model: 'sim-no-stream-options', stream: true, messages: user('hi') });
    expect(ok.status).toBe(200);
    expect((await sseData(ok)).at(-1)).toBe('[DONE]');
  });

  it('sim-500, sim-400 and sim-503 fail with fixed bodies', async () => {
    const r500 = await post('/v1/chat/completions', { model: 'sim-500', messages: user('hi') });
    expect(r500.status).toBe(500);
    expect(await r500.text()).toBe('{"error":{"message":"internal upstream failure","type":"server_error"}}');
    const r400 = await post('/v1/chat/completions', { model: 'sim-400', messages: user('hi') });
    expect(r400.status).toBe(400);
    expect(await r400.json()).toEqual({
      error: { message: "Invalid 'messages[0].role': unknown role", type: 'invalid_request_error', param: 'messages', code: null },
    });
    const r503 = await post('/v1/chat/completions', { model: 'sim-503', messages: user('hi') });
    expect(r503.status).toBe(503);
  });

  it('sim-hang never answers; the client gives up', async () => {
    const started = Date.now();
    await expect(
      fetch(`${sim.url}/v1/chat/completions`, {
        method: 'POST',
        body: JSON.stringify({ model: 'sim-hang', messages: user('hi') }),
        signal: AbortSignal.timeout(200),
      }),
    ).rejects.toThrow();
    expect(Date.now() - started).toBeGreaterThanOrEqual(150);
    expect(sim.stats().byModel['sim-hang']).toBe(1);
  });
});

describe('stats, key and lifecycle', () => {
  it('counts per model and path, keeps the last body and auth presence', async () => {
    await (await post('/v1/chat/completions', { model: 'sim-chat', messages: user('a') })).arrayBuffer();
    await (await post('/v1/chat/completions', { model: 'sim-chat', messages: user('b') }, { authorization: 'Bearer secret' })).arrayBuffer();
    await (await post('/v1/embeddings', { model: 'sim-embed-8', input: 'x' })).arrayBuffer();
    const s = sim.stats();
    expect(s.total).toBe(3);
    expect(s.byModel).toEqual({ 'sim-chat': 2, 'sim-embed-8': 1 });
    expect(s.byPath).toEqual({ '/v1/chat/completions': 2, '/v1/embeddings': 1 });
    expect(s.lastBody['sim-chat']).toEqual({ model: 'sim-chat', messages: user('b') });
    expect(s.lastRequest).toEqual({ method: 'POST', path: '/v1/embeddings', model: 'sim-embed-8', authorization: false, kbchatPriority: null });
    const over = await (await fetch(`${sim.url}/sim/stats`)).json();
    expect(over.total).toBe(3);
    expect(JSON.stringify(over)).not.toContain('secret');
    sim.reset();
    expect(sim.stats()).toEqual({ total: 0, byModel: {}, byPath: {}, lastBody: {}, lastRequest: null });
  });

  it('with a key, a wrong or missing key is 401', async () => {
    const keyed = await startUpstreamSim({ port: 0, key: 'sk-sim' });
    try {
      const bad = await post('/v1/chat/completions', { model: 'sim-chat', messages: user('x') }, { authorization: 'Bearer sk-wrongkey' }, keyed.url);
      expect(bad.status).toBe(401);
      expect(await bad.json()).toEqual({
        error: {
          message: 'Incorrect API key provided: sk-wro****. You can find your API key in your account settings.',
          type: 'invalid_request_error',
          param: null,
          code: 'invalid_api_key',
        },
      });
      const missing = await post('/v1/chat/completions', { model: 'sim-chat', messages: user('x') }, {}, keyed.url);
      expect(missing.status).toBe(401);
      await missing.arrayBuffer();
      const good = await post('/v1/chat/completions', { model: 'sim-chat', messages: user('x') }, { authorization: 'Bearer sk-sim' }, keyed.url);
      expect(good.status).toBe(200);
      await good.arrayBuffer();
      expect(keyed.stats().lastRequest?.authorization).toBe(true);
      expect(keyed.stats().total).toBe(1);
    } finally {
      await keyed.close();
    }
  });

  it('takes further keys, and answers a key out of quota as each provider does', async () => {
    const keyed = await startUpstreamSim({ port: 0, key: 'sk-sim', keys: ['sk-sim-2'], exhaustedKeys: ['sk-spent'] });
    const chat = (key: string) => post('/v1/chat/completions', { model: 'sim-chat', messages: user('x') }, { authorization: `Bearer ${key}` }, keyed.url);
    try {
      for (const key of ['sk-sim', 'sk-sim-2']) {
        const ok = await chat(key);
        expect(ok.status).toBe(200);
        await ok.arrayBuffer();
      }
      const wrong = await chat('sk-other');
      expect(wrong.status).toBe(401);
      await wrong.arrayBuffer();
      const spent = await chat('sk-spent');
      expect(spent.status).toBe(429);
      expect((await spent.json()).error).toMatchObject({ type: 'insufficient_quota', code: 'insufficient_quota' });
      const claude = await post(
        '/v1/messages',
        { model: 'claude-sim', max_tokens: 8, messages: user('x') },
        { 'x-api-key': 'sk-spent', 'anthropic-version': '2023-06-01' },
        keyed.url,
      );
      expect(claude.status).toBe(400);
      expect((await claude.json()).error.message).toMatch(/credit balance is too low/);
      const gemini = await post(
        '/v1beta/models/gemini-sim:generateContent',
        { contents: [{ role: 'user', parts: [{ text: 'x' }] }] },
        { 'x-goog-api-key': 'sk-spent' },
        keyed.url,
      );
      expect(gemini.status).toBe(429);
      expect((await gemini.json()).error.status).toBe('RESOURCE_EXHAUSTED');
      const geminiOk = await post(
        '/v1beta/models/gemini-sim:generateContent',
        { contents: [{ role: 'user', parts: [{ text: 'x' }] }] },
        { 'x-goog-api-key': 'sk-sim-2' },
        keyed.url,
      );
      expect(geminiOk.status).toBe(200);
      await geminiOk.arrayBuffer();
    } finally {
      await keyed.close();
    }
  });

  it('rate-limits with rpm', async () => {
    const limited = await startUpstreamSim({ port: 0, rpm: 2 });
    try {
      const codes: number[] = [];
      for (let i = 0; i < 3; i++) {
        const res = await post('/v1/chat/completions', { model: 'sim-chat', messages: user('x') }, {}, limited.url);
        await res.arrayBuffer();
        codes.push(res.status);
      }
      expect(codes).toEqual([200, 200, 429]);
    } finally {
      await limited.close();
    }
  });

  it('close() ends hanging requests promptly', async () => {
    const other = await startUpstreamSim({ port: 0 });
    const pending = fetch(`${other.url}/v1/chat/completions`, {
      method: 'POST',
      body: JSON.stringify({ model: 'sim-hang', messages: user('hi') }),
    }).then(
      () => 'answered',
      () => 'failed',
    );
    // Wait until the request reached the simulator.
    while (other.stats().total === 0) await new Promise((r) => setTimeout(r, 5));
    const started = Date.now();
    await other.close();
    expect(await pending).toBe('failed');
    expect(Date.now() - started).toBeLessThan(1000);
  });
});
