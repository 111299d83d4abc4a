// The gateway's upstream HTTP/1.1 client (http1/agent.ts) against real
// servers on 127.0.0.1: what a request looks like on the wire, keep-alive
// reuse and when a connection must not be reused, the one retry of a stale
// keep-alive connection, streaming, and the errors a caller sees.
// Timeouts, pause/abort, queueing and close(): http1-agent-control.test.ts.
import { createServer, type AddressInfo } from 'node:net';
import { describe, expect, it } from 'vitest';
import { AgentError } from '../src/http1/agent.js';
import { ResponseProtocolError } from '../src/http1/response-parser.js';
import { answer, cleanupAfterEach, httpServer, makeAgent, rawServer, send, sleep, until } from './agent-support.js';

cleanupAfterEach();

describe('Http1Agent: the request on the wire', () => {
  it("sends a POST's head and body intact, and hands back the answer", async () => {
    const up = await httpServer((_req, res, body) => {
      res.writeHead(201, { 'content-type': 'application/json', 'x-upstream': 'yes' });
      res.end(JSON.stringify({ echo: body }));
    });
    const agent = makeAgent();
    const body = JSON.stringify({ model: 'm', messages: [{ role: 'user', content: 'hi' }] });
    const out = await send(agent, up.origin, {
      path: '/v1/chat/completions?x=1',
      headers: { authorization: 'Bearer sk-1', 'content-type': 'application/json', 'X-Custom': 'a b' },
      body,
    });

    expect(out.error).toBeUndefined();
    expect(out.events).toEqual(['start', 'head', 'data', 'end']);
    expect(out.status).toBe(201);
    expect(out.headers).toMatchObject({ 'content-type': 'application/json', 'x-upstream': 'yes' });
    expect(JSON.parse(out.body)).toEqual({ echo: body });
    const [seen] = up.requests;
    expect(up.requests).toHaveLength(1);
    expect(seen!.method).toBe('POST');
    expect(seen!.url).toBe('/v1/chat/completions?x=1');
    expect(seen!.headers).toMatchObject({
      host: `127.0.0.1:${up.port}`,
      authorization: 'Bearer sk-1',
      'content-type': 'application/json',
      'x-custom': 'a b',
      'content-length': String(body.length),
    });
    expect(seen!.headers['transfer-encoding']).toBeUndefined();
    expect(seen!.body).toBe(body);
  });

  it('sends a UTF-8 body and a body over 64 KB byte for byte, with their byte lengths', async () => {
    const up = await httpServer((_req, res, body) => res.end(`${Buffer.byteLength(body)}`));
    const agent = makeAgent();
    const small = JSON.stringify({ content: 'héllo wörld, 世界 🙂' });
    const big = JSON.stringify({ content: 'ünïcødé 世界 🙂 '.repeat(6000) });
    expect(Buffer.byteLength(big)).toBeGreaterThan(100_000);
    for (const body of [small, big]) {
      const out = await send(agent, up.origin, { body });
      expect(out.body).toBe(String(Buffer.byteLength(body)));
    }
    expect(up.requests.map((r) => r.body)).toEqual([small, big]);
    expect(up.requests.map((r) => r.headers['content-length'])).toEqual([small, big].map((b) => String(Buffer.byteLength(b))));
  });

  it('refuses a header value with CR/LF (or a bad name) before any connection is made', async () => {
    const up = await rawServer((_req, s) => s.write(answer('fine')));
    const agent = makeAgent();
    const evil = await send(agent, up.origin, { headers: { 'x-a': 'ok\r\nx-evil: 1' } });
    const badName = await send(agent, up.origin, { headers: { 'bad name': 'v' } });
    for (const out of [evil, badName]) {
      expect(out.events).toEqual(['start', 'error']);
      expect(out.error).toBeInstanceOf(AgentError);
      expect(out.error!.code).toBe('BAD_REQUEST_HEADER');
    }
    await sleep(50);
    expect(up.received).toBe(0);
    expect(up.sockets).toHaveLength(0);
    // The agent still works, and nothing of the refused headers went out.
    const out = await send(agent, up.origin, { headers: { 'x-a': 'ok' } });
    expect(out.body).toBe('fine');
    expect(up.requests).toHaveLength(1);
    expect(up.requests[0]!.head).not.toMatch(/x-evil|bad name/);
  });
});

