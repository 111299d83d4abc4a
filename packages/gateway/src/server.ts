// The gateway's HTTP layer: request ids, JSON parsing with clear 400s, the
// OpenAI error envelope for everything, and the route plugins.
import Fastify, { LogController, type FastifyInstance } from 'fastify';
import { newRequestId, openAIError } from '@kbchat/shared';
import { adminRoutes } from './admin/routes.js';
import { errors, GatewayError } from './errors.js';
import type { GatewayServices } from './gateway.js';
import { relayRoutes, type RawBodyRequest } from './relay/routes.js';

export function buildGatewayApp(services: GatewayServices, opts: { logLevel?: string } = {}): FastifyInstance {
  const app = Fastify({
    logger: {
      level: opts.logLevel ?? services.config.logLevel,
      redact: ['req.headers.authorization', 'req.headers["api-key"]'],
    },
    // Per-request info lines would dominate a relay's CPU; errors are still logged.
    logController: new LogController({ disableRequestLogging: true }),
    genReqId: () => newRequestId(),
    // One shared logger instead of a child per request (pino children cost
    // microseconds the relay does not have); errors log the request id themselves.
    childLoggerFactory: (logger) => logger,
    requestIdHeader: false,
    bodyLimit: 64 * 1024 * 1024,
    trustProxy: process.env.TRUST_PROXY === 'true',
  });

  app.addHook('onRequest', (req, reply, done) => {
    reply.header('x-request-id', req.id);
    done();
  });

  // Plain JSON.parse: faster than the default parser, and the relay only ever
  // copies own properties. A broken body is a 400 that says where it broke.
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (req, body, done) => {
    if (body === '' || body === undefined) return done(null, undefined);
    try {
      const parsed = JSON.parse(body as string);
      (req as RawBodyRequest).rawBody = body as string;
      done(null, parsed);
    } catch (err) {
      done(errors.invalidJson((err as Error).message), undefined);
    }
  });

  app.setErrorHandler((err: unknown, req, reply) => {
    let e: GatewayError;
    if (err instanceof GatewayError) e = err;
    else {
      const fe = err as { statusCode?: number; code?: string; message?: string; validation?: unknown };
      if (fe.code === 'FST_ERR_CTP_BODY_TOO_LARGE') e = new GatewayError(413, 'Request body is too large (limit 64 MB)', 'invalid_request_error', 'body_too_large');
      else if (fe.code === 'FST_ERR_CTP_INVALID_MEDIA_TYPE') e = new GatewayError(415, 'Send the body as application/json', 'invalid_request_error', 'unsupported_media_type');
      else if (fe.statusCode && fe.statusCode < 500) e = new GatewayError(fe.statusCode, fe.message ?? 'Bad request', 'invalid_request_error', fe.code ?? null);
      else {
        req.log.error({ err }, 'unexpected error');
        e = errors.internal('The gateway hit an unexpected error; the request id identifies it in the gateway log');
      }
    }
    if (e.status >= 500) req.log.warn({ requestId: req.id, code: e.code }, e.message);
    reply.code(e.status).send(openAIError(e.message, e.type, e.code, e.param, req.id));
  });

  app.setNotFoundHandler((req, reply) => {
    reply.code(404).send(openAIError(`Invalid URL (${req.method} ${req.url.split('?')[0]})`, 'invalid_request_error', 'not_found', null, req.id));
  });

  app.get('/healthz', async () => ({ ok: true, store: services.store.kind }));
  relayRoutes(app, services.relay, services.auth);
  adminRoutes(app, services);
  return app;
}
