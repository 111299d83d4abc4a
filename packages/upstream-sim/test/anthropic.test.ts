// The simulator's Anthropic Messages API, over real HTTP, and read by the
// official @anthropic-ai/sdk (its stream accumulator checks the event order).
import Anthropic from '@anthropic-ai/sdk';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startUpstreamSim, type UpstreamSim } from '../src/index.js';

const KEY = 'sk-ant-sim';
let sim: UpstreamSim;
let client: Anthropic;

beforeAll(async () => {
  sim = await startUpstreamSim({ port: 0, key: KEY, tokens: 20, tokenDelayMs: 0 });
  client = new Anthropic({ apiKey: KEY, baseURL: sim.url, maxRetries: 0 });
});
afterAll(() => sim.close());
beforeEach(() => sim.reset());

function post(body: unknown, headers: Record<string, string> = { 'x-api-key': KEY, 'anthropic-version': '2023-06-01' }): Promise<Response> {
  return fetch(`${sim.url}/v1/messages`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) });
}

/** [event, data] pairs of an Anthropic SSE body. */
async function events(res: Response): Promise<[string, any][]> {
  const text = await res.text();
  return text
    .split('\n\n')
    .filter(Boolean)
    .map((frame) => {
      const [e, d] = frame.split('\n');
      expect(e.startsWith('event: ') && d.startsWith('data: ')).toBe(true);
      return [e.slice(7), JSON.parse(d.slice(6))];
    });
}

const weatherTool = {
  name: 'get_weather',
  description: 'Weather of a city',
  input_schema: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
};

