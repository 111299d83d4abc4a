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
import { relayMessages } from './messages.js';
import { anthropicErrorBody, anthropicErrorEvent, anthropicErrorStatus } from '../providers/anthropic/inbound.js';

export type RelayHandler = (deps: RelayDeps, ctx: RelayContext, body: unknown, r: Responder) => Promise<void>;

/** A relay path: its handler, the endpoint its metrics and log count it under, and the API it speaks. */
export interface RelayRoute {
  handle: RelayHandler;
  endpoint: Endpoint;
  /** Anthropic's API (/v1/messages): the token may come in X-Api-Key, and errors go in Anthropic's envelope. */
  anthropic: boolean;
}

const ROUTES = new Map<string, RelayRoute>([
  ['/v1/chat/completions', { handle: relayChat, endpoint: 'chat', anthropic: false }],
  ['/v1/messages', { handle: relayMessages, endpoint: 'chat', anthropic: true }],
  ['/v1/embeddings', { handle: relayEmbeddings, endpoint: 'embeddings', anthropic: false }],
  ['/v1/rerank', { handle: relayRerank, endpoint: 'rerank', anthropic: false }],
]);

/** The paths the fronts answer (POST only); the API document lists them (relay/routes.ts). */
export const RELAY_PATHS: readonly string[] = [...ROUTES.keys()];

/** The route of a relay path (a query string is ignored); undefined for any other path. */
export function relayRoute(url: string): RelayRoute | undefined {
  const query = url.indexOf('?');
  return ROUTES.get(query < 0 ? url : url.slice(0, query));
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
export async function serveRelay(deps: RelayDeps, auth: TokenAuthenticator, opts: FrontOptions, route: RelayRoute, x: Exchange): Promise<void> {
  const { requestId, responder } = x;
  const arrivedAt = Date.now();
  let ctx: RelayContext | undefined;
  deps.metrics.started();
  try {
    // The token first: an anonymous client cannot make the gateway receive and parse a 64 MB body.
    // Anthropic's SDKs send the key in X-Api-Key (older) or as a Bearer token (newer).
    const authorization = x.authorization ?? (route.anthropic && x.apiKey ? `Bearer ${x.apiKey}` : undefined);
    const caller: Caller = await auth.authenticate(authorization, x.clientIp(opts.trustProxy));
    if (x.declaredLength !== undefined && x.declaredLength > opts.bodyLimit) throw errors.bodyTooLarge(opts.bodyLimit);
    const text = await x.readBody(opts.bodyLimit);
    const body = parseBody(x.contentType, text);
    const rawBody = typeof body === 'string' ? undefined : text;
    ctx = { requestId, caller, startedAt: Date.now(), signal: x.signal, rawBody, priority: x.priority, recorded: false };
    await route.handle(deps, ctx, body, responder);
  } catch (err) {
    let status = 499; // the client is gone: nothing can be answered
    try {
      const log = opts.log();
      if (responder.started) {
        // The stream is open: the error can only travel inside it.
        const e = err instanceof GatewayError ? err : new GatewayError(500, (err as Error).message, 'server_error');
        status = e.status;
        if (route.anthropic) responder.end(anthropicErrorEvent(e, requestId));
        else endStreamWithError(responder, e, requestId);
        return;
      }
      if (!x.canAnswer()) return;
      // A chunked body found over the limit while read (a declared one was refused above).
      const e = err instanceof BodyTooLargeError ? errors.bodyTooLarge(err.limit) : asGatewayError(err, requestId, log, opts.bodyLimit);
      status = e.status;
      const headers = errorHeaders(e, requestId, log);
      if (!route.anthropic) x.answerError(e.status, headers, JSON.stringify(e.toBody(requestId)));
      // Anthropic's SDKs read the request id from Request-Id.
      else x.answerError(anthropicErrorStatus(e.status), { ...headers, 'request-id': requestId }, JSON.stringify(anthropicErrorBody(e, requestId)));
    } catch (inner) {
      opts.log().error({ err: inner, requestId }, 'could not answer a relay error');
    } finally {
      // Refused before a run began (token, body, schema, quota): a run counts itself when it settles.
      if (!ctx?.recorded) deps.metrics.refused(route.endpoint, status, Date.now() - arrivedAt);
    }
  } finally {
    deps.metrics.ended();
  }
}

/** The relay as the service behind the HTTP/1.1 fronts (server.ts plugs it into both). */
export function relayService(deps: RelayDeps, auth: TokenAuthenticator, opts: FrontOptions): ExchangeService<RelayRoute> {
  return {
    route: relayRoute,
    serve: (route, exchange) => void serveRelay(deps, auth, opts, route, exchange),
    log: opts.log,
  };
}
