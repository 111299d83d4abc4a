// The relay's three POST endpoints served on node:http directly, in front of
// Fastify (server.ts hands every other request on). Why: a relayed request
// is a few syscalls and two small JSON texts, and Fastify's routing, hooks,
// reply and body machinery cost about a fifth of it (the benchmark's bare
// proxies: Fastify 167-180 us a request, node:http 146-155 us). What Fastify
// did for these routes is spelled out here: the request id, the token checked
// before the body is read, the body limit, JSON only, and the error envelope.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { newRequestId } from '@kbchat/shared';
import type { Caller, TokenAuthenticator } from '../accounts/auth.js';
import { errors, GatewayError } from '../errors.js';
import { asGatewayError, errorHeaders, type ErrorLog } from '../http-errors.js';
import { relayChat } from './chat.js';
import { endStreamWithError } from './chat-stream.js';
import { ClientSignal, type RelayContext, type RelayDeps, type Responder } from './context.js';
import { relayEmbeddings, relayRerank } from './json-endpoints.js';

type Handler = (deps: RelayDeps, ctx: RelayContext, body: unknown, r: Responder) => Promise<void>;

const HANDLERS = new Map<string, Handler>([
  ['/v1/chat/completions', relayChat],
  ['/v1/embeddings', relayEmbeddings],
  ['/v1/rerank', relayRerank],
]);

// Flat [name, value, ...] lists: Node writes them without building a header object.
const SSE_HEADERS = ['content-type', 'text/event-stream; charset=utf-8', 'cache-control', 'no-cache', 'connection', 'keep-alive', 'x-accel-buffering', 'no'];

export interface FrontOptions {
  bodyLimit: number;
  /** Take the client address from X-Forwarded-For (the gateway runs behind a proxy). */
  trustProxy: boolean;
  log: () => ErrorLog;
}

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

/** The relay's Responder over a node:http response (a class: one allocation per request). */
class ResponseResponder implements Responder {
  started = false;

  constructor(
    private readonly res: ServerResponse,
    private readonly requestId: string,
  ) {}

  json(status: number, text: string): void {
    this.res.writeHead(status, ['content-type', 'application/json; charset=utf-8', 'x-request-id', this.requestId]);
    this.res.end(text);
  }

  startStream(): void {
    if (this.started) return;
    this.started = true;
    this.res.writeHead(200, [...SSE_HEADERS, 'x-request-id', this.requestId]);
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

function clientIp(req: IncomingMessage, trustProxy: boolean): string {
  if (trustProxy) {
    const forwarded = req.headers['x-forwarded-for'];
    const first = (Array.isArray(forwarded) ? forwarded[0] : forwarded)?.split(',')[0]?.trim();
    if (first) return first;
  }
  return req.socket.remoteAddress ?? '';
}

/** The body as text, refused when over the limit; undefined when there is none. */
function readBody(req: IncomingMessage, limit: number): Promise<string | undefined> {
  const declared = req.headers['content-length'];
  if (declared !== undefined && Number(declared) > limit) return Promise.reject(errors.bodyTooLarge());
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > limit) {
        req.removeAllListeners('data');
        req.resume();
        reject(errors.bodyTooLarge());
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

/** The parsed body. Plain text stays a string (as Fastify read it), which the relay's schemas refuse with a 400. */
function parseBody(req: IncomingMessage, text: string | undefined): unknown {
  if (text === undefined) return undefined;
  const type = req.headers['content-type'];
  const essence = type ? type.split(';', 1)[0]!.trim().toLowerCase() : '';
  if (essence === 'text/plain') return text;
  if (essence !== 'application/json') throw errors.notJson();
  try {
    return JSON.parse(text);
  } catch (err) {
    throw errors.invalidJson((err as Error).message);
  }
}

/**
 * Returns a request listener's front half: true when it took the request (a
 * POST to one of the relay's paths), false to hand it to Fastify.
 */
export function relayFront(deps: RelayDeps, auth: TokenAuthenticator, opts: FrontOptions): (req: IncomingMessage, res: ServerResponse) => boolean {
  return (req, res) => {
    if (req.method !== 'POST') return false;
    const url = req.url ?? '';
    const query = url.indexOf('?');
    const handler = HANDLERS.get(query < 0 ? url : url.slice(0, query));
    if (!handler) return false;
    void serve(handler, req, res);
    return true;
  };

  async function serve(handler: Handler, req: IncomingMessage, res: ServerResponse): Promise<void> {
    const requestId = newRequestId();
    const signal = new ClientSignal();
    res.on('close', () => {
      if (!res.writableFinished) signal.abort();
    });
    const responder = new ResponseResponder(res, requestId);
    try {
      // The token first: an anonymous client cannot make the gateway receive and parse a 64 MB body.
      const caller: Caller = await auth.authenticate(req.headers.authorization, clientIp(req, opts.trustProxy));
      const text = await readBody(req, opts.bodyLimit);
      const body = parseBody(req, text);
      const rawBody = typeof body === 'string' ? undefined : text;
      const ctx: RelayContext = { requestId, caller, startedAt: Date.now(), signal, rawBody };
      await handler(deps, ctx, body, responder);
    } catch (err) {
      const log = opts.log();
      if (responder.started) {
        // The stream is open: the error can only travel inside it.
        const e = err instanceof GatewayError ? err : new GatewayError(500, (err as Error).message, 'server_error');
        endStreamWithError(responder, e, requestId);
        return;
      }
      if (res.headersSent || res.destroyed) return;
      const e = asGatewayError(err, requestId, log);
      res.writeHead(e.status, { 'content-type': 'application/json; charset=utf-8', ...errorHeaders(e, requestId, log) });
      res.end(JSON.stringify(e.toBody(requestId)));
    }
  }
}
