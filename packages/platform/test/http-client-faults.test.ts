// The platform's HTTP layer (buildHttpApp) against clients that stall or send
// what is not HTTP, on raw sockets: a head must arrive, and a body may not
// pause, for longer than REQUEST_STALL_TIMEOUT_MS (408, then the connection
// closes), a slow body that keeps coming is served, and node's own refusals
// and the body limit of the route are answered in the platform's envelope.
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RawClient, type RawResponse } from '../../gateway/test/raw-client.js';
import { buildHttpApp } from '../src/http/server.js';

const BOUND = 400;
let app: FastifyInstance;
let url: string;

beforeAll(async () => {
  app = buildHttpApp({ logLevel: 'silent', requestStallTimeoutMs: BOUND });
  app.post('/echo', async (req) => ({ echo: req.body }));
  app.post('/small', { bodyLimit: 1024 }, async (req) => ({ echo: req.body }));
  // A route that reads its body late: the raw stream, read only after a while.
  app.addContentTypeParser('application/octet-stream', (_req, payload, done) => done(null, payload));
  app.post('/late-reader', async (req) => {
    await new Promise((r) => setTimeout(r, BOUND * 3));
    let bytes = 0;
    for await (const chunk of req.body as AsyncIterable<Buffer>) bytes += chunk.length;
    return { bytes };
  });
  url = await app.listen({ host: '127.0.0.1', port: 0 });
});
afterAll(async () => app?.close());

const head = (path: string, length: number, type = 'application/json') =>
  `POST ${path} HTTP/1.1\r\nHost: p\r\nContent-Type: ${type}\r\nContent-Length: ${length}\r\n\r\n`;
const body = JSON.stringify({ question: 'slow but steady' });

/** The platform's envelope {code, statusText, message, data}, with a request id header. */
function expectEnvelope(r: RawResponse, status: number, statusText: string): string {
  expect(r.status).toBe(status);
  const parsed = JSON.parse(r.body);
  expect(parsed).toMatchObject({ code: status, statusText, data: null });
  expect(r.headers['x-request-id']).toMatch(/^\w{20,}$/);
  return parsed.message;
}

describe('stalled requests (REQUEST_STALL_TIMEOUT_MS = 400 here)', () => {
  it('closes a connection whose body stalls, or whose head does, with 408', async () => {
    const stalledBody = await RawClient.open(url);
    stalledBody.send(head('/echo', body.length) + body.slice(0, 5));
    const stalledHead = await RawClient.open(url);
    stalledHead.send('POST /echo HTTP/1.1\r\nHost: p\r\n');
    const sentAt = Date.now();
    for (const c of [stalledBody, stalledHead]) {
      expect(expectEnvelope(await c.response(5000), 408, 'request_timeout')).toMatch(/within 0.4 s/);
      await c.whenClosed(2000);
    }
    expect(Date.now() - sentAt).toBeLessThan(BOUND * 2.5);
  });

  it('serves a body that takes several times the bound while it keeps coming', async () => {
    const c = await RawClient.open(url);
    c.send(head('/echo', body.length));
    const startedAt = Date.now();
    for (const ch of body) {
      c.send(ch);
      await new Promise((r) => setTimeout(r, BOUND / 10));
    }
    expect(Date.now() - startedAt).toBeGreaterThan(BOUND * 2.5);
    const r = await c.response(5000);
    expect(JSON.parse(r.body)).toEqual({ echo: JSON.parse(body) });
    c.close();
  });

  it('does not count the time a route leaves its body unread against the client', async () => {
    const c = await RawClient.open(url);
    const big = 'x'.repeat(2 * 1024 * 1024); // more than node and the kernel buffer: the socket pauses
    c.send(head('/late-reader', big.length, 'application/octet-stream') + big);
    const r = await c.response(10_000);
    expect(JSON.parse(r.body)).toEqual({ bytes: big.length });
    c.close();
  });
});

describe('refusals in the envelope', () => {
  async function refused(bytes: string): Promise<RawResponse> {
    const c = await RawClient.open(url);
    c.send(bytes);
    const r = await c.response(1000);
    await c.whenClosed(1000);
    return r;
  }

  it("answers node's parser refusals and a missing Host in the envelope, then closes", async () => {
    expect(expectEnvelope(await refused('POST /echo HTTP/1.1\r\nHost: p\r\nBad Header: x\r\nContent-Length: 2\r\n\r\n{}'), 400, 'bad_request')).toMatch(
      /not valid HTTP\/1\.1/,
    );
    expectEnvelope(await refused('POST /echo HTTP/1.1\r\nHost: p\r\nContent-Length: 2\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n'), 400, 'bad_request');
    expectEnvelope(await refused(`GET /echo HTTP/1.1\r\nHost: p\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`), 431, 'request_header_too_large');
    expectEnvelope(await refused('POST /echo HTTP/1.1\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}'), 400, 'missing_host');
    expectEnvelope(await refused('POST /echo HTTP/1.1\r\nHost: p\r\nExpect: other\r\nContent-Length: 2\r\n\r\n{}'), 417, 'expectation_failed');
  });

  it("says the route's own body limit in the 413", async () => {
    const small = await RawClient.open(url);
    small.send(head('/small', 2000) + '{"a":');
    expect(expectEnvelope(await small.response(2000), 413, 'too_large')).toBe('The request body is larger than the 1 KB this endpoint accepts');
    const wide = await RawClient.open(url);
    wide.send(head('/echo', 33 * 1024 * 1024) + '{"a":');
    expect(expectEnvelope(await wide.response(2000), 413, 'too_large')).toBe('The request body is larger than the 32 MB this endpoint accepts');
    for (const c of [small, wide]) c.close();
  });
});
