// Clients that stall or send what is not HTTP, on raw sockets, against both
// fronts: the lean front (relay POSTs with a Content-Length) and node:http
// (chunked relay POSTs it hands over, and Fastify's routes such as the login).
// A head must arrive, and a body may not pause, for longer than
// REQUEST_STALL_TIMEOUT_MS (408, then the connection closes); a slow body that
// keeps coming is served; node's parser refusals, a missing Host and the body
// limit are answered in the OpenAI envelope with a request id.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROOT_PASSWORD, ROOT_TOKEN, startTestGateway, type TestGateway } from './helpers.js';
import { RawClient, type RawResponse } from './raw-client.js';
import { simCount } from './relay-support.js';

const chatBody = JSON.stringify({ model: 'sim-chat', messages: [{ role: 'user', content: 'trickle' }], max_tokens: 8 });
const relayHead = (framing: string) =>
  `POST /v1/chat/completions HTTP/1.1\r\nHost: gw\r\nAuthorization: Bearer ${ROOT_TOKEN}\r\nContent-Type: application/json\r\n${framing}\r\n`;
const chunked = (text: string) => `${Buffer.byteLength(text).toString(16)}\r\n${text}\r\n`;
const loginBody = JSON.stringify({ username: 'root', password: ROOT_PASSWORD });
const loginHead = (length: number) => `POST /api/auth/login HTTP/1.1\r\nHost: gw\r\nContent-Type: application/json\r\nContent-Length: ${length}\r\n\r\n`;

/** The OpenAI envelope, with the request id of the header at the end of its message. */
function expectEnvelope(r: RawResponse, status: number, code: string): { message: string } {
  expect(r.status).toBe(status);
  const body = JSON.parse(r.body);
  expect(Object.keys(body.error).sort()).toEqual(['code', 'message', 'param', 'type']);
  expect(body.error).toMatchObject({ type: 'invalid_request_error', code });
  expect(r.headers['x-request-id']).toMatch(/^\w{20,}$/);
  expect(body.error.message.endsWith(`(request id: ${r.headers['x-request-id']})`)).toBe(true);
  return body.error;
}

/** Sends `parts` one after another, `gapMs` apart. */
async function trickle(c: RawClient, parts: string[], gapMs: number): Promise<void> {
  for (const part of parts) {
    c.send(part);
    await new Promise((r) => setTimeout(r, gapMs));
  }
}

/** `text` cut into `n` pieces. */
const pieces = (text: string, n: number) =>
  Array.from({ length: n }, (_, i) => text.slice(Math.floor((i * text.length) / n), Math.floor(((i + 1) * text.length) / n)));

describe('stalled requests (REQUEST_STALL_TIMEOUT_MS = 500 here)', () => {
  const BOUND = 500;
  let t: TestGateway;
  beforeAll(async () => {
    t = await startTestGateway({ models: ['sim-chat'], config: { requestStallTimeoutMs: BOUND } });
  });
  afterAll(async () => t?.close());

  /** Waits for the 408 and the close; returns how long after the last byte sent it came. */
  async function timedOut(c: RawClient, sentAt: number): Promise<number> {
    const r = await c.response(10_000);
    const after = Date.now() - sentAt;
    expect(expectEnvelope(r, 408, 'request_timeout').message).toMatch(/within 0.5 s/);
    await c.whenClosed(2000);
    return after;
  }

  it('closes a login whose body stalls (Fastify, node:http)', async () => {
    const c = await RawClient.open(t.url);
    c.send(loginHead(loginBody.length) + loginBody.slice(0, 10));
    const after = await timedOut(c, Date.now());
    expect(after).toBeGreaterThanOrEqual(BOUND - 20);
    expect(after).toBeLessThan(BOUND * 2.5);
  });

  it('closes a chunked relay POST whose body stalls (handed to node:http), without calling the upstream', async () => {
    t.sim.reset();
    const c = await RawClient.open(t.url);
    c.send(relayHead('Transfer-Encoding: chunked\r\n') + chunked(chatBody.slice(0, 20)));
    const after = await timedOut(c, Date.now());
    expect(after).toBeLessThan(BOUND * 2.5);
    expect(simCount(t.sim, 'sim-chat')).toBe(0);
  });

  it('closes a relay POST whose body stalls on the lean front, in the same envelope', async () => {
    const c = await RawClient.open(t.url);
    c.send(relayHead(`Content-Length: ${chatBody.length}\r\n`) + chatBody.slice(0, 20));
    expect(await timedOut(c, Date.now())).toBeLessThan(BOUND * 2.5);
  });

  it('closes a head that stalls, on the lean front and on a connection node:http serves', async () => {
    const lean = await RawClient.open(t.url);
    lean.send('POST /v1/chat/completions HTTP/1.1\r\nHost: gw\r\n');
    // A chunked request hands the connection to node:http for good; its next head then stalls there.
    const handed = await RawClient.open(t.url);
    handed.send(relayHead('Transfer-Encoding: chunked\r\n') + chunked(chatBody) + chunked(''));
    expect((await handed.response()).status).toBe(200);
    const sentAt = Date.now();
    handed.send('GET /v1/models HTTP/1.1\r\nHost: gw\r\n');
    await timedOut(lean, sentAt);
    expect(await timedOut(handed, sentAt)).toBeLessThan(BOUND * 2.5);
  });

  it('closes many stalled connections at once (what an anonymous client could hold)', async () => {
    const clients = await Promise.all(Array.from({ length: 60 }, () => RawClient.open(t.url)));
    clients.forEach((c, i) => {
      if (i % 3 === 0) c.send(loginHead(loginBody.length) + '{');
      else if (i % 3 === 1) c.send(relayHead('Transfer-Encoding: chunked\r\n') + chunked('{'));
      else c.send(relayHead(`Content-Length: ${chatBody.length}\r\n`) + '{');
    });
    await Promise.all(clients.map((c) => c.whenClosed(BOUND * 4)));
  });

  it('serves bodies that take several times the bound while they keep coming, on both fronts', async () => {
    const gap = BOUND / 4;
    const login = await RawClient.open(t.url);
    const handed = await RawClient.open(t.url);
    const lean = await RawClient.open(t.url);
    login.send(loginHead(loginBody.length));
    handed.send(relayHead('Transfer-Encoding: chunked\r\n'));
    lean.send(relayHead(`Content-Length: ${chatBody.length}\r\n`));
    const startedAt = Date.now();
    await Promise.all([
      trickle(login, pieces(loginBody, 12), gap),
      trickle(handed, [...pieces(chatBody, 12).map(chunked), chunked('')], gap),
      trickle(lean, pieces(chatBody, 12), gap),
    ]);
    expect(Date.now() - startedAt).toBeGreaterThan(BOUND * 2.5);
    expect(JSON.parse((await login.response()).body).session).toBeTruthy();
    for (const c of [handed, lean]) expect(JSON.parse((await c.response()).body).choices[0].message.content).toMatch(/^Echo: trickle/);
    for (const c of [login, handed, lean]) c.close();
  });
});