describe('Http1Agent: keep-alive', () => {
  it('reuses one connection for sequential requests', async () => {
    const up = await httpServer((_req, res, body) => res.end(`got ${body}`));
    const agent = makeAgent();
    for (const n of [1, 2, 3]) expect((await send(agent, up.origin, { body: String(n) })).body).toBe(`got ${n}`);
    expect(up.sockets).toHaveLength(1);
    expect(up.requests.map((r) => r.socket)).toEqual([0, 0, 0]);
  });

  it('does not reuse a connection answered with Connection: close, and closes it', async () => {
    // The server keeps its socket open: only the header says it is done.
    const up = await rawServer((_req, s) => s.write(answer('bye', 'Connection: close\r\n')));
    const agent = makeAgent();
    expect((await send(agent, up.origin)).body).toBe('bye');
    expect((await send(agent, up.origin)).body).toBe('bye');
    expect(up.requests.map((r) => r.socket)).toEqual([0, 1]);
    await until(() => up.closed[0] === true, 'the client to close the first connection');
  });

  it("honours the upstream's Keep-Alive timeout: an idle connection is not reused past it", async () => {
    // timeout=1: the agent gives the connection up after half of it (500 ms), well before its own 30 s.
    const up = await rawServer((_req, s) => s.write(answer('ok', 'Keep-Alive: timeout=1\r\n')));
    const agent = makeAgent({ keepAliveMs: 30_000 });
    await send(agent, up.origin);
    await sleep(50);
    await send(agent, up.origin);
    await sleep(700);
    await send(agent, up.origin);
    expect(up.requests.map((r) => r.socket)).toEqual([0, 0, 1]);
    expect(up.closed[0]).toBe(true);
  });

  it("gives an idle connection up after the agent's own keepAliveMs", async () => {
    const up = await rawServer((_req, s) => s.write(answer('ok')));
    const agent = makeAgent({ keepAliveMs: 200 });
    await send(agent, up.origin);
    await until(() => up.closed[0] === true, 'the idle connection to be closed');
    await send(agent, up.origin);
    expect(up.requests.map((r) => r.socket)).toEqual([0, 1]);
  });

  it('drops a connection that receives bytes while idle instead of handing them to the next request', async () => {
    const up = await rawServer((req, s) => {
      s.write(answer(`answer ${req.socket}`));
      if (req.socket === 0) setTimeout(() => s.write(answer('unsolicited')), 30);
    });
    const agent = makeAgent();
    expect((await send(agent, up.origin)).body).toBe('answer 0');
    await until(() => up.closed[0] === true, 'the client to drop the connection');
    const out = await send(agent, up.origin);
    expect(out.body).toBe('answer 1');
    expect(up.requests.map((r) => r.socket)).toEqual([0, 1]);
  });

  it('drops a connection whose answer came with extra bytes after its end', async () => {
    const up = await rawServer((req, s) => s.write(answer(`answer ${req.socket}`) + (req.socket === 0 ? 'HTTP/1.1 200 OK\r\n' : '')));
    const agent = makeAgent();
    expect((await send(agent, up.origin)).body).toBe('answer 0');
    await until(() => up.closed[0] === true, 'the client to drop the connection');
    expect((await send(agent, up.origin)).body).toBe('answer 1');
    expect(up.requests.map((r) => r.socket)).toEqual([0, 1]);
  });

  it('sends a queued request once when the answer before it on the connection came with extra bytes', async () => {
    const up = await rawServer((req, s) => {
      setTimeout(() => s.write(answer(`answer ${up.requests.length}`) + (up.requests.length === 1 ? '\r\n' : '')), 50);
    });
    const agent = makeAgent({ maxConnectionsPerOrigin: 1 });
    const [first, second] = await Promise.all([send(agent, up.origin, { body: 'one' }), send(agent, up.origin, { body: 'two' })]);
    expect([first.body, second.body]).toEqual(['answer 1', 'answer 2']);
    await sleep(100);
    expect(up.requests.map((r) => r.body)).toEqual(['one', 'two']);
    expect(up.requests.map((r) => r.socket)).toEqual([0, 1]);
  });
});

