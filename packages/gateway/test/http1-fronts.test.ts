// The HTTP/1.1 fronts (src/http1/) on their own, with no relay behind them:
// a small echo service implements ExchangeService, so that what the transport
// promises its service (http1/README.md) is checked apart from what the relay
// does with it. Which front served shows in the exchange the service got.
import { createServer, type Server } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BodyTooLargeError, type Exchange, type ExchangeService } from '../src/http1/exchange.js';
import { installLeanFront } from '../src/http1/lean-front.js';
import { LeanExchange } from '../src/http1/lean-exchange.js';
import { nodeFront } from '../src/http1/node-front.js';
import { RawClient } from './raw-client.js';

const LIMIT = 1024;

/** Echoes what a front handed over: JSON for /echo, an SSE stream for /stream. */
class EchoService implements ExchangeService<'/echo' | '/stream'> {
  readonly failures: string[] = [];

  route(url: string): '/echo' | '/stream' | undefined {
    const path = url.split('?', 1)[0];
    return path === '/echo' || path === '/stream' ? path : undefined;
  }

  serve(route: '/echo' | '/stream', x: Exchange): void {
    void this.answer(route, x);
  }

  log() {
    return { error: (_obj: object, msg: string) => void this.failures.push(msg) };
  }

  private async answer(route: string, x: Exchange): Promise<void> {
    const front = x instanceof LeanExchange ? 'lean' : 'node';
    try {
      const body = await x.readBody(LIMIT);
      if (route === '/stream') {
        x.responder.startStream();
        await x.responder.write(`data: ${body}\n\n`);
        x.responder.end('data: [DONE]\n\n');
        return;
      }
      const echo = {
        front,
        body,
        requestId: x.requestId,
        ip: x.clientIp(true),
        type: x.contentType,
        auth: x.authorization,
        declared: x.declaredLength ?? null,
      };
      x.responder.json(200, JSON.stringify(echo));
    } catch (err) {
      if (!x.canAnswer()) return;
      x.answerError(err instanceof BodyTooLargeError ? 413 : 400, { 'x-front': front }, JSON.stringify({ error: (err as Error).message }));
    }
  }
}

function post(body: string, { path = '/echo', headers = '' } = {}): string {
  return `POST ${path} HTTP/1.1\r\nHost: t\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n${headers}\r\n${body}`;
}

function chunkedPost(parts: string[], path = '/echo'): string {
  const chunks = parts.map((p) => `${Buffer.byteLength(p).toString(16)}\r\n${p}\r\n`).join('');
  return `POST ${path} HTTP/1.1\r\nHost: t\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n${chunks}0\r\n\r\n`;
}