describe('anthropic: /v1/messages', () => {
  it('answers through the official SDK, non-stream and stream, with usage', async () => {
    const msg = await client.messages.create({
      model: 'claude-sim',
      max_tokens: 100,
      system: 'Be brief.',
      messages: [{ role: 'user', content: 'Hello there world' }],
    });
    expect(msg).toMatchObject({ type: 'message', role: 'assistant', model: 'claude-sim', stop_reason: 'end_turn', stop_sequence: null });
    expect(msg.id).toMatch(/^msg_/);
    expect(msg.content).toHaveLength(1);
    const text = (msg.content[0] as { text: string }).text;
    expect(text.startsWith('Echo: hello there world hello')).toBe(true);
    expect(msg.usage).toMatchObject({ input_tokens: 7, output_tokens: 26, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 });

    const stream = client.messages.stream({
      model: 'claude-sim',
      max_tokens: 100,
      system: 'Be brief.',
      messages: [{ role: 'user', content: 'Hello there world' }],
    });
    const final = await stream.finalMessage();
    expect((final.content[0] as { text: string }).text).toBe(text);
    expect(final.usage.output_tokens).toBe(26);
    expect(final.stop_reason).toBe('end_turn');
  });

  it('streams the documented event sequence', async () => {
    const ev = await events(await post({ model: 'claude-sim', max_tokens: 100, stream: true, messages: [{ role: 'user', content: 'one two' }] }));
    const names = ev.map(([e]) => e);
    expect(names.slice(0, 3)).toEqual(['message_start', 'content_block_start', 'ping']);
    expect(names.slice(-3)).toEqual(['content_block_stop', 'message_delta', 'message_stop']);
    expect(names.filter((n) => n === 'content_block_delta')).toHaveLength(20);
    expect(ev.every(([e, d]) => d.type === e)).toBe(true);
    expect(ev[0][1].message).toMatchObject({ content: [], stop_reason: null, usage: { input_tokens: 3, output_tokens: 1 } });
    expect(ev.at(-2)![1]).toEqual({ type: 'message_delta', delta: { stop_reason: 'end_turn', stop_sequence: null }, usage: { output_tokens: 26 } });
  });

  it('claude-sim-tools: tool_use then an answer from the tool_result, through the SDK', async () => {
    const messages: Anthropic.MessageParam[] = [{ role: 'user', content: 'weather in Paris' }];
    const first = await client.messages.stream({ model: 'claude-sim-tools', max_tokens: 100, tools: [weatherTool], messages }).finalMessage();
    expect(first.stop_reason).toBe('tool_use');
    expect(first.content[0]).toMatchObject({ type: 'text', text: "I'll call get_weather." });
    const use = first.content[1] as Anthropic.ToolUseBlock;
    expect(use).toMatchObject({ type: 'tool_use', name: 'get_weather', input: { city: 'paris' } });
    expect(use.id).toMatch(/^toolu_/);

    messages.push(
      { role: 'assistant', content: first.content },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: use.id, content: 'sunny, 21C' }] },
    );
    const second = await client.messages.create({ model: 'claude-sim-tools', max_tokens: 100, tools: [weatherTool], messages });
    expect(second.content).toEqual([{ type: 'text', text: 'Tool result: sunny, 21C' }]);
    expect(second.stop_reason).toBe('end_turn');

    // Forced: the call alone, no text before it.
    const forced = await client.messages.create({
      model: 'claude-sim-tools',
      max_tokens: 100,
      tools: [weatherTool],
      tool_choice: { type: 'any' },
      messages: messages.slice(0, 1),
    });
    expect(forced.content.map((b) => b.type)).toEqual(['tool_use']);
  });

  it('refuses what Anthropic refuses, in its wording', async () => {
    const cases: [unknown, number, string, string][] = [
      [{ model: 'claude-sim', messages: [{ role: 'user', content: 'hi' }] }, 400, 'invalid_request_error', 'max_tokens: Field required'],
      [
        { model: 'claude-sim', max_tokens: 5, stream_options: {}, messages: [{ role: 'user', content: 'hi' }] },
        400,
        'invalid_request_error',
        'stream_options: Extra inputs are not permitted',
      ],
      [
        { model: 'claude-sim', max_tokens: 5, temperature: 1.5, messages: [{ role: 'user', content: 'hi' }] },
        400,
        'invalid_request_error',
        'temperature: Input should be a number between 0 and 1',
      ],
      [
        { model: 'claude-sim', max_tokens: 5, messages: [{ role: 'system', content: 'hi' }] },
        400,
        'invalid_request_error',
        'messages: Unexpected role "system"',
      ],
      [
        { model: 'claude-sim', max_tokens: 5, messages: [{ role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_x', content: 'r' }] }] },
        400,
        'invalid_request_error',
        'unexpected `tool_use_id` found in `tool_result` blocks: toolu_x',
      ],
      [
        { model: 'claude-sim', max_tokens: 5, messages: [{ role: 'user', content: [{ type: 'text', text: '' }] }] },
        400,
        'invalid_request_error',
        'text content blocks must be non-empty',
      ],
      [{ model: 'claude-nope', max_tokens: 5, messages: [{ role: 'user', content: 'hi' }] }, 404, 'not_found_error', 'model: claude-nope'],
      [{ model: 'claude-sim-529', max_tokens: 5, messages: [{ role: 'user', content: 'hi' }] }, 529, 'overloaded_error', 'Overloaded'],
      [{ model: 'claude-sim-429', max_tokens: 5, messages: [{ role: 'user', content: 'hi' }] }, 429, 'rate_limit_error', 'rate limit'],
      [{ model: 'claude-sim-500', max_tokens: 5, messages: [{ role: 'user', content: 'hi' }] }, 500, 'api_error', 'Internal server error'],
    ];
    for (const [body, status, type, message] of cases) {
      const res = await post(body);
      expect(res.status, message).toBe(status);
      expect(res.headers.get('request-id')).toMatch(/^req_/);
      const err = await res.json();
      expect(err.type).toBe('error');
      expect(err.error.type).toBe(type);
      expect(err.error.message).toContain(message);
    }
    const noVersion = await post({ model: 'claude-sim', max_tokens: 5, messages: [{ role: 'user', content: 'hi' }] }, { 'x-api-key': KEY });
    expect(noVersion.status).toBe(400);
    const bearer = await post(
      { model: 'claude-sim', max_tokens: 5, messages: [{ role: 'user', content: 'hi' }] },
      { authorization: `Bearer ${KEY}`, 'anthropic-version': '2023-06-01' },
    );
    expect(bearer.status).toBe(200);
    const wrongKey = await post(
      { model: 'claude-sim', max_tokens: 5, messages: [{ role: 'user', content: 'hi' }] },
      { 'x-api-key': 'sk-wrong', 'anthropic-version': '2023-06-01' },
    );
    expect(wrongKey.status).toBe(401);
    expect((await wrongKey.json()).error).toEqual({ type: 'authentication_error', message: 'invalid x-api-key' });
    // The SDK reads the same errors as its own classes.
    await expect(client.messages.create({ model: 'claude-sim-529', max_tokens: 5, messages: [{ role: 'user', content: 'hi' }] })).rejects.toMatchObject({
      status: 529,
    });
  });

  it('cuts at stop_sequences and max_tokens, and reports prompt-cache writes then reads', async () => {
    const stopped = await client.messages.create({
      model: 'claude-sim',
      max_tokens: 100,
      stop_sequences: ['three'],
      messages: [{ role: 'user', content: 'one two three' }],
    });
    expect(stopped).toMatchObject({ stop_reason: 'stop_sequence', stop_sequence: 'three', content: [{ text: 'Echo: one two ' }] });
    const short = await client.messages.create({ model: 'claude-sim', max_tokens: 5, messages: [{ role: 'user', content: 'one two three' }] });
    expect(short.stop_reason).toBe('max_tokens');
    expect(short.usage.output_tokens).toBe(5);
    expect((short.content[0] as { text: string }).text.split(' ').filter(Boolean)).toHaveLength(3);

    const system = [{ type: 'text' as const, text: 'a long shared instruction about the office hours', cache_control: { type: 'ephemeral' as const } }];
    const ask = (q: string) => client.messages.create({ model: 'claude-sim', max_tokens: 50, system, messages: [{ role: 'user', content: q }] });
    const a = await ask('first question');
    expect(a.usage).toMatchObject({ cache_creation_input_tokens: 11, cache_read_input_tokens: 0, input_tokens: 3 });
    const b = await ask('second question here');
    expect(b.usage).toMatchObject({ cache_creation_input_tokens: 0, cache_read_input_tokens: 11, input_tokens: 4 });
  });

  it('claude-sim-drop loses the connection and claude-sim-stream-error sends an error event mid-stream', async () => {
    const body = (model: string) => ({ model, max_tokens: 100, stream: true, messages: [{ role: 'user', content: 'one two' }] });
    // Lost before or after the head went out (no token delay): either way the body never completes.
    await expect(post(body('claude-sim-drop')).then((r) => r.text())).rejects.toThrow();
    const ev = await events(await post(body('claude-sim-stream-error')));
    expect(ev.filter(([e]) => e === 'content_block_delta')).toHaveLength(3);
    expect(ev.at(-1)).toEqual(['error', { type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } }]);
    expect(sim.stats().lastRequest).toMatchObject({ path: '/v1/messages', model: 'claude-sim-stream-error', authorization: true });
  });
});
