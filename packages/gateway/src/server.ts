// The gateway's HTTP layer on @kbchat/server-kit's base (request ids, JSON
// parsing with clear 400s, the stall bound, the documents): the OpenAI error
// envelope for everything, the relay's fronts in front of Fastify, the route
// plugins and the console's pages.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { callerRequestId, newRequestId, openAIError } from '@kbchat/shared';
import { buildServiceApp, refuseHead, serviceServerOptions, type ServiceErrors } from '@kbchat/server-kit';
import { adminPlugin } from './admin/routes.js';
import { errors, GatewayError } from './errors.js';
import { gatewayApiDocs } from './openapi.js';
import type { GatewayServices } from './gateway.js';
import { asGatewayError, errorHeaders } from './http-errors.js';
import { metricsRoutes } from './metrics/routes.js';
import { installLeanFront } from './http1/lean-front.js';
import { nodeFront } from './http1/node-front.js';
import { relayService } from './relay/front-serve.js';
import { relayRoutes } from './relay/routes.js';

const BODY_LIMIT = 64 * 1024 * 1024;
/** The console's pages (its router's top-level paths): each is console.html from the web app's build. */
export const CONSOLE_PAGES = ['/', '/dashboard', '/channels', '/users', '/tokens', '/redemptions', '/logs', '/prices', '/groups'];

/** Sends the OpenAI envelope, with the request id in the header and at the end of the message. */
function sendError(err: unknown, req: FastifyRequest, reply: FastifyReply): void {
  const e = asGatewayError(err, req.id, req.log, req.routeOptions.bodyLimit ?? BODY_LIMIT);
  reply.headers(errorHeaders(e, req.id, req.log));
  reply.code(e.status).send(e.toBody(req.id));
}

/** Every error in the OpenAI envelope, its message ending with the request id. */
const gatewayErrors: ServiceErrors = {
  send: sendError,
  notFound: (req, reply) => {
    reply.code(404).send(openAIError(`Invalid URL (${req.method} ${req.url.split('?')[0]})`, 'invalid_request_error', 'not_found', null, req.id));
  },
  invalidJson: (detail) => errors.invalidJson(detail),
  refusal: (status, code, message) => new GatewayError(status, message, 'invalid_request_error', code),
  refusalBody: (status, code, message, requestId) => JSON.stringify(openAIError(message, 'invalid_request_error', code, null, requestId)),
};

export function buildGatewayApp(services: GatewayServices, opts: { logLevel?: string } = {}): FastifyInstance {
  const frontOptions = { bodyLimit: BODY_LIMIT, trustProxy: services.config.trustProxy, log: () => app.log };
  const relay = relayService(services.relay, services.auth, frontOptions);
  const front = nodeFront(relay);
  const app: FastifyInstance = buildServiceApp({
    // The relay's POSTs are answered before Fastify sees them: the common ones
    // on the raw socket (http1/lean-front.ts), the rest on node:http
    // (http1/node-front.ts), which say why.
    serverFactory: (handler) => {
      // One bound for heads and stalled bodies on both fronts (the lean front reads headersTimeout too).
      // node's checks before a request is served (Host on HTTP/1.1), in the envelope instead of its empty 400, before the fronts.
      const server = createServer(serviceServerOptions(services.config.requestStallTimeoutMs), (req: IncomingMessage, res: ServerResponse) => {
        if (!refuseHead(req, res, gatewayErrors, false) && !front(req, res)) handler(req, res);
      });
      server.keepAliveTimeout = 72_000; // Fastify's, which a serverFactory does not get
      installLeanFront(server, relay);
      return server;
    },
    logLevel: opts.logLevel ?? services.config.logLevel,
    redact: ['req.headers.authorization', 'req.headers["api-key"]'],
    // The caller's own id when well formed (the platform sends its request's), so one id finds both services' lines.
    genReqId: (req) => callerRequestId(req.headers['x-request-id']) ?? newRequestId(),
    // One shared logger instead of a child per request (pino children cost
    // microseconds the relay does not have); errors log the request id themselves.
    fastify: { childLoggerFactory: (logger) => logger },
    bodyLimit: BODY_LIMIT,
    requestStallTimeoutMs: services.config.requestStallTimeoutMs,
    trustProxy: services.config.trustProxy,
    errors: gatewayErrors,
    docs: gatewayApiDocs(),
    routes: (app) => {
      app.after(() => {
        metricsRoutes(app, {
          metrics: services.metrics,
          store: services.store,
          metricsToken: services.config.metricsToken,
          rateLimitsProblem: () => services.limits.counters.problem(),
        });
        app.get('/healthz', { schema: { description: 'Liveness: the process answers (and which store it runs on)', security: [] } }, async () => ({
          ok: true,
          store: services.store.kind,
        }));
        relayRoutes(app, services.relay, services.auth);
      });
      void app.register(adminPlugin, { prefix: '/api', services });
    },
    // GETs only: the relay's fronts take nothing but POSTs to /v1/*, so these reach Fastify.
    webApp: {
      dir: services.config.webDir,
      entries: [{ html: 'console.html', paths: CONSOLE_PAGES }],
      title: 'kbchat gateway',
      note: 'The admin API answers under /api, the relay under /v1.',
    },
  });
  return app;
}