describe('malformed requests on the relay paths (default bound: 60 s)', () => {
  let t: TestGateway;
  beforeAll(async () => {
    t = await startTestGateway({ models: ['sim-chat'] });
  });
  afterAll(async () => t?.close());

  /** The one answer to `bytes`, which must come within a second, and then the close. */
  async function refused(bytes: string): Promise<RawResponse> {
    const c = await RawClient.open(t.url);
    c.send(bytes);
    const r = await c.response(1000);
    await c.whenClosed(1000);
    return r;
  }

  for (const path of ['/v1/chat/completions', '/v1/embeddings', '/v1/rerank']) {
    it(`answers node's parser refusals in the envelope at once (${path})`, async () => {
      const head = `POST ${path} HTTP/1.1\r\nHost: gw\r\nAuthorization: Bearer ${ROOT_TOKEN}\r\n`;
      const bad: [string, number, string][] = [
        [`${head}Bad Header: x\r\nContent-Length: 2\r\n\r\n{}`, 400, 'bad_request'],
        [`${head}Content-Length: 2\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n`, 400, 'bad_request'], // a smuggling shape
        [`${head}Transfer-Encoding: chunked\r\n\r\nzz\r\n{}\r\n0\r\n\r\n`, 400, 'bad_request'],
        [`${head}X-Big: ${'a'.repeat(20_000)}\r\n\r\n`, 431, 'request_header_too_large'],
      ];
      for (const [bytes, status, code] of bad) expectEnvelope(await refused(bytes), status, code);
    });
  }

  it('answers a head with bare LF line ends with 400 at once (it waited for the 408)', async () => {
    const startedAt = Date.now();
    const r = await refused(`POST /v1/chat/completions HTTP/1.1\nHost: gw\nAuthorization: Bearer ${ROOT_TOKEN}\nContent-Length: 2\n\n{}`);
    expect(expectEnvelope(r, 400, 'bad_request').message).toMatch(/not valid HTTP\/1\.1/);
    expect(Date.now() - startedAt).toBeLessThan(1000);
    // A bare CR, and a head cut short after its first bare LF, go to node:http at once too.
    expectEnvelope(await refused('POST /v1/chat/completions HTTP/1.1\rHost: gw'), 400, 'bad_request');
    expectEnvelope(await refused('POST /v1/chat/completions HTTP/1.1\nHost: gw\n'), 400, 'bad_request');
  });

  it('answers a request without Host, and an unknown Expect, in the envelope', async () => {
    const noHost = await refused(`POST /v1/chat/completions HTTP/1.1\r\nAuthorization: Bearer ${ROOT_TOKEN}\r\nContent-Length: 2\r\n\r\n{}`);
    expectEnvelope(noHost, 400, 'missing_host');
    expect(noHost.headers.connection).toBe('close');
    const c = await RawClient.open(t.url);
    c.send(`POST /v1/chat/completions HTTP/1.1\r\nHost: gw\r\nExpect: something-else\r\nContent-Length: 2\r\n\r\n{}`);
    expectEnvelope(await c.response(1000), 417, 'expectation_failed');
    c.close();
  });

  it('says the body limit that applied, on both fronts', async () => {
    const over = 64 * 1024 * 1024 + 1;
    const lean = await RawClient.open(t.url);
    lean.send(relayHead(`Content-Length: ${over}\r\n`) + '{"model":');
    const login = await RawClient.open(t.url);
    login.send(loginHead(over) + '{"username":');
    for (const c of [lean, login]) {
      expect(expectEnvelope(await c.response(2000), 413, 'body_too_large').message).toMatch(/^The request body is larger than the 64 MB this endpoint accepts/);
      c.close();
    }
  });
});
