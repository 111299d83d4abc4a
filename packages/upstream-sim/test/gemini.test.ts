// The simulator's Gemini API over real HTTP: generateContent, the SSE stream,
// function calls, safety blocks, errors in Google's envelope, embeddings.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startUpstreamSim, type UpstreamSim } from '../src/index.js';

const KEY = 'AIza-sim';
let sim: UpstreamSim;

beforeAll(async () => {
  sim = await startUpstreamSim({ port: 0, key: KEY, tokens: 20, tokenDelayMs: 0 });
});
afterAll(() => sim.close());
beforeEach(() => sim.reset());

function call(model: string, method: string, body: unknown, opts: { query?: string; headers?: Record<string, string> } = {}): Promise<Response> {
  return fetch(`${sim.url}/v1beta/models/${model}:${method}${opts.query ?? ''}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(opts.headers ?? { 'x-goog-api-key': KEY }) },
    body: JSON.stringify(body),
  });
}

/** The JSON of each SSE frame (Gemini's frames end in CRLF CRLF). */
async function frames(res: Response): Promise<any[]> {
  const text = await res.text();
  expect(text.endsWith('\r\n\r\n')).toBe(true);
  return text
    .split('\r\n\r\n')
    .filter(Boolean)
    .map((f) => {
      expect(f.startsWith('data: ')).toBe(true);
      return JSON.parse(f.slice(6));
    });
}

const user = (text: string) => ({ role: 'user', parts: [{ text }] });
const norm = (v: number[]) => Math.sqrt(v.reduce((n, x) => n + x * x, 0));
const weather = {
  functionDeclarations: [
    { name: 'get_weather', description: 'Weather of a city', parameters: { type: 'OBJECT', properties: { city: { type: 'STRING' } }, required: ['city'] } },
  ],
};

describe('gemini: generateContent', () => {
  it('answers with candidates and usageMetadata; the key may come as ?key=', async () => {
    const body = { systemInstruction: { parts: [{ text: 'Be brief.' }] }, contents: [user('Hello there world')], generationConfig: { temperature: 0.5 } };
    const res = await call('gemini-sim', 'generateContent', body, { query: `?key=${KEY}`, headers: {} });
    expect(res.status).toBe(200);
    const r = await res.json();
    expect(r.candidates).toHaveLength(1);
    expect(r.candidates[0]).toMatchObject({ content: { role: 'model' }, finishReason: 'STOP', index: 0 });
    expect(r.candidates[0].content.parts[0].text.startsWith('Echo: hello there world hello')).toBe(true);
    expect(r.usageMetadata).toEqual({ promptTokenCount: 7, candidatesTokenCount: 26, totalTokenCount: 33 });
    expect(r.modelVersion).toBe('gemini-sim');
    expect(sim.stats().lastRequest).toMatchObject({ model: 'gemini-sim', authorization: false });
  });

  it('streams SSE frames of a few words, the last with finishReason and full usage', async () => {
    const res = await call('gemini-sim', 'streamGenerateContent', { contents: [user('one two')] }, { query: '?alt=sse' });
    expect(res.headers.get('content-type')).toBe('text/event-stream');
    const fs = await frames(res);
    expect(fs).toHaveLength(5);
    expect(fs.slice(0, -1).every((f) => !f.candidates[0].finishReason && f.usageMetadata.candidatesTokenCount === undefined)).toBe(true);
    expect(fs.at(-1).candidates[0].finishReason).toBe('STOP');
    expect(fs.at(-1).usageMetadata).toEqual({ promptTokenCount: 3, candidatesTokenCount: 26, totalTokenCount: 29 });
    expect(fs.map((f) => f.candidates[0].content.parts[0].text).join('')).toBe(`Echo: ${'one two '.repeat(9)}one`);
    // Without alt=sse: one JSON array of the same responses.
    const array = await (await call('gemini-sim', 'streamGenerateContent', { contents: [user('one two')] })).json();
    expect(array).toEqual(fs);
  });

  it('gemini-sim-tools: functionCall, then an answer from the functionResponse', async () => {
    const contents: any[] = [user('weather in Paris')];
    const first = await (await call('gemini-sim-tools', 'generateContent', { contents, tools: [weather] })).json();
    expect(first.candidates[0]).toMatchObject({
      finishReason: 'STOP',
      content: { parts: [{ functionCall: { name: 'get_weather', args: { city: 'paris' } } }] },
    });
    contents.push(first.candidates[0].content, { role: 'user', parts: [{ functionResponse: { name: 'get_weather', response: { result: 'sunny, 21C' } } }] });
    const second = await (await call('gemini-sim-tools', 'generateContent', { contents, tools: [weather] })).json();
    expect(second.candidates[0].content.parts).toEqual([{ text: 'Tool result: sunny, 21C' }]);
    const none = await (
      await call('gemini-sim-tools', 'generateContent', { contents: [user('hi')], tools: [weather], toolConfig: { functionCallingConfig: { mode: 'NONE' } } })
    ).json();
    expect(none.candidates[0].content.parts[0].text).toMatch(/^Echo: hi/);
  });

  it('safety: a blocked prompt has promptFeedback and no candidates; a late block ends with finishReason SAFETY', async () => {
    const blocked = await (await call('gemini-sim-safety', 'generateContent', { contents: [user('hi')] })).json();
    expect(blocked.candidates).toBeUndefined();
    expect(blocked.promptFeedback.blockReason).toBe('SAFETY');
    const late = await frames(await call('gemini-sim-safety-late', 'streamGenerateContent', { contents: [user('one two')] }, { query: '?alt=sse' }));
    expect(late).toHaveLength(3);
    expect(late.at(-1).candidates[0]).toMatchObject({ finishReason: 'SAFETY' });
    expect(late.at(-1).candidates[0].safetyRatings.some((r: any) => r.blocked)).toBe(true);
  });

  it('maxOutputTokens ends with MAX_TOKENS; stopSequences cut with STOP', async () => {
    const short = await (await call('gemini-sim', 'generateContent', { contents: [user('one two three')], generationConfig: { maxOutputTokens: 5 } })).json();
    expect(short.candidates[0].finishReason).toBe('MAX_TOKENS');
    expect(short.usageMetadata.candidatesTokenCount).toBe(5);
    const stopped = await (
      await call('gemini-sim', 'generateContent', { contents: [user('one two three')], generationConfig: { stopSequences: ['three'] } })
    ).json();
    expect(stopped.candidates[0]).toMatchObject({ finishReason: 'STOP', content: { parts: [{ text: 'Echo: one two ' }] } });
  });

  it("errors come in Google's envelope", async () => {
    const cases: [string, unknown, number, string, string][] = [
      ['gemini-sim', { contents: [user('hi')], messages: [] }, 400, 'INVALID_ARGUMENT', 'Unknown name "messages"'],
      [
        'gemini-sim',
        { contents: [user('hi')], generationConfig: { max_tokens: 5 } },
        400,
        'INVALID_ARGUMENT',
        `Unknown name "max_tokens" at 'generation_config'`,
      ],
      ['gemini-sim', { contents: [{ role: 'assistant', parts: [{ text: 'x' }] }] }, 400, 'INVALID_ARGUMENT', 'Please use a valid role: user, model.'],
      ['gemini-sim', { contents: [] }, 400, 'INVALID_ARGUMENT', 'contents is not specified'],
      ['gemini-nope', { contents: [user('hi')] }, 404, 'NOT_FOUND', 'models/gemini-nope is not found'],
      ['gemini-sim-429', { contents: [user('hi')] }, 429, 'RESOURCE_EXHAUSTED', 'Resource has been exhausted'],
      ['gemini-sim-503', { contents: [user('hi')] }, 503, 'UNAVAILABLE', 'overloaded'],
      ['gemini-sim-400', { contents: [user('hi')] }, 400, 'INVALID_ARGUMENT', 'invalid argument'],
      ['gemini-sim-500', { contents: [user('hi')] }, 500, 'INTERNAL', 'internal error'],
    ];
    for (const [model, body, code, status, message] of cases) {
      const res = await call(model, 'generateContent', body);
      expect(res.status, message).toBe(code);
      const { error } = await res.json();
      expect(error).toMatchObject({ code, status });
      expect(error.message).toContain(message);
    }
    const wrong = await call('gemini-sim', 'generateContent', { contents: [user('hi')] }, { headers: { 'x-goog-api-key': 'AIza-wrong' } });
    expect(wrong.status).toBe(400);
    expect((await wrong.json()).error.details[0].reason).toBe('API_KEY_INVALID');
    const missing = await call('gemini-sim', 'generateContent', { contents: [user('hi')] }, { headers: {} });
    expect(missing.status).toBe(403);
    expect((await missing.json()).error.status).toBe('PERMISSION_DENIED');
  });

  it('gemini-sim-drop loses the connection mid-stream', async () => {
    await expect(
      call('gemini-sim-drop', 'streamGenerateContent', { contents: [user('one two')] }, { query: '?alt=sse' }).then((r) => r.text()),
    ).rejects.toThrow();
  });
});

describe('gemini: embeddings', () => {
  it('full-size vectors are normalised, outputDimensionality ones are not; batches hold at most 100', async () => {
    const one = await (await call('gemini-sim-embed-768', 'embedContent', { content: { parts: [{ text: 'the office opens at nine' }] } })).json();
    expect(one.embedding.values).toHaveLength(768);
    expect(norm(one.embedding.values)).toBeCloseTo(1, 4);

    const model = 'models/gemini-sim-embed-768';
    const batch = await (
      await call('gemini-sim-embed-768', 'batchEmbedContents', {
        requests: [
          { model, content: { parts: [{ text: 'the office opens at nine' }] } },
          { model, content: { parts: [{ text: 'the office opens at nine' }] }, outputDimensionality: 256 },
        ],
      })
    ).json();
    expect(batch.embeddings[0].values).toEqual(one.embedding.values);
    expect(batch.embeddings[1].values).toEqual(one.embedding.values.slice(0, 256));
    expect(norm(batch.embeddings[1].values)).toBeLessThan(0.99);
    expect(batch.usageMetadata).toBeUndefined();

    const many = { requests: Array.from({ length: 101 }, () => ({ model, content: { parts: [{ text: 'x' }] } })) };
    const tooMany = await call('gemini-sim-embed-768', 'batchEmbedContents', many);
    expect(tooMany.status).toBe(400);
    expect((await tooMany.json()).error.message).toContain('at most 100 requests can be in one batch');
    const wrongModel = await call('gemini-sim-embed-768', 'batchEmbedContents', { requests: [{ model: 'models/other', content: { parts: [{ text: 'x' }] } }] });
    expect(wrongModel.status).toBe(400);
    expect((await call('gemini-sim', 'embedContent', { content: { parts: [{ text: 'x' }] } })).status).toBe(404);
  });
});
