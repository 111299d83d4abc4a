// Helpers for the http1-agent*.test.ts files: real servers on 127.0.0.1
// (node:http, or raw net for answers node:http would never send), a handler
// that records everything the agent tells it, and cleanup after each test.
import { createServer as createHttpServer, type IncomingMessage, type Server as HttpServer, type ServerResponse } from 'node:http';
import { createServer as createNetServer, type AddressInfo, type Server as NetServer, type Socket } from 'node:net';
import { afterEach } from 'vitest';
import { Http1Agent, type AgentOptions, type RequestControl, type RequestOptions } from '../src/http1/agent.js';

const cleanups: Array<() => unknown> = [];

/** Registers the cleanup of everything the helpers below create (call once per test file). */
export function cleanupAfterEach(): void {
  afterEach(async () => {
    while (cleanups.length) await cleanups.pop()!();
  });
}

export const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/** Polls until `check` holds (a real wait on a real socket event, with a deadline). */
export async function until(check: () => boolean, what: string, ms = 3000): Promise<void> {
  const end = Date.now() + ms;
  while (!check()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await sleep(5);
  }
}

export function makeAgent(opts: Partial<AgentOptions> = {}): Http1Agent {
  // Long timeouts unless a test is about them: a test must never pass because one fired.
  const agent = new Http1Agent({ connectTimeoutMs: 10_000, headersTimeoutMs: 10_000, bodyTimeoutMs: 10_000, ...opts });
  // Servers are closed first (registered later, popped earlier), so nothing is left busy here.
  cleanups.push(() => Promise.race([agent.close(), sleep(1000)]));
  return agent;
}

export interface Outcome {
  /** Every handler call in order: start, head, data, end, error. */
  events: string[];
  status?: number;
  headers?: Record<string, string>;
  chunks: Buffer[];
  /** Body bytes received (counted even when `discard` keeps no chunks). */
  bytes: number;
  body: string;
  error?: Error & { code?: string };
  control: RequestControl;
}

export interface Hooks {
  onStart?(c: RequestControl): void;
  onHead?(c: RequestControl, status: number): void;
  onData?(c: RequestControl, chunk: Buffer, out: Outcome): void;
  /** Count the body's bytes without keeping them. */
  discard?: boolean;
}

/** Dispatches a POST; resolves (never rejects) at the handler's end or error. */
export function send(agent: Http1Agent, origin: string, req: Partial<RequestOptions> = {}, hooks: Hooks = {}): Promise<Outcome> & { out: Outcome } {
  const out = { events: [], chunks: [], bytes: 0, body: '' } as unknown as Outcome;
  let settle!: () => void;
  const done = new Promise<Outcome>((resolve) => (settle = () => resolve(out))) as Promise<Outcome> & { out: Outcome };
  done.out = out;
  agent.dispatch(
    { origin, path: '/v1/chat', method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}', ...req },
    {
      onRequestStart(c) {
        out.control = c;
        out.events.push('start');
        hooks.onStart?.(c);
      },
      onResponseStart(c, status, headers) {
        out.events.push('head');
        out.status = status;
        out.headers = headers;
        hooks.onHead?.(c, status);
      },
      onResponseData(c, chunk) {
        out.events.push('data');
        out.bytes += chunk.length;
        if (!hooks.discard) out.chunks.push(Buffer.from(chunk));
        hooks.onData?.(c, chunk, out);
      },
      onResponseEnd() {
        out.events.push('end');
        out.body = Buffer.concat(out.chunks).toString('utf8');
        settle();
      },
      onResponseError(_c, err) {
        out.events.push('error');
        out.body = Buffer.concat(out.chunks).toString('utf8');
        out.error = err;
        settle();
      },
    },
  );
  return done;
}

export interface SeenRequest {
  method: string;
  url: string;
  headers: IncomingMessage['headers'];
  rawHeaders: string[];
  body: string;
  /** Which of the server's connections carried it (0 = the first). */
  socket: number;
}

export interface TestHttpServer {
  server: HttpServer;
  origin: string;
  port: number;
  sockets: Socket[];
  requests: SeenRequest[];
}

/** A node:http server; `handle` runs once the request body has been read. */
export async function httpServer(handle: (req: IncomingMessage, res: ServerResponse, body: string) => void): Promise<TestHttpServer> {
  const sockets: Socket[] = [];
  const requests: SeenRequest[] = [];
  const server = createHttpServer((req, res) => {
    const parts: Buffer[] = [];
    req.on('data', (b: Buffer) => parts.push(b));
    req.on('end', () => {
      const body = Buffer.concat(parts).toString('utf8');
      requests.push({ method: req.method!, url: req.url!, headers: req.headers, rawHeaders: req.rawHeaders, body, socket: sockets.indexOf(req.socket) });
      handle(req, res, body);
    });
  });
  server.on('connection', (s) => sockets.push(s));
  const port = await listen(server);
  cleanups.push(() => {
    server.closeAllConnections();
    return new Promise((r) => server.close(r));
  });
  return { server, origin: `http://127.0.0.1:${port}`, port, sockets, requests };
}

export interface RawRequest {
  head: string;
  body: string;
  /** Which of the server's connections carried it, and its place on that connection. */
  socket: number;
  onSocket: number;
}

export interface RawServer {
  origin: string;
  port: number;
  sockets: Socket[];
  /** Whether each socket has closed. */
  closed: boolean[];
  requests: RawRequest[];
  /** All bytes received, on every socket. */
  received: number;
}

/** A net server that reads requests (head and content-length body) and lets `answer` write any bytes back. */
export async function rawServer(answer: (req: RawRequest, socket: Socket) => void, onConnection?: (socket: Socket) => void): Promise<RawServer> {
  const raw = { sockets: [], closed: [], requests: [], received: 0 } as unknown as RawServer;
  const server = createNetServer((socket) => {
    const index = raw.sockets.push(socket) - 1;
    raw.closed[index] = false;
    socket.on('close', () => (raw.closed[index] = true));
    socket.on('error', () => {});
    let pending = Buffer.alloc(0);
    let onSocket = 0;
    socket.on('data', (b: Buffer) => {
      raw.received += b.length;
      pending = Buffer.concat([pending, b]);
      for (;;) {
        const end = pending.indexOf('\r\n\r\n');
        if (end < 0) return;
        const head = pending.toString('latin1', 0, end);
        const length = Number(/\r\ncontent-length: (\d+)/i.exec(head)?.[1] ?? 0);
        if (pending.length < end + 4 + length) return;
        const body = pending.toString('utf8', end + 4, end + 4 + length);
        pending = pending.subarray(end + 4 + length);
        const req = { head, body, socket: index, onSocket: onSocket++ };
        raw.requests.push(req);
        answer(req, socket);
      }
    });
    onConnection?.(socket);
  });
  const port = await listen(server);
  cleanups.push(() => {
    for (const s of raw.sockets) s.destroy();
    return new Promise((r) => server.close(r));
  });
  return Object.assign(raw, { origin: `http://127.0.0.1:${port}`, port });
}

/** A complete keep-alive answer with a content-length. */
export function answer(body: string, extraHeaders = ''): string {
  return `HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: ${Buffer.byteLength(body)}\r\n${extraHeaders}\r\n${body}`;
}

function listen(server: NetServer | HttpServer): Promise<number> {
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve((server.address() as AddressInfo).port)));
}
