// The gateway's HTTP layer: request ids, JSON parsing with clear 400s, the
// OpenAI error envelope for everything, the route plugins and the console's pages.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import Fastify, { LogController, type FastifyInstance, type FastifyReply, type FastifyRequest } from 'fastify';
import { callerRequestId, lacksHost, newRequestId, openAIError, requestStallOptions, watchBodyStalls } from '@kbchat/shared';
import { serveWebApp } from '@kbchat/shared/web-app';
import { adminRoutes } from './admin/routes.js';
import { errors } from './errors.js';
import { gatewayApiDocs } from './openapi.js';
import type { GatewayServices } from './gateway.js';
import { answerClientError, asGatewayError, errorHeaders, refuseRequest } from './http-errors.js';
import { metricsRoutes } from './metrics/routes.js';
import { installLeanFront } from './http1/lean-front.js';
import { nodeFront } from './http1/node-front.js';
import { relayService } from './relay/front-serve.js';
import { relayRoutes } from './relay/routes.js';

const BODY_LIMIT = 64 * 1024 * 1024;
/** The console's pages (its router's top-level paths): each is console.html from the web app's build. */
export const CONSOLE_PAGES = ['/', '/dashboard', '/channels', '/users', '/tokens', '/logs', '/prices'];

/** Sends the OpenAI envelope, with the request id in the header and at the end of the message. */
function sendError(err: unknown, req: FastifyRequest, reply: FastifyReply): void {
  const e = asGatewayError(err, req.id, req.log, req.routeOptions.bodyLimit ?? BODY_LIMIT);
  reply.headers(errorHeaders(e, req.id, req.log));
  reply.code(e.status).send(e.toBody(req.id));
}

/**
 * node's own checks before a request is served (Host on HTTP/1.1, then an
 * Expect it knows), answered in the envelope instead of its empty 400 and 417.
 */
function refusedHead(req: IncomingMessage, res: ServerResponse, unknownExpectation: boolean): boolean {
  if (lacksHost(req)) refuseRequest(res, 400, 'missing_host', 'An HTTP/1.1 request must have a Host header');
  else if (unknownExpectation) refuseRequest(res, 417, 'expectation_failed', 'Only "Expect: 100-continue" is supported');
  else return false;
  return true;
}

export function buildGatewayApp(services: GatewayServices, opts: { logLevel?: string } = {}): FastifyInstance {
  const frontOptions = { bodyLimit: BODY_LIMIT, trustProxy: services.config.trustProxy, log: () => app.log };
  const relay = relayService(services.relay, services.auth, frontOptions);
  const front = nodeFront(relay);
  const app: FastifyInstance = Fastify({
    // The relay's POSTs are answered before Fastify sees them: the common ones
    // on the raw socket (http1/lean-front.ts), the rest on node:http
    // (http1/node-front.ts), which say why.
    serverFactory: (handler) => {
      // One bound for heads and stalled bodies on both fronts (the lean front reads headersTimeout too).
      const server = createServer({ ...requestStallOptions(services.config.requestStallTimeoutMs), requireHostHeader: false }, (req, res) => {
        if (!refusedHead(req, res, false) && !front(req, res)) handler(req, res);
      });
      server.on('checkExpectation', (req: IncomingMessage, res: ServerResponse) => refusedHead(req, res, true));
      server.keepAliveTimeout = 72_000; // Fastify's, which a serverFactory does not get
      watchBodyStalls(server);
      installLeanFront(server, relay);
      return server;
    },
    // node's parser refusals and late requests, in the envelope (Fastify's default answers its own JSON).
    clientErrorHandler: (err, socket) => answerClientError(err, socket, services.config.requestStallTimeoutMs),
    logger: {
      level: opts.logLevel ?? services.config.logLevel,
      redact: ['req.headers.authorization', 'req.headers["api-key"]'],
    },
    // Per-request info lines would dominate a relay's CPU; errors are still logged.
    logController: new LogController({ disableRequestLogging: true }),
    // The caller's own id when well formed (the platform sends its request's), so one id finds both services' lines.
    genReqId: (req) => callerRequestId(req.headers['x-request-id']) ?? newRequestId(),
    // One shared logger instead of a child per request (pino children cost
    // microseconds the relay does not have); errors log the request id themselves.
    childLoggerFactory: (logger) => logger,
    requestIdHeader: false,
    bodyLimit: BODY_LIMIT,
    trustProxy: services.config.trustProxy,
    // Errors Fastify meets before routing (a malformed URL such as /v1/%zz, an
    // over-long path parameter) skip the hooks and setErrorHandler; this gives
    // them the same envelope and request id as every other error.
    frameworkErrors: (err, req, reply) => sendError(err, req, reply),
  });

  app.addHook('onRequest', (req, reply, done) => {
    reply.header('x-request-id', req.id);
    done();
  });

  // Plain JSON.parse, as in the relay's front: a broken body is a 400 that says where it broke.
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (req, body, done) => {
    if (body === '' || body === undefined) return done(null, undefined);
    try {
      done(null, JSON.parse(body as string));
    } catch (err) {
      done(errors.invalidJson((err as Error).message), undefined);
    }
  });

  app.setErrorHandler((err: unknown, req, reply) => sendError(err, req, reply));

  app.setNotFoundHandler((req, reply) => {
    reply.code(404).send(openAIError(`Invalid URL (${req.method} ${req.url.split('?')[0]})`, 'invalid_request_error', 'not_found', null, req.id));
  });

  // First: the API document sees only the routes declared after it loads (hence app.after).
  gatewayApiDocs(app);
  app.after(() => {
    metricsRoutes(app, { metrics: services.metrics, store: services.store, metricsToken: services.config.metricsToken });
    app.get('/healthz', { schema: { description: 'Liveness: the process answers (and which store it runs on)', security: [] } }, async () => ({ ok: true, store: services.store.kind }));
    relayRoutes(app, services.relay, services.auth);
  });
  adminRoutes(app, services);
  // GETs only: the relay's fronts take nothing but POSTs to /v1/*, so these reach Fastify.
  serveWebApp(app, services.config.webDir, [{ html: 'console.html', paths: CONSOLE_PAGES }], {
    title: 'kbchat gateway',
    note: 'The admin API answers under /api, the relay under /v1.',
  });
  return app;
}
