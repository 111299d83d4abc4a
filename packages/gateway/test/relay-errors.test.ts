// Every error class a client of the gateway can meet, as the official openai
// client sees it: HTTP status, error.code / type / param, the message (the
// upstream's own where there is one), and the request id in the X-Request-Id
// header and at the end of the message.
import type OpenAI from 'openai';
import { startUpstreamSim, type UpstreamSim } from '@kbchat/upstream-sim';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROOT_TOKEN, startTestGateway, type TestGateway } from './helpers.js';
import { apiError, expectRequestId, makeToken, openaiClient, simCount } from './relay-support.js';

const hi: OpenAI.Chat.Completions.ChatCompletionMessageParam[] = [{ role: 'user', content: 'hi' }];

describe('relay errors', () => {
  let t: TestGateway;
  let keyed: UpstreamSim;
  let client: OpenAI;

  beforeAll(async () => {
    t = await startTestGateway({
      // An OpenAI-compatible provider from the environment whose base URL nothing listens on.
      env: { DEAD_API_KEY: 'sk-dead', DEAD_BASE_URL: 'http://127.0.0.1:9/v1', DEAD_MODELS: 'dead-model' },
    });
    client = openaiClient(t);
    // An upstream that wants another key than the one the channel holds.
    keyed = await startUpstreamSim({ port: 0, key: 'sk-right' });
    await t.gw.services.channels.create({
      type: 'openai',
      name: 'wrong key',
      base_url: `${keyed.url}/v1`,
      key: 'sk-wrong-key',
      models: ['keyed-chat'],
      model_mapping: { 'keyed-chat': 'sim-chat' },
    });
  });
  afterAll(async () => {
    await t?.close();
    await keyed?.close();
  });

  /** Sends a raw request and returns status, request id and the error object. */
  async function rawError(init: RequestInit & { token?: string }): Promise<{ status: number; requestId: string | null; error: any }> {
    const { token, ...rest } = init;
    const headers: Record<string, string> = { 'content-type': 'application/json', ...(rest.headers as Record<string, string>) };
    if (token !== '') headers.authorization = `Bearer ${token ?? ROOT_TOKEN}`;
    const res = await fetch(`${t.url}/v1/chat/completions`, { method: 'POST', ...rest, headers });
    const body: any = await res.json();
    expect(Object.keys(body)).toEqual(['error']);
    expect(Object.keys(body.error).sort()).toEqual(['code', 'message', 'param', 'type']);
    expectRequestId(body.error.message, res.headers.get('x-request-id'));
    return { status: res.status, requestId: res.headers.get('x-request-id'), error: body.error };
  }

  describe('money and channels', () => {
    it('insufficient_user_quota (403) for a user with no balance', async () => {
      const { accounts } = t.gw.services;
      const poor = await accounts.createUser({ username: 'poor', password: 'poor-password', balance_micros: 0 });
      const key = await makeToken(t, { name: 'poor token' }, poor.id);
      const seen = simCount(t.sim, 'sim-chat');
      const err = await apiError(openaiClient(t, key).chat.completions.create({ model: 'sim-chat', messages: hi }));
      expect(err.status).toBe(403);
      expect(err.code).toBe('insufficient_user_quota');
      expect(err.type).toBe('insufficient_quota');
      expect(err.error).toMatchObject({ message: expect.stringMatching(/^user quota is not enough \(request id: /) });
      expectRequestId((err.error as any).message, err.requestID);
      expect(simCount(t.sim, 'sim-chat')).toBe(seen);
    });

    it('no enabled channel (503) names the model and the group', async () => {
      const err = await apiError(client.chat.completions.create({ model: 'no-such-model', messages: hi }));
      expect(err.status).toBe(503);
      expect(err.code).toBe('model_not_found');
      expect((err.error as any).message).toMatch(/^No available channel for model no-such-model under group default \(request id: /);
      expectRequestId((err.error as any).message, err.requestID);
    });

    it("upstream non-2xx is bad_response_status_code with the upstream's own message", async () => {
      const err = await apiError(client.chat.completions.create({ model: 'keyed-chat', messages: hi }));
      expect(err.status).toBe(401);
      expect(err.code).toBe('bad_response_status_code');
      expect(err.param).toBe('401');
      expect((err.error as any).message).toMatch(/^Incorrect API key provided: sk-wro\*\*\*\*\. You can find your API key/);
      expectRequestId((err.error as any).message, err.requestID);
      // Never the channel's key itself.
      expect((err.error as any).message).not.toContain('sk-wrong-key');
    });

    it('upstream 500 keeps its status and message', async () => {
      const err = await apiError(client.chat.completions.create({ model: 'sim-500', messages: hi }));
      expect(err.status).toBe(500);
      expect(err.code).toBe('bad_response_status_code');
      expect((err.error as any).message).toMatch(/^internal upstream failure \(request id: /);
      expectRequestId((err.error as any).message, err.requestID);
    });

    it('upstream unreachable is "get request url failed: <dial error>"', async () => {
      const err = await apiError(client.chat.completions.create({ model: 'dead-model', messages: hi }));
      expect(err.status).toBe(502);
      expect(err.code).toBe('do_request_failed');
      expect((err.error as any).message).toMatch(/^get request url failed: .*ECONNREFUSED/);
      expectRequestId((err.error as any).message, err.requestID);
    });

    it('an upstream 429 keeps its status and passes its Retry-After on to the client', async () => {
      const limited = await startTestGateway({ sim: { rpm: 1, retryAfterSeconds: 7 }, config: { maxAttempts: 1 } });
      try {
        const body = { model: 'sim-chat', messages: hi };
        expect((await limited.api('/v1/chat/completions', { method: 'POST', json: body })).status).toBe(200);
        const res = await limited.api('/v1/chat/completions', { method: 'POST', json: body });
        expect(res.status).toBe(429);
        expect(res.headers.get('retry-after')).toBe('7');
        expect(((await res.json()) as any).error.message).toMatch(/Rate limit reached/);
      } finally {
        await limited.close();
      }
    });

    it('upstream unreachable inside a stream request fails before any byte, as a plain HTTP error', async () => {
      const err = await apiError(client.chat.completions.create({ model: 'dead-model', messages: hi, stream: true }));
      expect(err.status).toBe(502);
      expect((err.error as any).message).toMatch(/^get request url failed: /);
      expectRequestId((err.error as any).message, err.requestID);
    });
  });

  describe('tokens', () => {
    it('missing and invalid tokens are 401', async () => {
      const missing = await rawError({ token: '', body: JSON.stringify({ model: 'sim-chat', messages: hi }) });
      expect(missing.status).toBe(401);
      expect(missing.error.code).toBe('missing_token');
      const err = await apiError(openaiClient(t, 'sk-not-a-real-token').chat.completions.create({ model: 'sim-chat', messages: hi }));
      expect(err.status).toBe(401);
      expect(err.code).toBe('invalid_api_key');
      expectRequestId((err.error as any).message, err.requestID);
    });

    it('an expired token is 401', async () => {
      const key = await makeToken(t, { name: 'expired', expires_at: Date.now() - 1000 });
      const err = await apiError(openaiClient(t, key).chat.completions.create({ model: 'sim-chat', messages: hi }));
      expect(err.status).toBe(401);
      expect(err.code).toBe('token_expired');
      expectRequestId((err.error as any).message, err.requestID);
    });

    it('a disabled token is 401', async () => {
      const key = await makeToken(t, { name: 'disabled', status: 'disabled' });
      const err = await apiError(openaiClient(t, key).chat.completions.create({ model: 'sim-chat', messages: hi }));
      expect(err.status).toBe(401);
      expect(err.code).toBe('token_disabled');
    });

    it('a token that used up its own limit is 403', async () => {
      const key = await makeToken(t, { name: 'tiny', quota_limit_micros: 1 });
      const err = await apiError(openaiClient(t, key).chat.completions.create({ model: 'sim-chat', messages: hi }));
      expect(err.status).toBe(403);
      expect(err.code).toBe('token_quota_exhausted');
      expect((err.error as any).message).toMatch(/token quota is not enough/);
      expectRequestId((err.error as any).message, err.requestID);
    });

    it('a model outside the token allow-list is 403', async () => {
      const key = await makeToken(t, { name: 'chat only', models: ['sim-chat'] });
      const c = openaiClient(t, key);
      const err = await apiError(c.chat.completions.create({ model: 'sim-echo-prompt', messages: hi }));
      expect(err.status).toBe(403);
      expect(err.code).toBe('model_not_allowed');
      expect(err.param).toBe('model');
      expect((err.error as any).message).toMatch(/^This token is not allowed to use model sim-echo-prompt/);
      expectRequestId((err.error as any).message, err.requestID);
      const embed = await apiError(c.embeddings.create({ model: 'sim-embed-384', input: 'x' }));
      expect(embed.status).toBe(403);
      expect((await c.chat.completions.create({ model: 'sim-chat', messages: hi })).choices[0]!.message.content).toMatch(/^Echo:/);
    });

    it('a request from outside the token IP allow-list is 403', async () => {
      const key = await makeToken(t, { name: 'office only', ip_allow: '10.0.0.0/8' });
      const err = await apiError(openaiClient(t, key).chat.completions.create({ model: 'sim-chat', messages: hi }));
      expect(err.status).toBe(403);
      expect(err.code).toBe('ip_not_allowed');
      expect((err.error as any).message).toMatch(/^This token is not allowed from IP address 127\.0\.0\.1/);
      expectRequestId((err.error as any).message, err.requestID);
      const loopback = await makeToken(t, { name: 'loopback', ip_allow: '10.0.0.0/8, 127.0.0.0/8' });
      expect((await openaiClient(t, loopback).chat.completions.create({ model: 'sim-chat', messages: hi })).object).toBe('chat.completion');
    });
  });

  describe('request bodies', () => {
    it('malformed JSON is 400 invalid_json', async () => {
      const r = await rawError({ body: '{"model": "sim-chat", "messages": [' });
      expect(r.status).toBe(400);
      expect(r.error.code).toBe('invalid_json');
      expect(r.error.type).toBe('invalid_request_error');
      expect(r.error.message).toMatch(/^We could not parse the JSON body of your request: /);
    });

    it.each([
      ['messages[0].role', { model: 'sim-chat', messages: [{ role: 'wizard', content: 'hi' }] }],
      ['messages', { model: 'sim-chat', messages: [] }],
      ['messages', { model: 'sim-chat' }],
      ['temperature', { model: 'sim-chat', messages: hi, temperature: 5 }],
      ['model', { messages: hi }],
      ['max_tokens', { model: 'sim-chat', messages: hi, max_tokens: -1 }],
      ['stream', { model: 'sim-chat', messages: hi, stream: 'yes' }],
      ['messages[1].content', { model: 'sim-chat', messages: [hi[0], { role: 'user', content: 42 }] }],
    ])('a bad field is 400 naming it (%s)', async (field, body) => {
      const err = await apiError(client.chat.completions.create(body as any));
      expect(err.status).toBe(400);
      expect(err.code).toBe('invalid_field');
      expect(err.param).toBe(field);
      expect((err.error as any).message).toMatch(new RegExp(`^Invalid '${field.replace(/[[\]]/g, '\\$&')}': `));
      expectRequestId((err.error as any).message, err.requestID);
    });

    it('bad embeddings and rerank fields are 400 naming them', async () => {
      const e = await apiError(client.embeddings.create({ model: 'sim-embed-384', input: [] as string[], encoding_format: 'float' }));
      expect(e.status).toBe(400);
      expect(e.param).toBe('input');
      const res = await t.api('/v1/rerank', { method: 'POST', json: { model: 'sim-rerank', query: 'q', documents: [] } });
      expect(res.status).toBe(400);
      expect(((await res.json()) as any).error.param).toBe('documents');
    });

    it('no input crashes the process: odd bodies get 4xx with a request id, and the next request works', async () => {
      const bodies = [
        'null',
        '[]',
        '"text"',
        '42',
        '{"model":null,"messages":null}',
        '{"model":"sim-chat","messages":[null]}',
        '{"model":"sim-chat","messages":[{"role":"user","content":[null]}]}',
        '',
      ];
      for (const body of bodies) {
        const r = await rawError({ body });
        expect(r.status, body).toBe(400);
      }
      // A text body is read as a string, which is not a request object.
      const wrongType = await fetch(`${t.url}/v1/chat/completions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${ROOT_TOKEN}`, 'content-type': 'text/plain' },
        body: 'hello',
      });
      expect(wrongType.status).toBe(400);
      expectRequestId(((await wrongType.json()) as any).error.message, wrongType.headers.get('x-request-id'));
      const unknown = await fetch(`${t.url}/v1/nothing-here`, { headers: { authorization: `Bearer ${ROOT_TOKEN}` } });
      expect(unknown.status).toBe(404);
      expectRequestId(((await unknown.json()) as any).error.message, unknown.headers.get('x-request-id'));
      expect((await client.chat.completions.create({ model: 'sim-chat', messages: hi })).object).toBe('chat.completion');
    });
  });

  it('logs every failed request with its status and error', async () => {
    const err = await apiError(client.chat.completions.create({ model: 'sim-400', messages: hi }));
    expect(err.status).toBe(400);
    expect(err.code).toBe('bad_response_status_code');
    await t.gw.services.ledger.flush();
    const [row] = await t.gw.services.logsStore.list({ requestId: err.requestID! }, 0, 10);
    expect(row).toMatchObject({ status: 400, model: 'sim-400', attempts: 1 });
    expect(row!.error).toMatch(/^Invalid 'messages\[0\]\.role': unknown role/);
    const detail = await t.gw.services.logsStore.byRequestId(err.requestID!);
    expect(JSON.parse(detail!.request_body!)).toMatchObject({ model: 'sim-400', messages: hi });
  });
});