describe('the HTTP/1.1 fronts, with a service of their own', () => {
  const service = new EchoService();
  let server: Server;
  let url: string;

  beforeAll(async () => {
    const front = nodeFront(service);
    server = createServer((req, res) => {
      if (front(req, res)) return;
      res.writeHead(404, { 'content-type': 'text/plain', 'x-fell-through': 'yes' });
      res.end(`not the service's: ${req.method} ${req.url}`);
    });
    installLeanFront(server, service);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
    expect(service.failures).toEqual([]);
  });

  it('serve a plain POST off the socket (the lean front), with what the head said', async () => {
    const c = await RawClient.open(url);
    c.send(post('{"a":1}', { path: '/echo?x=1', headers: 'Authorization: Bearer k\r\nX-Request-Id: mine-1\r\nX-Forwarded-For: 10.1.2.3, 10.0.0.1\r\n' }));
    const r = await c.response();
    expect(r.status).toBe(200);
    expect(r.headers['x-request-id']).toBe('mine-1');
    expect(r.headers['content-length']).toBe(String(Buffer.byteLength(r.body)));
    expect(JSON.parse(r.body)).toEqual({
      front: 'lean',
      body: '{"a":1}',
      requestId: 'mine-1',
      ip: '10.1.2.3',
      type: 'application/json',
      auth: 'Bearer k',
      declared: 7,
    });
    c.close();
  });

  it('answer pipelined POSTs in order, and an empty body reads as undefined', async () => {
    const c = await RawClient.open(url);
    c.send(post('one') + post('') + post('three'));
    const bodies = [await c.response(), await c.response(), await c.response()].map((r) => JSON.parse(r.body));
    expect(bodies.map((b) => [b.front, b.body])).toEqual([
      ['lean', 'one'],
      ['lean', undefined],
      ['lean', 'three'],
    ]);
    c.close();
  });

  it('hand a chunked POST to node:http, whose front serves it, and keep the connection there', async () => {
    const c = await RawClient.open(url);
    c.send(chunkedPost(['{"b":', '2}']));
    const r = await c.response();
    expect(JSON.parse(r.body)).toMatchObject({ front: 'node', body: '{"b":2}', declared: null });
    expect(r.headers['x-request-id']).toMatch(/^\d{17}[0-9a-f]{12}$/);
    // The connection is node:http's for good now: a plain POST is the node front's too.
    c.send(post('after'));
    expect(JSON.parse((await c.response()).body)).toMatchObject({ front: 'node', body: 'after' });
    c.close();
  });

  it('leave what the service does not route to the next listener, on both fronts', async () => {
    const c = await RawClient.open(url);
    c.send(post('x', { path: '/elsewhere' }));
    const other = await c.response();
    expect([other.status, other.headers['x-fell-through'], other.body]).toEqual([404, 'yes', "not the service's: POST /elsewhere"]);
    c.send('GET /echo HTTP/1.1\r\nHost: t\r\n\r\n');
    expect((await c.response()).body).toBe("not the service's: GET /echo");
    c.close();
  });

  it('refuse a body over the service limit with BodyTooLargeError: declared (lean front) or found while reading chunks (node:http)', async () => {
    const c = await RawClient.open(url);
    c.send(post('x'.repeat(LIMIT + 1)));
    const declared = await c.response();
    expect([declared.status, declared.headers['x-front']]).toEqual([413, 'lean']);
    expect(JSON.parse(declared.body).error).toBe(`the request body is larger than ${LIMIT} bytes`);
    const d = await RawClient.open(url);
    d.send(chunkedPost(['x'.repeat(600), 'y'.repeat(600)]));
    const found = await d.response();
    expect([found.status, found.headers['x-front']]).toEqual([413, 'node']);
    c.close();
    d.close();
  });

  it('stream an SSE answer in chunks on both fronts', async () => {
    for (const [request, front] of [
      [post('hello', { path: '/stream' }), 'lean'],
      [chunkedPost(['hello'], '/stream'), 'node'],
    ] as const) {
      const c = await RawClient.open(url);
      c.send(request);
      const r = await c.response();
      expect([front, r.status, r.headers['content-type'], r.headers['transfer-encoding']]).toEqual([front, 200, 'text/event-stream; charset=utf-8', 'chunked']);
      expect(r.body).toBe('data: hello\n\ndata: [DONE]\n\n');
      c.close();
    }
  });

  describe('a request that does not arrive in time', () => {
    let saved: number;
    beforeAll(() => {
      saved = server.headersTimeout;
      server.headersTimeout = 300;
    });
    afterAll(() => {
      server.headersTimeout = saved;
      server.removeAllListeners('clientError');
    });

    it("is the server's 'clientError' (ERR_HTTP_REQUEST_TIMEOUT), as node:http reports its own", async () => {
      const seen: string[] = [];
      server.on('clientError', (err: Error & { code?: string }, socket: Socket) => {
        seen.push(err.code ?? '');
        socket.end('HTTP/1.1 408 Request Timeout\r\nContent-Length: 4\r\nConnection: close\r\n\r\nlate');
      });
      const c = await RawClient.open(url);
      c.send('POST /echo HTTP/1.1\r\nHost: t\r\n');
      const r = await c.response(5000);
      expect([r.status, r.body]).toEqual([408, 'late']);
      expect(seen).toEqual(['ERR_HTTP_REQUEST_TIMEOUT']);
      await c.whenClosed();
      server.removeAllListeners('clientError');
    });

    it("gets node's bare 408 and a close when nobody listens for 'clientError'", async () => {
      const c = await RawClient.open(url);
      c.send('POST /echo HTTP/1.1\r\nHost: t\r\nContent-Length: 5\r\n\r\nab');
      await c.whenClosed(5000);
      const r = await c.response(100);
      expect([r.status, r.headers.connection, r.body]).toEqual([408, 'close', '']);
    });
  });
});
