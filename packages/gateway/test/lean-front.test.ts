// The lean front (http1/lean-front.ts) on raw sockets: what it serves itself,
// what it hands to node:http with the bytes already read (and that node:http
// then answers exactly as it would have), pipelining, clients that leave,
// keep-alive, timeouts and shutdown. Which front answered shows in the
// server's 'request' events, which only node:http emits (both fronts frame
// JSON answers alike, with a Content-Length).
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { ROOT_TOKEN, startTestGateway, type TestGateway } from './helpers.js';
import { RawClient, type RawResponse } from './raw-client.js';
import { simCount } from './relay-support.js';

const chatBody = (content: string, extra: object = {}) => JSON.stringify({ model: 'sim-chat', messages: [{ role: 'user', content }], max_tokens: 8, ...extra });

/** A relay POST as bytes; `headers` are extra lines, each ending in CRLF. */
function post(body: string, { path = '/v1/chat/completions', headers = '', length = Buffer.byteLength(body) } = {}): string {
  return `POST ${path} HTTP/1.1\r\nHost: gw\r\nAuthorization: Bearer ${ROOT_TOKEN}\r\nContent-Type: application/json\r\nContent-Length: ${length}\r\n${headers}\r\n${body}`;
}

function answerText(r: RawResponse): string {
  return JSON.parse(r.body).choices[0].message.content;
}

/** A JSON answer framed as the lean front frames it (node:http's relay front does the same; which served is in nodeRequests). */
function expectLean(r: RawResponse): void {
  expect(r.headers['content-length']).toBeDefined();
  expect(r.headers['transfer-encoding']).toBeUndefined();
}

