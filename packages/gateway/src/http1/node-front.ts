// A service's POSTs (the gateway's relay: its three endpoints) served on
// node:http directly, in front of Fastify (server.ts hands every other
// request on). Why: a relayed request is a few syscalls and two small JSON
// texts, and Fastify's routing, hooks, reply and body machinery cost about a
// fifth of it (the benchmark's bare proxies: Fastify 167-180 us a request,
// node:http 146-155 us). What Fastify did for these routes the service does
// (relay/front-serve.ts, shared with the lean front): the token checked before
// the body is read, the body limit, JSON only, and the error envelope. Most
// relay requests never get here: the lean front (lean-front.ts) serves the
// simple ones off the socket, and node:http (then this front) gets the
// connections it hands over (chunked bodies, Expect, HTTP/1.0, odd heads).
import type { IncomingMessage, ServerResponse } from 'node:http';
import { callerRequestId, newRequestId } from '@kbchat/shared';
import { BodyTooLargeError, ClientSignal, forwardedClient, type Exchange, type ExchangeService, type Responder } from './exchange.js';

// Flat [name, value, ...] lists: Node writes them without building a header object.
const SSE_HEADERS = ['content-type', 'text/event-stream; charset=utf-8', 'cache-control', 'no-cache', 'connection', 'keep-alive', 'x-accel-buffering', 'no'];

/** Resolves when the socket takes more, or is gone; leaves no listener behind. */
function drained(res: ServerResponse): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      res.off('drain', done);
      res.off('close', done);
      resolve();
    };
    res.on('drain', done);
    res.on('close', done);
  });
}

/** One request on node:http: its Exchange and Responder (one allocation per request). */
class ResponseExchange implements Exchange, Responder {
  started = false;
  /** The caller's X-Request-Id when well formed (the platform sends its own), else a new one. */
  readonly requestId: string;
  readonly signal = new ClientSignal();
  readonly responder: Responder = this;

  constructor(
    private readonly req: IncomingMessage,
    private readonly res: ServerResponse,
  ) {
    this.requestId = callerRequestId(req.headers['x-request-id']) ?? newRequestId();
    res.on('close', () => {
      if (!res.writableFinished) this.signal.abort();
    });
  }

  get authorization(): string | undefined {
    return this.req.headers.authorization;
  }

  get apiKey(): string | undefined {
    const key = this.req.headers['x-api-key'];
    return Array.isArray(key) ? key[0] : key;
  }

  get priority(): string | undefined {
    const priority = this.req.headers['x-kbchat-priority'];
    return Array.isArray(priority) ? priority.join(',') : priority;
  }

  get contentType(): string | undefined {
    return this.req.headers['content-type'];
  }

  get declaredLength(): number | undefined {
    const declared = this.req.headers['content-length'];
    return declared === undefined ? undefined : Number(declared);
  }

  clientIp(trustProxy: boolean): string {
    if (trustProxy) {
      const forwarded = this.req.headers['x-forwarded-for'];
      const first = forwardedClient(Array.isArray(forwarded) ? forwarded[0] : forwarded);
      if (first) return first;
    }
    return this.req.socket.remoteAddress ?? '';
  }

  readBody(limit: number): Promise<string | undefined> {
    const req = this.req;
    return new Promise((resolve, reject) => {
      const chunks: Buffer[] = [];
      let size = 0;
      req.on('data', (chunk: Buffer) => {
        size += chunk.length;
        if (size > limit) {
          req.removeAllListeners('data');
          req.resume();
          reject(new BodyTooLargeError(limit));
          return;
        }
        chunks.push(chunk);
      });
      let ended = false;
      req.on('end', () => {
        ended = true;
        resolve(size === 0 ? undefined : chunks.length === 1 ? chunks[0]!.toString('utf8') : Buffer.concat(chunks).toString('utf8'));
      });
      req.on('error', reject);
      // A client that leaves mid-body: nothing else would settle this promise.
      // (Checked first: an Error's stack costs microseconds on every request.)
      req.on('close', () => {
        if (!ended) reject(new Error('the client closed the connection before the body was complete'));
      });
    });
  }

  canAnswer(): boolean {
    return !this.res.headersSent && !this.res.destroyed;
  }

  // With a Content-Length, as the lean front answers (writeHead before end would otherwise make node send it chunked).
  answerError(status: number, headers: Record<string, string>, text: string): void {
    this.res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', ...headers, 'content-length': Buffer.byteLength(text) });
    this.res.end(text);
  }

  /** Headers set before the answer (setHeaders), sent with it. */
  private extra: readonly string[] = [];

  setHeaders(pairs: readonly string[]): void {
    this.extra = [...this.extra, ...pairs];
  }

  json(status: number, text: string): void {
    this.res.writeHead(status, [
      'content-type',
      'application/json; charset=utf-8',
      'x-request-id',
      this.requestId,
      'content-length',
      String(Buffer.byteLength(text)),
      ...this.extra,
    ]);
    this.res.end(text);
  }

  startStream(): void {
    if (this.started) return;
    this.started = true;
    this.res.writeHead(200, [...SSE_HEADERS, 'x-request-id', this.requestId, ...this.extra]);
  }

  write(text: string): void | Promise<void> {
    const res = this.res;
    if (res.destroyed || res.writableEnded) return;
    if (!res.write(text)) return drained(res);
  }

  end(text?: string): void {
    const res = this.res;
    if (res.writableEnded) return;
    if (text && !res.destroyed) res.end(text);
    else res.end();
  }
}

/**
 * Returns a request listener's front half: true when it took the request (a
 * POST to one of the service's paths), false to hand it on (to Fastify).
 */
export function nodeFront<R>(service: ExchangeService<R>): (req: IncomingMessage, res: ServerResponse) => boolean {
  return (req, res) => {
    if (req.method !== 'POST') return false;
    const route = service.route(req.url ?? '');
    if (route === undefined) return false;
    service.serve(route, new ResponseExchange(req, res));
    return true;
  };
}
