// The relay's POST endpoints are served on node:http before Fastify
// (http1/node-front.ts). These are the HTTP duties it took over from Fastify:
// media types, the body limit, the token checked before the body is read, the
// client address behind a trusted proxy, query strings, and handing every
// other method and path on to Fastify.
import { request } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROOT_TOKEN, startTestGateway, type TestGateway } from './helpers.js';

const hi = [{ role: 'user', content: 'hi' }];

function expectRequestId(message: string, header: string | null): void {
  expect(header).toMatch(/^\S+$/);
  expect(message).toContain(`(request id: ${header})`);
}

/** A raw POST that declares a body and sends only `send` of it: the answer must come without the rest. */
function declaredPost(url: string, headers: Record<string, string>, send: string): Promise<{ status: number; body: any; requestId: string | undefined }> {
  return new Promise((resolve, reject) => {
    const req = request(`${url}/v1/chat/completions`, { method: 'POST', headers }, (res) => {
      let text = '';
      res.on('data', (d) => (text += d));
      res.on('end', () => {
        req.destroy();
        resolve({ status: res.statusCode!, body: JSON.parse(text), requestId: res.headers['x-request-id'] as string | undefined });
      });
    });
    req.on('error', reject);
    req.write(send);
  });
}

describe('relay front (node:http before Fastify)', () => {
  let t: TestGateway;
  beforeAll(async () => {
    t = await startTestGateway({ env: { TRUST_PROXY: 'true' } });
  });
  afterAll(async () => t?.close());

  it('answers a chat with the JSON content type and a request id, also with a query string and a charset', async () => {
    const res = await t.api('/v1/chat/completions?api-version=1', {
      method: 'POST',
      headers: { 'content-type': 'application/json; charset=UTF-8' },
      body: JSON.stringify({ model: 'sim-chat', messages: hi }),
    });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    expect(res.headers.get('x-request-id')).toMatch(/^\S+$/);
    expect((await res.json()).object).toBe('chat.completion');
  });

  it('refuses a body that is not JSON with 415, naming what to send', async () => {
    const res = await t.api('/v1/embeddings', { method: 'POST', headers: { 'content-type': 'application/xml' }, body: '<input>hi</input>' });
    expect(res.status).toBe(415);
    const body = await res.json();
    expect(body.error.code).toBe('unsupported_media_type');
    expect(body.error.message).toMatch(/application\/json/);
    expectRequestId(body.error.message, res.headers.get('x-request-id'));
  });

  it('refuses a declared body over 64 MB with 413 before reading it', async () => {
    const r = await declaredPost(
      t.url,
      { authorization: `Bearer ${ROOT_TOKEN}`, 'content-type': 'application/json', 'content-length': String(65 * 1024 * 1024) },
      '{"model":',
    );
    expect(r.status).toBe(413);
    expect(r.body.error.code).toBe('body_too_large');
    expectRequestId(r.body.error.message, r.requestId ?? null);
  });

  it('refuses a chunked body with 413 once it passes 64 MB, without waiting for its end', async () => {
    const r = await new Promise<{ status: number; body: any; requestId: string | undefined; sentMb: number }>((resolve, reject) => {
      let sentMb = 0;
      let answered = false;
      const req = request(
        `${t.url}/v1/chat/completions`,
        { method: 'POST', headers: { authorization: `Bearer ${ROOT_TOKEN}`, 'content-type': 'application/json' } },
        (res) => {
          answered = true;
          let text = '';
          res.on('data', (d) => (text += d));
          res.on('end', () => {
            req.destroy();
            resolve({ status: res.statusCode!, body: JSON.parse(text), requestId: res.headers['x-request-id'] as string | undefined, sentMb });
          });
        },
      );
      req.on('error', (err) => (answered ? undefined : reject(err)));
      const mb = Buffer.alloc(1024 * 1024, 0x20);
      // No Content-Length: node:http sends chunks, so the lean front hands the connection over.
      const more = (): void => {
        while (!answered && sentMb < 80) {
          sentMb++;
          if (!req.write(mb)) return void req.once('drain', more);
        }
      };
      more();
    });
    expect(r.status).toBe(413);
    expect(r.body.error.code).toBe('body_too_large');
    expectRequestId(r.body.error.message, r.requestId ?? null);
    expect(r.sentMb).toBeGreaterThan(64);
    expect(r.sentMb).toBeLessThan(80);
  });

  it('checks the token before the body: an anonymous client gets 401 without sending it', async () => {
    const r = await declaredPost(t.url, { 'content-type': 'application/json', 'content-length': String(10 * 1024 * 1024) }, '{"model":');
    expect(r.status).toBe(401);
    expect(r.body.error.code).toBe('missing_token');
    expectRequestId(r.body.error.message, r.requestId ?? null);
  });

  it('takes the client address from X-Forwarded-For behind a trusted proxy (TRUST_PROXY=true)', async () => {
    const created = await t.api('/api/tokens', { method: 'POST', json: { name: 'office', ip_allow: '10.1.2.0/24' } });
    expect(created.status).toBe(201);
    const { key } = await created.json();
    const chat = (forwardedFor?: string) =>
      t.api('/v1/chat/completions', {
        method: 'POST',
        token: key,
        json: { model: 'sim-chat', messages: hi },
        headers: forwardedFor ? { 'x-forwarded-for': forwardedFor } : {},
      });
    expect((await chat('10.1.2.3, 192.0.2.1')).status).toBe(200);
    const refused = await chat('10.9.9.9');
    expect(refused.status).toBe(403);
    expect((await refused.json()).error.code).toBe('ip_not_allowed');
    expect((await chat()).status).toBe(403);
  });

  it('hands other methods and paths to Fastify: its 404 envelope, /v1/models, /healthz', async () => {
    const get = await t.api('/v1/chat/completions');
    expect(get.status).toBe(404);
    expectRequestId((await get.json()).error.message, get.headers.get('x-request-id'));
    const slash = await t.api('/v1/chat/completions/', { method: 'POST', json: { model: 'sim-chat', messages: hi } });
    expect(slash.status).toBe(404);
    expect((await (await t.api('/v1/models')).json()).data.some((m: any) => m.id === 'sim-chat')).toBe(true);
    expect((await (await fetch(`${t.url}/healthz`)).json()).ok).toBe(true);
  });
});
