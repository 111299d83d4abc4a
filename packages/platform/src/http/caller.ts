// Who a request acts for, found by the onRequest hook of its group of routes
// (authenticated()), before the body is read: a request without a valid key
// or session is a 401 whatever its body, and the handlers read req.caller.
import type { FastifyInstance, FastifyRequest, onRequestHookHandler } from 'fastify';
import type { KeyCaller } from '../keys/auth.js';
import type { SessionCaller } from '../accounts/service.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** Set by authenticated(): read it only in routes of a group that has the hook. */
    caller: KeyCaller;
  }
}

/** Once, at the platform's root: every request carries the slot (Fastify keeps one object shape). */
export function decorateCaller(app: FastifyInstance): void {
  app.decorateRequest('caller', null as unknown as KeyCaller);
}

/** The onRequest hook of a group of routes that share one way to authenticate (RequestAuth.general, .any, .session). */
export function authenticated(how: (req: FastifyRequest) => Promise<KeyCaller>): onRequestHookHandler {
  return async (req) => {
    req.caller = await how(req);
  };
}

/** The caller of a route whose group authenticates with RequestAuth.session. */
export const sessionOf = (req: FastifyRequest) => req.caller as SessionCaller;