describe('lean front (raw socket before node:http)', () => {
  let t: TestGateway;
  /** Requests node:http parsed (its 'request' event): the lean front's never count. */
  let nodeRequests = 0;
  beforeAll(async () => {
    // Streams send one word every 50 ms: long enough to leave or to pipeline behind.
    t = await startTestGateway({ models: ['sim-chat'], sim: { tokenDelayMs: 50 } });
    t.gw.app.server.on('request', () => void nodeRequests++);
  });
  afterAll(async () => t?.close());

  it('serves a POST itself: node:http headers, a request id, Content-Length, keep-alive', async () => {
    const c = await RawClient.open(t.url);
    c.send(post(chatBody('lean')));
    const r = await c.response();
    expect(r.status).toBe(200);
    expectLean(r);
    expect(r.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(r.headers['x-request-id']).toMatch(/^\d{17}[0-9a-f]{12}$/);
    expect(r.headers.connection).toBe('keep-alive');
    expect(r.headers['keep-alive']).toBe('timeout=72');
    expect(new Date(r.headers.date!).getTime()).toBeGreaterThan(Date.now() - 60_000);
    expect(answerText(r)).toMatch(/^Echo: lean/);
    c.send(post(chatBody('again'), { path: '/v1/chat/completions?api-version=1' }));
    expect(answerText(await c.response())).toMatch(/^Echo: again/);
    c.close();
  });

  it('answers two pipelined POSTs sent in one write, in order', async () => {
    const c = await RawClient.open(t.url);
    c.send(post(chatBody('first')) + post(chatBody('second')));
    const first = await c.response();
    const second = await c.response();
    expectLean(first);
    expectLean(second);
    expect(answerText(first)).toMatch(/^Echo: first/);
    expect(answerText(second)).toMatch(/^Echo: second/);
    expect(first.headers['x-request-id']).not.toBe(second.headers['x-request-id']);
    c.close();
  });

  it('hands the connection to node:http mid-way: a POST then GET /v1/models in one write, then more on node:http', async () => {
    const before = nodeRequests;
    const c = await RawClient.open(t.url);
    c.send(post(chatBody('before')) + `GET /v1/models HTTP/1.1\r\nHost: gw\r\nAuthorization: Bearer ${ROOT_TOKEN}\r\n\r\n`);
    const chat = await c.response();
    expectLean(chat);
    expect(answerText(chat)).toMatch(/^Echo: before/);
    const models = await c.response();
    expect(models.status).toBe(200);
    expect(JSON.parse(models.body).data.some((m: { id: string }) => m.id === 'sim-chat')).toBe(true);
    // The connection is node:http's now: a relay POST is answered by its front.
    c.send(post(chatBody('after')));
    const after = await c.response();
    expect(nodeRequests - before).toBe(2); // the GET and the second POST
    expect(answerText(after)).toMatch(/^Echo: after/);
    c.close();
  });

  it('hands a chunked POST to node:http, which answers it, also when the chunks come after the head', async () => {
    const body = chatBody('chunked');
    const head = `POST /v1/chat/completions HTTP/1.1\r\nHost: gw\r\nAuthorization: Bearer ${ROOT_TOKEN}\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n`;
    const c = await RawClient.open(t.url);
    const before = nodeRequests;
    c.send(`${head}${body.length.toString(16)}\r\n${body}\r\n0\r\n\r\n`);
    const r = await c.response();
    expect(r.status).toBe(200);
    expect(nodeRequests - before).toBe(1);
    expect(answerText(r)).toMatch(/^Echo: chunked/);
    c.close();

    // Part of the head, then the rest: node's parser gets the first bytes from
    // the lean front and the rest straight from the socket.
    const split = await RawClient.open(t.url);
    split.send(head.slice(0, 20));
    await new Promise((r) => setTimeout(r, 50));
    split.send(head.slice(20));
    await new Promise((r) => setTimeout(r, 50));
    split.send(`${body.length.toString(16)}\r\n${body}\r\n`);
    await new Promise((r) => setTimeout(r, 50));
    split.send('0\r\n\r\n');
    expect(answerText(await split.response())).toMatch(/^Echo: chunked/);
    split.close();
  });

  it('hands over a socket it paused: a large chunked POST pipelined behind a slow stream', async () => {
    const body = chatBody('paused', { user: 'u'.repeat(300_000) });
    const before = nodeRequests;
    const c = await RawClient.open(t.url);
    c.send(post(JSON.stringify({ model: 'sim-chat', stream: true, messages: [{ role: 'user', content: 'slow' }] })));
    c.send(
      `POST /v1/chat/completions HTTP/1.1\r\nHost: gw\r\nAuthorization: Bearer ${ROOT_TOKEN}\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n`,
    );
    for (let i = 0; i < body.length; i += 50_000) {
      const part = body.slice(i, i + 50_000);
      c.send(`${part.length.toString(16)}\r\n${part}\r\n`);
    }
    c.send('0\r\n\r\n');
    const stream = await c.response();
    expect(stream.body.trimEnd().endsWith('data: [DONE]')).toBe(true);
    const r = await c.response();
    expect(r.status).toBe(200);
    expect(nodeRequests - before).toBe(1); // the chunked POST only: the stream was the lean front's
    expect(answerText(r)).toMatch(/^Echo: paused/);
    c.close();
  });

  it('hands Expect: 100-continue to node:http: 100 Continue, then the answer', async () => {
    const body = chatBody('continue');
    const c = await RawClient.open(t.url);
    c.send(post('', { headers: 'Expect: 100-continue\r\n', length: body.length }));
    expect((await c.response()).status).toBe(100);
    c.send(body);
    const r = await c.response();
    expect(r.status).toBe(200);
    expect(answerText(r)).toMatch(/^Echo: continue/);
    c.close();
  });

  it('hands HTTP/1.0 to node:http, which answers and closes', async () => {
    const body = chatBody('old');
    const c = await RawClient.open(t.url);
    c.send(
      `POST /v1/chat/completions HTTP/1.0\r\nAuthorization: Bearer ${ROOT_TOKEN}\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n${body}`,
    );
    const r = await c.response();
    expect(r.status).toBe(200);
    expect(answerText(r)).toMatch(/^Echo: old/);
    await c.whenClosed();
  });

  it('hands a head over 16 KB to node:http, which answers 431; the gateway keeps serving', async () => {
    const c = await RawClient.open(t.url);
    c.send(post(chatBody('big'), { headers: `X-Padding: ${'a'.repeat(17 * 1024)}\r\n` }));
    expect((await c.response()).status).toBe(431);
    await c.whenClosed();
    // Just under the limit is still served by the lean front.
    const ok = await RawClient.open(t.url);
    ok.send(post(chatBody('near'), { headers: `X-Padding: ${'a'.repeat(15 * 1024)}\r\n` }));
    const r = await ok.response();
    expectLean(r);
    expect(r.status).toBe(200);
    ok.close();
  });

  it('leaves duplicate, bad and missing framing headers to node:http: 400, never a hang', async () => {
    const body = chatBody('bad');
    const base = `POST /v1/chat/completions HTTP/1.1\r\nHost: gw\r\nAuthorization: Bearer ${ROOT_TOKEN}\r\nContent-Type: application/json\r\n`;
    const cases = [
      `${base}Content-Length: ${body.length}\r\nContent-Length: ${body.length}\r\n\r\n${body}`,
      `${base}Content-Length: ${body.length}\r\nContent-Length: 3\r\n\r\n${body}`,
      `${base}Content-Length: -1\r\n\r\n${body}`,
      `${base}Content-Length: 1e3\r\n\r\n${body}`,
      `${base}Content-Length: ${body.length}\r\nTransfer-Encoding: chunked\r\n\r\n${body}`,
      `${base}Content-Length : ${body.length}\r\n\r\n${body}`,
      `${base}Content-Length: ${body.length}\r\n folded\r\n\r\n${body}`,
      `${base}Content-Length: ${body.length}\nX-Bare-LF: 1\r\n\r\n${body}`,
      `POST /v1/chat/completions HTTP/1.1\r\nAuthorization: Bearer ${ROOT_TOKEN}\r\nContent-Length: ${body.length}\r\n\r\n${body}`,
      'POST /v1/chat/completions HTTP/1.1\r\nHost: gw\r\nX-Bad: a\u0001b\r\nContent-Length: 2\r\n\r\n{}',
      '\u0000\u0001garbage\r\n\r\n',
    ];
    for (const bytes of cases) {
      const c = await RawClient.open(t.url);
      c.send(bytes);
      const r = await c.response();
      expect(r.status, JSON.stringify(bytes.slice(0, 200))).toBe(400);
      await c.whenClosed();
    }
  });

  it('gives node:http the end of a client that leaves mid-head: its 400, as without the lean front', async () => {
    const c = await RawClient.open(t.url);
    c.send('POST /v1/chat/completions HTTP/1.1\r\nHost: gw\r\n');
    await new Promise((r) => setTimeout(r, 50));
    c.socket.end();
    expect((await c.response()).status).toBe(400);
    await c.whenClosed();
  });

  it('survives mangled requests: each gets an answer or a close, and the gateway serves on', async () => {
    const valid = post(chatBody('fuzz'));
    const bytes = ['\r', '\n', '\0', ' ', ':', '\t', '\u00ff', 'a', '\r\n', '0'];
    let seed = 7;
    const random = (n: number) => ((seed = (seed * 1103515245 + 12345) % 2 ** 31), seed % n);
    for (let i = 0; i < 150; i++) {
      let text = valid;
      for (let edits = 1 + random(3); edits > 0; edits--) {
        const at = random(text.length);
        const kind = random(3);
        if (kind === 0) text = text.slice(0, at) + bytes[random(bytes.length)] + text.slice(at + 1);
        else if (kind === 1) text = text.slice(0, at) + bytes[random(bytes.length)] + text.slice(at);
        else text = text.slice(0, at) + text.slice(at + 1 + random(5));
      }
      const c = await RawClient.open(t.url);
      c.send(text);
      c.socket.end();
      await c.whenClosed(5000);
    }
    const c = await RawClient.open(t.url);
    c.send(valid);
    expect(answerText(await c.response())).toMatch(/^Echo: fuzz/);
    c.close();
  });

  it('reads a body that comes in many small writes', async () => {
    const text = post(chatBody('trickle ' + 'x'.repeat(200)));
    const c = await RawClient.open(t.url);
    for (let i = 0; i < text.length; i += 7) {
      c.send(text.slice(i, i + 7));
      if (i % 70 === 0) await new Promise((r) => setTimeout(r, 1));
    }
    const r = await c.response();
    expectLean(r);
    expect(answerText(r)).toMatch(/^Echo: trickle x/);
    // A megabyte body arrives in many reads too.
    c.send(post(chatBody('large', { user: 'u'.repeat(1024 * 1024) })));
    expect(answerText(await c.response())).toMatch(/^Echo: large/);
    c.close();
  });

  it('refuses a declared body over the limit (413) and an anonymous one (401) without it, and reads on past the unread body', async () => {
    const c = await RawClient.open(t.url);
    c.send(post('{"model":', { length: 65 * 1024 * 1024 }));
    const big = await c.response();
    expect(big.status).toBe(413);
    expect(JSON.parse(big.body).error.message).toContain(`(request id: ${big.headers['x-request-id']})`);
    c.close();

    const anon = await RawClient.open(t.url);
    const body = chatBody('anonymous');
    anon.send(`POST /v1/chat/completions HTTP/1.1\r\nHost: gw\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n${body.slice(0, 10)}`);
    const refused = await anon.response();
    expectLean(refused);
    expect(refused.status).toBe(401);
    // The rest of that body is read and dropped; the next request is served.
    anon.send(body.slice(10) + post(chatBody('next')));
    expect(answerText(await anon.response())).toMatch(/^Echo: next/);
    anon.close();
  });

  it('does not call the upstream for a client that leaves mid-body, and keeps serving', async () => {
    t.sim.reset();
    const body = JSON.stringify({ model: 'sim-chat', messages: [{ role: 'user', content: 'gone' }] });
    const c = await RawClient.open(t.url);
    c.send(post(body).slice(0, -10));
    await new Promise((r) => setTimeout(r, 100));
    c.close();
    await new Promise((r) => setTimeout(r, 100));
    expect(simCount(t.sim, 'sim-chat')).toBe(0);
    const next = await RawClient.open(t.url);
    next.send(post(chatBody('still here')));
    expect((await next.response()).status).toBe(200);
    next.close();
  });

  it('aborts the upstream call when the client leaves mid-stream (logged as 499)', async () => {
    const c = await RawClient.open(t.url);
    c.send(post(JSON.stringify({ model: 'sim-chat', stream: true, messages: [{ role: 'user', content: 'a long story' }] })));
    await vi.waitFor(() => expect(c['data']).toContain('"content":"Echo: "'), { timeout: 5000, interval: 20 });
    const requestId = /x-request-id: (\S+)/.exec(c['data'])![1]!;
    expect(c['data']).toContain('content-type: text/event-stream');
    c.close();
    await vi.waitFor(
      async () => {
        await t.gw.services.ledger.flush();
        expect((await t.gw.services.logsStore.list({ requestId }, 0, 1))[0]).toMatchObject({ status: 499, is_stream: 1 });
      },
      { timeout: 5000 },
    );
  });

  it('honours Connection: close: says so, then closes', async () => {
    const c = await RawClient.open(t.url);
    c.send(post(chatBody('bye'), { headers: 'Connection: close\r\n' }));
    const r = await c.response();
    expectLean(r);
    expect(r.headers.connection).toBe('close');
    expect(r.headers['keep-alive']).toBeUndefined();
    await c.whenClosed();
  });

  it('streams with the SSE headers, chunked, and keeps the connection', async () => {
    const c = await RawClient.open(t.url);
    c.send(post(chatBody('stream', { stream: true })) + post(chatBody('then json')));
    const s = await c.response();
    expect(s.headers['content-type']).toBe('text/event-stream; charset=utf-8');
    expect(s.headers['cache-control']).toBe('no-cache');
    expect(s.headers['x-accel-buffering']).toBe('no');
    expect(s.body).toContain('"content":"Echo: "');
    expect(s.body.trimEnd().endsWith('data: [DONE]')).toBe(true);
    expect(answerText(await c.response())).toMatch(/^Echo: then json/);
    c.close();
  });

  describe('timeouts (the node:http server settings, shortened)', () => {
    let saved: { keepAliveTimeout: number; headersTimeout: number };
    beforeAll(() => {
      const server = t.gw.app.server;
      saved = { keepAliveTimeout: server.keepAliveTimeout, headersTimeout: server.headersTimeout };
      server.keepAliveTimeout = 300;
      server.headersTimeout = 400;
    });
    afterAll(() => Object.assign(t.gw.app.server, saved));

    it('closes a keep-alive connection left idle (keepAliveTimeout and node:http’s 1 s grace)', async () => {
      const c = await RawClient.open(t.url);
      c.send(post(chatBody('idle')));
      expect((await c.response()).status).toBe(200);
      const answeredAt = Date.now();
      await c.whenClosed(5000);
      expect(Date.now() - answeredAt).toBeGreaterThanOrEqual(1200);
    });

    it('answers a new connection that sends nothing with 408 in time, as node:http does', async () => {
      const c = await RawClient.open(t.url);
      expect((await c.response(5000)).status).toBe(408);
      await c.whenClosed();
    });

    it('answers a head that does not arrive in time with 408 and closes, as node:http does', async () => {
      const c = await RawClient.open(t.url);
      c.send('POST /v1/chat/completions HTTP/1.1\r\nHost: gw\r\n');
      const r = await c.response(5000);
      expect(r.status).toBe(408);
      await c.whenClosed();
    });

    it('answers a body that does not arrive in time with 408 and closes, without calling the upstream', async () => {
      t.sim.reset();
      const c = await RawClient.open(t.url);
      c.send(post(JSON.stringify({ model: 'sim-chat', messages: [] })).slice(0, -5));
      const r = await c.response(5000);
      expect(r.status).toBe(408);
      await c.whenClosed();
      expect(simCount(t.sim, 'sim-chat')).toBe(0);
    });

    it('serves a body that takes longer than the timeout while it keeps arriving', async () => {
      const c = await RawClient.open(t.url);
      const text = post(chatBody('slow body'));
      const headEnd = text.indexOf('\r\n\r\n') + 4;
      c.send(text.slice(0, headEnd));
      // 400 ms headersTimeout; the body arrives over about 1 s, 100 ms a piece.
      for (let at = headEnd; at < text.length; at += Math.ceil((text.length - headEnd) / 10)) {
        await new Promise((r) => setTimeout(r, 100));
        c.send(text.slice(at, Math.min(text.length, at + Math.ceil((text.length - headEnd) / 10))));
      }
      const r = await c.response(5000);
      expect(r.status).toBe(200);
      expect(answerText(r)).toMatch(/^Echo: slow body/);
      c.close();
    });
  });

  it('reads on after a paused socket: a pipelined request behind a large refused body is answered', async () => {
    // A 401 before the body is read leaves 100 KB unread, so the socket pauses; the next
    // request's head arrives in two parts and must still be read and answered at once.
    const c = await RawClient.open(t.url);
    const big = 'x'.repeat(100_000);
    const next = post(chatBody('after the pause'));
    c.send(
      `POST /v1/chat/completions HTTP/1.1\r\nHost: gw\r\nAuthorization: Bearer sk-wrong\r\nContent-Type: application/json\r\nContent-Length: ${big.length}\r\n\r\n${big}` +
        next.slice(0, 20),
    );
    expect((await c.response(5000)).status).toBe(401);
    await new Promise((r) => setTimeout(r, 200));
    const startedAt = Date.now();
    c.send(next.slice(20));
    const r = await c.response(5000);
    expect(r.status).toBe(200);
    expect(answerText(r)).toMatch(/^Echo: after the pause/);
    expect(Date.now() - startedAt).toBeLessThan(3000);
    c.close();
  });
});

describe('lean front under backpressure', () => {
  it('waits while the socket is full: a client that stops reading a long stream still gets all of it, then the next answer', async () => {
    // 60,000 words a chunk each (about 12 MB): more than the kernel's socket buffers hold.
    const t = await startTestGateway({ models: ['sim-chat'], sim: { tokens: 60_000 } });
    try {
      const c = await RawClient.open(t.url);
      c.socket.pause();
      c.send(post(chatBody('long', { stream: true, max_tokens: 100_000 })) + post(chatBody('after long')));
      await new Promise((r) => setTimeout(r, 500));
      c.socket.resume();
      const long = await c.response(30_000);
      expect(long.body.split('\n\n').length).toBeGreaterThan(60_000);
      expect(long.body.trimEnd().endsWith('data: [DONE]')).toBe(true);
      expect(answerText(await c.response())).toMatch(/^Echo: after long/);
      c.close();
    } finally {
      await t.close();
    }
  });
});

describe('lean front at shutdown', () => {
  it('ends idle connections at once and busy ones after their answer (Connection: close)', async () => {
    const t = await startTestGateway({ models: ['sim-chat'], sim: { tokenDelayMs: 30 } });
    try {
      const idle = await RawClient.open(t.url);
      idle.send(post(chatBody('idle')));
      expect((await idle.response()).status).toBe(200);
      const busy = await RawClient.open(t.url);
      busy.send(post(chatBody('busy', { stream: true })));
      await vi.waitFor(() => expect(busy['data']).toContain('text/event-stream'), { timeout: 5000, interval: 10 });

      const closing = t.gw.app.close();
      await idle.whenClosed(2000);
      expect(busy.closed).toBe(false);
      const r = await busy.response();
      expect(r.status).toBe(200);
      expect(r.body.trimEnd().endsWith('data: [DONE]')).toBe(true);
      await busy.whenClosed(2000);
      await closing;
    } finally {
      await t.close();
    }
  });
});