describe('Http1Agent: a stale keep-alive connection', () => {
  it('does not send again a request whose reused connection fails long after the write (the upstream may have begun it)', async () => {
    const up = await rawServer((req, s) => {
      if (req.socket === 0 && req.onSocket === 1) setTimeout(() => s.destroy(), 1300);
      else s.write(answer(`answer ${req.socket}.${req.onSocket}`));
    });
    const agent = makeAgent();
    expect((await send(agent, up.origin, { body: 'one' })).body).toBe('answer 0.0');
    const out = await send(agent, up.origin, { body: 'two' });
    expect(out.error).toBeDefined();
    expect(out.events).toEqual(['start', 'error']);
    await sleep(100);
    expect(up.requests.map((r) => r.body)).toEqual(['one', 'two']);
  });

  for (const how of ['end', 'destroy'] as const) {
    it(`retries once on a new connection when the upstream ${how}s an idle connection as the next request arrives`, async () => {
      const up = await rawServer((req, s) => {
        if (req.socket === 0 && req.onSocket === 1) s[how]();
        else s.write(answer(`answer ${req.socket}.${req.onSocket}`));
      });
      const agent = makeAgent();
      expect((await send(agent, up.origin, { body: 'one' })).body).toBe('answer 0.0');
      const out = await send(agent, up.origin, { body: 'two' });
      expect(out.error).toBeUndefined();
      expect(out.events).toEqual(['start', 'head', 'data', 'end']);
      expect(out.body).toBe('answer 1.0');
      expect(up.requests.map((r) => [r.socket, r.body])).toEqual([
        [0, 'one'],
        [0, 'two'],
        [1, 'two'],
      ]);
    });
  }

  it('the next request succeeds when the upstream destroys the connection right after its first answer', async () => {
    const up = await rawServer((req, s) => {
      s.write(answer(`answer ${req.socket}`));
      if (req.socket === 0) s.destroy();
    });
    const agent = makeAgent();
    expect((await send(agent, up.origin)).body).toBe('answer 0');
    const out = await send(agent, up.origin);
    expect(out.body).toBe('answer 1');
    expect(up.sockets).toHaveLength(2);
  });

  it('does not retry a failure on a new connection', async () => {
    const up = await rawServer((_req, s) => s.destroy());
    const agent = makeAgent();
    const out = await send(agent, up.origin);
    expect(out.events).toEqual(['start', 'error']);
    expect(out.error!.code).toMatch(/^(ECONNRESET|UPSTREAM_CLOSED|UPSTREAM_BAD_RESPONSE)$/);
    await sleep(100);
    expect(up.sockets).toHaveLength(1);
    expect(up.requests).toHaveLength(1);
  });

  it('retries only once: a reused connection that fails, then a new one that fails, is an error', async () => {
    const up = await rawServer((req, s) => (req.socket === 0 && req.onSocket === 0 ? s.write(answer('first')) : s.destroy()));
    const agent = makeAgent();
    expect((await send(agent, up.origin)).body).toBe('first');
    const out = await send(agent, up.origin);
    expect(out.events).toEqual(['start', 'error']);
    await sleep(100);
    expect(up.requests.map((r) => r.socket)).toEqual([0, 0, 1]);
  });

  it('does not retry when part of the answer had arrived on the reused connection', async () => {
    const up = await rawServer((req, s) => {
      if (req.onSocket === 0) s.write(answer('first'));
      else s.end('HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nabc');
    });
    const agent = makeAgent();
    await send(agent, up.origin);
    const out = await send(agent, up.origin);
    expect(out.events).toEqual(['start', 'head', 'data', 'error']);
    expect(out.body).toBe('abc');
    expect(out.error).toBeInstanceOf(ResponseProtocolError);
    await sleep(100);
    expect(up.sockets).toHaveLength(1);
  });
});

