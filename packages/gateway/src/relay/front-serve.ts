// The relay as the HTTP/1.1 fronts' service (http1/exchange.ts): which paths
// it serves, and what it does with a request once a front has its head: the
// token checked before the body is read, the body limit, JSON only, the
// handler, and the error envelope. The fronts (http1/lean-front.ts on the raw
// socket, http1/node-front.ts on node:http) differ only in how bytes come and
// go, which is the Exchange they pass in.
import type { Caller, TokenAuthenticator } from '../accounts/auth.js';
import { errors, GatewayError } from '../errors.js';
import type { Endpoint } from '../providers/index.js';
import { asGatewayError, errorHeaders, type ErrorLog } from '../http-errors.js';
import { relayChat } from './chat.js';
import { endStreamWithError } from './chat-stream.js';
import { BodyTooLargeError, type Exchange, type ExchangeService, type Responder } from '../http1/exchange.js';
import type { RelayContext, RelayDeps } from './context.js';
import { relayEmbeddings, relayRerank } from './json-endpoints.js';

export type RelayHandler = (deps: RelayDeps, ctx: RelayContext, body: unknown, r: Responder) => Promise<void>;

const HANDLERS = new Map<string, RelayHandler>([
  ['/v1/chat/completions', relayChat],
  ['/v1/embeddings', relayEmbeddings],
  ['/v1/rerank', relayRerank],
]);
/** A handler's endpoint, for the metrics of requests refused before a run began. */
const ENDPOINTS = new Map<RelayHandler, Endpoint>([
  [relayChat, 'chat'],
  [relayEmbeddings, 'embeddings'],
  [relayRerank, 'rerank'],
]);

/** The paths the fronts answer (POST only); the API document lists them (relay/routes.ts). */
export const RELAY_PATHS: readonly string[] = [...HANDLERS.keys()];

/** The handler of a relay path (a query string is ignored); undefined for any other path. */
export function relayHandler(url: string): RelayHandler | undefined {
  const query = url.indexOf('?');
  return HANDLERS.get(query < 0 ? url : url.slice(0, query));
}

export interface FrontOptions {
  bodyLimit: number;
  /** Take the client address from X-Forwarded-For (the gateway runs behind a proxy). */
  trustProxy: boolean;
  log: () => ErrorLog;
}

/** The parsed body. Plain text stays a string (as Fastify read it), which the relay's schemas refuse with a 400. */
function parseBody(contentType: string | undefined, text: string | undefined): unknown {
  if (text === undefined) return undefined;
  const essence = contentType ? contentType.split(';', 1)[0]!.trim().toLowerCase() : '';
  if (essence === 'text/plain') return text;
  if (essence !== 'application/json') throw errors.notJson();
  try {
    return JSON.parse(text);
  } catch (err) {
    throw errors.invalidJson((err as Error).message);
  }
}

/** Serves one relay request to its end; never rejects (every error becomes an answer, or nothing when the client is gone). */
export async function serveRelay(deps: RelayDeps, auth: TokenAuthenticator, opts: FrontOptions, handler: RelayHandler, x: Exchange): Promise<void> {
  const { requestId, responder } = x;
  const arrivedAt = Date.now();
  let ctx: RelayContext | undefined;
  deps.metrics.started();
  try {
    // The token first: an anonymous client cannot make the gateway receive and parse a 64 MB body.
    const caller: Caller = await auth.authenticate(x.authorization, x.clientIp(opts.trustProxy));
    if (x.declaredLength !== undefined && x.declaredLength > opts.bodyLimit) throw errors.bodyTooLarge(opts.bodyLimit);
    const text = await x.readBody(opts.bodyLimit);
    const body = parseBody(x.contentType, text);
    const rawBody = typeof body === 'string' ? undefined : text;
    ctx = { requestId, caller, startedAt: Date.now(), signal: x.signal, rawBody, recorded: false };
    await handler(deps, ctx, body, responder);
  } catch (err) {
    let status = 499; // the client is gone: nothing can be answered
    try {
      const log = opts.log();
      if (responder.started) {
        // The stream is open: the error can only travel inside it.
        const e = err instanceof GatewayError ? err : new GatewayError(500, (err as Error).message, 'server_error');
        status = e.status;
        endStreamWithError(responder, e, requestId);
        return;
      }
      if (!x.canAnswer()) return;
      // A chunked body found over the limit while read (a declared one was refused above).
      const e = err instanceof BodyTooLargeError ? errors.bodyTooLarge(err.limit) : asGatewayError(err, requestId, log, opts.bodyLimit);
      status = e.status;
      x.answerError(e.status, errorHeaders(e, requestId, log), JSON.stringify(e.toBody(requestId)));
    } catch (inner) {
      opts.log().error({ err: inner, requestId }, 'could not answer a relay error');
    } finally {
      // Refused before a run began (token, body, schema, quota): a run counts itself when it settles.
      if (!ctx?.recorded) deps.metrics.refused(ENDPOINTS.get(handler)!, status, Date.now() - arrivedAt);
    }
  } finally {
    deps.metrics.ended();
  }
}

/** The relay as the service behind the HTTP/1.1 fronts (server.ts plugs it into both). */
export function relayService(deps: RelayDeps, auth: TokenAuthenticator, opts: FrontOptions): ExchangeService<RelayHandler> {
  return {
    route: relayHandler,
    serve: (handler, exchange) => void serveRelay(deps, auth, opts, handler, exchange),
    log: opts.log,
  };
}
