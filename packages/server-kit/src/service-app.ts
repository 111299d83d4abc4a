// The Fastify base both services build on: request ids (in X-Request-Id on
// every answer), plain JSON.parse with a 400 that says where a body broke,
// the bound on heads and stalled bodies (http-server.ts), node's refusals
// (no Host, an unknown Expect, a malformed or late request) answered in the
// service's own error envelope, the envelope on every error and unknown
// route, the API documents (openapi.ts) and the built web app (web-app.ts).
// What differs is passed in: the envelope, the documents, the routes, the
// pages, and the gateway's node:http server of its own (its relay fronts).
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import Fastify, { LogController, type FastifyInstance, type FastifyReply, type FastifyRequest, type FastifyServerOptions } from 'fastify';
import { newRequestId } from '@kbchat/shared';
import { answerOnSocket, clientErrorAnswer, lacksHost, requestStallOptions, watchBodyStalls } from './http-server.js';
import { registerApiDocs, type ApiDocsOptions } from './openapi.js';
import { serveWebApp, type WebAppEntry, type WebAppOptions } from './web-app.js';

/** How a service words its errors: every answer the base makes goes through these. */
export interface ServiceErrors {
  /** Sends any error in the envelope: the error handler's, and Fastify's own before routing unless `beforeRouting`. */
  send(err: unknown, req: FastifyRequest, reply: FastifyReply): void;
  /** Errors Fastify meets before routing (a malformed URL), where they are answered otherwise (the platform's pages). */
  beforeRouting?(err: Error & { code?: string }, req: FastifyRequest, reply: FastifyReply): void;
  /** The answer to a path no route serves. */
  notFound(req: FastifyRequest, reply: FastifyReply): void;
  /** The error of a JSON body that does not parse (`detail`: JSON.parse's words). */
  invalidJson(detail: string): Error;
  /** An error of the envelope, thrown from the base's hooks (a request without Host). */
  refusal(status: number, code: string, message: string): Error;
  /** The body of an answer made outside Fastify (node's refusals), as JSON text; `requestId` is the one in its header. */
  refusalBody(status: number, code: string, message: string, requestId: string): string;
}

export interface ServiceAppOptions {
  logLevel: string;
  /** Request fields kept out of the logs (credentials). */
  redact: string[];
  bodyLimit: number;
  /** How long a head may take, and a body may pause, before a 408. */
  requestStallTimeoutMs: number;
  trustProxy?: FastifyServerOptions['trustProxy'];
  /** The request id of a request (default: a new one). */
  genReqId?: (req: IncomingMessage) => string;
  /** A node:http server of the service's own, made with serviceServer() so that it has the same bounds. */
  serverFactory?: (handler: (req: IncomingMessage, res: ServerResponse) => void) => Server;
  /** Fastify options that one service sets for its own reasons. */
  fastify?: Pick<FastifyServerOptions, 'childLoggerFactory' | 'forceCloseConnections'>;
  errors: ServiceErrors;
  /** The API documents (/openapi.json, /docs), registered before the routes so that they see them; none for a bare base (tests). */
  docs?: ApiDocsOptions;
  /**
   * The service's routes and plugins. The document sees only routes declared
   * after it loads: declare them in app.after() or in a plugin.
   */
  routes?(app: FastifyInstance): void;
  /** The built web app's pages (packages/web's dist/), served once the routes are in. */
  webApp?: { dir: string; entries: WebAppEntry[] } & WebAppOptions;
}

const HOST_MISSING = [400, 'missing_host', 'An HTTP/1.1 request must have a Host header'] as const;
const EXPECTATION_UNKNOWN = [417, 'expectation_failed', 'Only "Expect: 100-continue" is supported'] as const;

/**
 * node:http server options of a service: the stall bound, and no Host check of
 * node's own (it answers an empty 400; the base answers in the envelope).
 */
export function serviceServerOptions(stallMs: number) {
  return { ...requestStallOptions(stallMs), requireHostHeader: false };
}

/**
 * What node would refuse with an empty 400 or 417 (no Host on HTTP/1.1, an
 * Expect other than 100-continue), answered in the envelope with a new request
 * id; the connection closes after it. True when it answered.
 */
export function refuseHead(req: IncomingMessage, res: ServerResponse, errors: Pick<ServiceErrors, 'refusalBody'>, unknownExpectation: boolean): boolean {
  const refusal = lacksHost(req) ? HOST_MISSING : unknownExpectation ? EXPECTATION_UNKNOWN : undefined;
  if (!refusal) return false;
  const [status, code, message] = refusal;
  const requestId = newRequestId();
  res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', 'x-request-id': requestId, connection: 'close' });
  res.end(errors.refusalBody(status, code, message, requestId));
  return true;
}

export function buildServiceApp(opts: ServiceAppOptions): FastifyInstance {
  const stallMs = opts.requestStallTimeoutMs;
  const { errors } = opts;
  const app = Fastify({
    ...(opts.serverFactory ? { serverFactory: opts.serverFactory } : { http: serviceServerOptions(stallMs) }),
    // node's parser refusals and late requests, in the envelope (Fastify's default answers its own JSON).
    clientErrorHandler: (err, socket) => {
      const { status, code, message } = clientErrorAnswer(err, stallMs);
      const requestId = newRequestId();
      answerOnSocket(socket, status, { 'x-request-id': requestId }, errors.refusalBody(status, code, message, requestId));
    },
    logger: { level: opts.logLevel, redact: opts.redact },
    // Per-request info lines would dominate a relay's CPU; errors are still logged.
    logController: new LogController({ disableRequestLogging: true }),
    genReqId: opts.genReqId ?? (() => newRequestId()),
    requestIdHeader: false,
    bodyLimit: opts.bodyLimit,
    ...(opts.trustProxy === undefined ? {} : { trustProxy: opts.trustProxy }),
    ...opts.fastify,
    // Errors Fastify meets before routing (a malformed URL such as /v1/%zz, an
    // over-long path parameter) skip the hooks and the error handler; this
    // gives them the same envelope and request id as every other error.
    frameworkErrors: (err, req, reply) => (errors.beforeRouting ?? errors.send)(err, req, reply),
  });
  watchBodyStalls(app.server);
  app.server.on('checkExpectation', (req: IncomingMessage, res: ServerResponse) => refuseHead(req, res, errors, true));

  app.addHook('onRequest', (req, reply, done) => {
    reply.header('x-request-id', req.id);
    // A server of the service's own may refuse it before Fastify; here for Fastify's own server.
    if (lacksHost(req.raw)) {
      reply.header('connection', 'close');
      return done(errors.refusal(...HOST_MISSING));
    }
    done();
  });

  // Plain JSON.parse, as in the gateway's relay front: a broken body is a 400 that says where it broke.
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (_req, body, done) => {
    if (body === '' || body === undefined) return done(null, undefined);
    try {
      done(null, JSON.parse(body as string));
    } catch (err) {
      done(errors.invalidJson((err as Error).message), undefined);
    }
  });
  app.setErrorHandler((err: unknown, req, reply) => errors.send(err, req, reply));
  app.setNotFoundHandler((req, reply) => errors.notFound(req, reply));

  // First: the document sees only the routes declared after it loads.
  if (opts.docs) registerApiDocs(app, opts.docs);
  opts.routes?.(app);
  const { webApp } = opts;
  if (webApp) app.after(() => serveWebApp(app, webApp.dir, webApp.entries, webApp));
  return app;
}
