// The request a piece of code is serving, without passing it down: the HTTP
// layer runs each handler inside its request id (http/server.ts), and the
// gateway client reads it to send the gateway an id of its own per call, so
// that one id finds the platform's log lines and the gateway's.
import { AsyncLocalStorage } from 'node:async_hooks';

interface RequestContext {
  readonly requestId: string;
  /** Gateway calls made so far for this request. */
  calls: number;
}

const current = new AsyncLocalStorage<RequestContext>();

/** Runs `fn` (and everything it starts) as part of request `requestId`. */
export function runInRequest<T>(requestId: string, fn: () => T): T {
  return current.run({ requestId, calls: 0 }, fn);
}

/**
 * The X-Request-Id for the next gateway call of the current request:
 * `<platform request id>-<n>`, n counting that request's calls from 1 (the
 * gateway's request log needs each call's id to be its own: a chat turn makes
 * several). Undefined outside a request (the indexing worker): the gateway
 * makes one.
 */
export function nextGatewayCallId(): string | undefined {
  const ctx = current.getStore();
  if (!ctx) return undefined;
  ctx.calls += 1;
  return `${ctx.requestId}-${ctx.calls}`;
}