describe('Http1Agent: answers and errors', () => {
  it('delivers a chunked answer chunk by chunk as the upstream writes it', async () => {
    // The server writes the next part only once the client has the previous one: a client that waited for more would stall.
    let received: () => void = () => {};
    const up = await httpServer(async (_req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      for (let i = 0; i < 4; i++) {
        const got = new Promise<void>((r) => (received = r));
        res.write(`data: part ${i}\n\n`);
        await got;
      }
      res.end();
    });
    const agent = makeAgent();
    const out = await send(agent, up.origin, {}, { onData: () => received() });
    expect(out.headers!['transfer-encoding']).toBe('chunked');
    expect(out.chunks.map(String)).toEqual([0, 1, 2, 3].map((i) => `data: part ${i}\n\n`));
    expect(out.events).toEqual(['start', 'head', 'data', 'data', 'data', 'data', 'end']);
  });

  it('reads a 204 with no body and keeps the connection', async () => {
    const up = await httpServer((_req, res) => {
      res.statusCode = 204;
      res.end();
    });
    const agent = makeAgent();
    const first = await send(agent, up.origin);
    const second = await send(agent, up.origin);
    expect([first.status, second.status]).toEqual([204, 204]);
    expect(first.events).toEqual(['start', 'head', 'end']);
    expect(up.sockets).toHaveLength(1);
  });

  it('names ECONNREFUSED when nothing listens', async () => {
    const probe = createServer();
    await new Promise<void>((r) => probe.listen(0, '127.0.0.1', r));
    const { port } = probe.address() as AddressInfo;
    await new Promise((r) => probe.close(r));
    const out = await send(makeAgent(), `http://127.0.0.1:${port}`);
    expect(out.events).toEqual(['start', 'error']);
    expect(out.error!.code).toBe('ECONNREFUSED');
    expect(out.error!.message).toContain('ECONNREFUSED');
  });

  it('reports an origin it cannot use to the handler instead of throwing', async () => {
    const agent = makeAgent();
    const ftp = await send(agent, 'ftp://127.0.0.1:21');
    const junk = await send(agent, 'not a url');
    expect(ftp.events).toEqual(['start', 'error']);
    expect(ftp.error!.message).toMatch(/unsupported protocol ftp:/);
    expect(junk.events).toEqual(['start', 'error']);
    expect(junk.error!.message).toMatch(/Invalid URL/);
  });

  it('gives a ResponseProtocolError for an answer that is not HTTP, and drops the connection', async () => {
    const up = await rawServer((_req, s) => s.write('SSH-2.0-OpenSSH_9.6\r\n\r\n'));
    const out = await send(makeAgent(), up.origin);
    expect(out.events).toEqual(['start', 'error']);
    expect(out.error).toBeInstanceOf(ResponseProtocolError);
    expect(out.error!.message).toMatch(/bad status line "SSH-2.0-OpenSSH_9.6"/);
    await until(() => up.closed[0] === true, 'the client to close the connection');
  });

  it('gives a ResponseProtocolError for a head over maxHeadBytes', async () => {
    const up = await rawServer((_req, s) => s.write(answer('x', `X-Big: ${'b'.repeat(2000)}\r\n`)));
    const out = await send(makeAgent({ maxHeadBytes: 1024 }), up.origin);
    expect(out.error).toBeInstanceOf(ResponseProtocolError);
    expect(out.error!.message).toMatch(/longer than 1024 bytes/);
  });
});
