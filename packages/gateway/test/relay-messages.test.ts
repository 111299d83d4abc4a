// POST /v1/messages through the real gateway, with the official Anthropic SDK
// as the client: over an OpenAI-compatible channel (sim-chat, sim-tools) and
// over an Anthropic channel (claude-sim), both to the project's simulator.
// Answers and streams in Anthropic's shape, tools across two turns, usage and
// its charge in the request log, errors in Anthropic's envelope (a bad body
// naming the field, a bad token, an upstream 503, a stream broken after its
// start), and the token in X-Api-Key or as a Bearer token.
import Anthropic, { APIError } from '@anthropic-ai/sdk';
import { startUpstreamSim, type UpstreamSim } from '@kbchat/upstream-sim';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { costMicros } from '../src/accounts/pricing.js';
import { ROOT_TOKEN, startTestGateway, type TestGateway } from './helpers.js';
import { apiError as sdkError, simCount } from './relay-support.js';

const KEY = 'sk-ant-sim-key';
const weather: Anthropic.Tool[] = [
  { name: 'get_weather', description: 'The weather in a city', input_schema: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] } },
];

const apiError = (call: Promise<unknown>) => sdkError(call, APIError);

describe('POST /v1/messages', () => {
  let sim: UpstreamSim;
  /** Streams slowly, so that content reaches the client before sim-drop cuts the connection. */
  let slow: UpstreamSim;
  let t: TestGateway;
  /** The SDK sending the token in X-Api-Key (apiKey), and as a Bearer token (authToken). */
  let viaApiKey: Anthropic;
  let viaBearer: Anthropic;

  beforeAll(async () => {
    sim = await startUpstreamSim({ port: 0, key: KEY });
    slow = await startUpstreamSim({ port: 0, key: KEY, tokenDelayMs: 30 });
    t = await startTestGateway({
      simInstance: sim,
      sim: { key: KEY },
      models: ['sim-chat', 'sim-tools', 'sim-503'],
      env: { CLAUDE_API_KEY: KEY, CLAUDE_BASE_URL: sim.url, CLAUDE_TYPE: 'anthropic', CLAUDE_MODELS: 'claude-sim,claude-sim-tools' },
    });
    await t.gw.services.channels.create({
      type: 'openai',
      name: 'slow',
      base_url: `${slow.url}/v1`,
      key: KEY,
      models: ['slow-drop'],
      model_mapping: { 'slow-drop': 'sim-drop' },
    });
    viaApiKey = xApiKeyClient(ROOT_TOKEN);
    viaBearer = new Anthropic({ apiKey: ROOT_TOKEN, baseURL: t.url, maxRetries: 0 });
  });
  afterAll(async () => {
    await t?.close();
    await Promise.all([sim?.close(), slow?.close()]);
  });
  beforeEach(() => t.sim.reset());

  /** This SDK sends its key as a Bearer token; older ones (and many tools) send it in X-Api-Key, as this client does. */
  function xApiKeyClient(key: string): Anthropic {
    return new Anthropic({ apiKey: 'unused', baseURL: t.url, maxRetries: 0, defaultHeaders: { authorization: null, 'x-api-key': key } });
  }

  async function logRow(requestId: string) {
    await t.gw.services.ledger.flush();
    const [row] = await t.gw.services.logsStore.list({ requestId }, 0, 10);
    return row!;
  }

  async function expectCharged(requestId: string, model: string, usage: Anthropic.Usage, stream: boolean) {
    const row = await logRow(requestId);
    const input = usage.input_tokens + (usage.cache_read_input_tokens ?? 0) + (usage.cache_creation_input_tokens ?? 0);
    expect(row).toMatchObject({
      status: 200,
      endpoint: 'chat',
      model,
      is_stream: stream ? 1 : 0,
      usage_source: 'upstream',
      prompt_tokens: input,
      completion_tokens: usage.output_tokens,
    });
    expect(Number(row.cost)).toBe(costMicros(t.gw.services.prices.priceOf(model), input, usage.output_tokens));
    expect(Number(row.cost)).toBeGreaterThan(0);
  }

  for (const model of ['sim-chat', 'claude-sim']) {
    describe(`over ${model === 'sim-chat' ? 'an OpenAI-compatible' : 'an Anthropic'} channel (${model})`, () => {
      it('answers a message with usage, charged in the request log', async () => {
        const { data: msg, response } = await viaApiKey.messages
          .create({ model, max_tokens: 64, system: 'Be brief.', messages: [{ role: 'user', content: 'hello from the claude sdk' }] })
          .withResponse();
        expect(msg).toMatchObject({ type: 'message', role: 'assistant', model, stop_reason: 'end_turn' });
        expect(msg.id).toMatch(/^msg_/);
        expect(msg.content).toHaveLength(1);
        expect(msg.content[0]!.type).toBe('text');
        expect((msg.content[0] as Anthropic.TextBlock).text).toContain('hello from the claude sdk');
        expect(msg.usage.input_tokens).toBeGreaterThan(0);
        expect(msg.usage.output_tokens).toBeGreaterThan(0);
        await expectCharged(response.headers.get('x-request-id')!, model, msg.usage, false);
        expect(simCount(t.sim, model)).toBe(1);
      });

      it("streams Anthropic events, read by the SDK's stream helper", async () => {
        const stream = viaBearer.messages.stream({ model, max_tokens: 64, messages: [{ role: 'user', content: 'stream this back' }] });
        const types: string[] = [];
        stream.on('streamEvent', (e) => types.push(e.type));
        const final = await stream.finalMessage();
        const text = await stream.finalText();
        expect(text).toContain('stream this back');
        expect(final.stop_reason).toBe('end_turn');
        expect(final.model).toBe(model);
        expect(types[0]).toBe('message_start');
        expect(types.slice(-2)).toEqual(['message_delta', 'message_stop']);
        expect(types).toContain('content_block_start');
        expect(types.filter((x) => x === 'content_block_delta').length).toBeGreaterThan(1);
        expect(types).toContain('content_block_stop');
        expect(final.usage.output_tokens).toBeGreaterThan(0);
        const { response } = await stream.withResponse();
        await expectCharged(response.headers.get('x-request-id')!, model, final.usage, true);
      });
    });
  }

  for (const model of ['sim-tools', 'claude-sim-tools']) {
    it(`calls a tool and answers its result on the second turn, stream and not (${model})`, async () => {
      const ask: Anthropic.MessageParam = { role: 'user', content: 'Weather in Paris?' };
      const first = await viaApiKey.messages.create({ model, max_tokens: 128, tools: weather, messages: [ask] });
      expect(first.stop_reason).toBe('tool_use');
      const use = first.content.find((b) => b.type === 'tool_use') as Anthropic.ToolUseBlock;
      expect(use).toMatchObject({ type: 'tool_use', name: 'get_weather', id: expect.any(String) });
      expect(typeof use.input).toBe('object');

      // The same turn streamed: the tool_use block's input built from input_json_delta pieces.
      const streamed = await viaApiKey.messages.stream({ model, max_tokens: 128, tools: weather, messages: [ask] }).finalMessage();
      expect(streamed.stop_reason).toBe('tool_use');
      expect(streamed.content.find((b) => b.type === 'tool_use')).toMatchObject({ name: 'get_weather', input: use.input });

      const second = await viaApiKey.messages.create({
        model,
        max_tokens: 128,
        tools: weather,
        messages: [
          ask,
          { role: 'assistant', content: first.content },
          { role: 'user', content: [{ type: 'tool_result', tool_use_id: use.id, content: 'sunny, 21 C' }] },
        ],
      });
      expect(second.stop_reason).toBe('end_turn');
      expect(second.content.map((b) => (b.type === 'text' ? b.text : '')).join('')).toContain('sunny, 21 C');
    });
  }

  describe("errors, in Anthropic's envelope with the request id", () => {
    it('a bad body: 400 invalid_request_error naming the field', async () => {
      const missing = await apiError(viaApiKey.messages.create({ model: 'sim-chat', messages: [{ role: 'user', content: 'hi' }] } as any));
      expect(missing.status).toBe(400);
      expect(missing.error).toMatchObject({ type: 'error', error: { type: 'invalid_request_error' } });
      expect((missing.error as any).error.message).toContain('max_tokens');
      const requestId = missing.headers?.get('x-request-id');
      expect((missing.error as any).request_id).toBe(requestId);
      expect(missing.requestID).toBe(requestId);
      expect((missing.error as any).error.message).toContain(`request id: ${requestId}`);

      const role = await apiError(viaApiKey.messages.create({ model: 'sim-chat', max_tokens: 8, messages: [{ role: 'system', content: 'hi' }] } as any));
      expect(role.status).toBe(400);
      expect((role.error as any).error.message).toContain('messages[0].role');
      const block = await apiError(
        viaApiKey.messages.create({ model: 'sim-chat', max_tokens: 8, messages: [{ role: 'user', content: [{ type: 'document', source: {} }] }] } as any),
      );
      expect((block.error as any).error.message).toContain('messages[0].content[0].type');
      expect(simCount(t.sim, 'sim-chat')).toBe(0);
    });

    it('a bad token: 401 authentication_error, in X-Api-Key and as a Bearer token', async () => {
      for (const client of [xApiKeyClient('sk-not-a-gateway-token'), new Anthropic({ apiKey: 'sk-not-a-gateway-token', baseURL: t.url, maxRetries: 0 })]) {
        const err = await apiError(client.messages.create({ model: 'sim-chat', max_tokens: 8, messages: [{ role: 'user', content: 'hi' }] }));
        expect(err.status).toBe(401);
        expect(err.error).toMatchObject({ type: 'error', error: { type: 'authentication_error' }, request_id: err.requestID });
      }
      expect(simCount(t.sim, 'sim-chat')).toBe(0);
    });

    it('no token at all: 401, and the OpenAI path still wants Authorization (X-Api-Key is for /v1/messages only)', async () => {
      const body = JSON.stringify({ model: 'sim-chat', max_tokens: 8, messages: [{ role: 'user', content: 'hi' }] });
      const none = await fetch(`${t.url}/v1/messages`, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
      expect(none.status).toBe(401);
      expect(((await none.json()) as any).error.type).toBe('authentication_error');
      const openai = await fetch(`${t.url}/v1/chat/completions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-api-key': ROOT_TOKEN },
        body,
      });
      expect(openai.status).toBe(401);
      expect(((await openai.json()) as any).error.code).toBe('missing_token');
    });

    it('takes X-Api-Key on the node:http front too (a chunked body is served there)', async () => {
      const text = JSON.stringify({ model: 'sim-chat', max_tokens: 16, messages: [{ role: 'user', content: 'sent in chunks' }] });
      const body = new ReadableStream({
        start(c) {
          c.enqueue(new TextEncoder().encode(text));
          c.close();
        },
      });
      const r = await fetch(`${t.url}/v1/messages`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-api-key': ROOT_TOKEN },
        body,
        duplex: 'half',
      } as RequestInit);
      expect(r.status).toBe(200);
      expect(((await r.json()) as any).content[0].text).toContain('sent in chunks');
    });

    it('an upstream 503: 529 overloaded_error with the request id, logged', async () => {
      const err = await apiError(viaApiKey.messages.create({ model: 'sim-503', max_tokens: 8, messages: [{ role: 'user', content: 'hi' }] }));
      expect(err.status).toBe(529);
      expect(err.error).toMatchObject({ type: 'error', error: { type: 'overloaded_error' }, request_id: err.requestID });
      expect((err.error as any).error.message).toContain(`(request id: ${err.requestID})`);
      const row = await logRow(err.requestID!);
      expect(row).toMatchObject({ model: 'sim-503', status: 503 });
      expect(row.error).toBeTruthy();
    });

    it('a stream broken after its start ends with an error event', async () => {
      const stream = viaApiKey.messages.stream({
        model: 'slow-drop',
        max_tokens: 64,
        messages: [{ role: 'user', content: 'one two three four five six seven eight' }],
      });
      const texts: string[] = [];
      stream.on('text', (x) => texts.push(x));
      const err = await apiError(stream.finalMessage());
      expect(texts.join('')).not.toBe('');
      expect(err.error).toMatchObject({ type: 'error', error: { type: expect.any(String) } });
      expect((err.error as any).request_id).toMatch(/^\d{17}[0-9a-f]{12}$/);
    });
  });
});
