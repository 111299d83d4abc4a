// The gateway's HTTP layer: request ids, JSON parsing with clear 400s, the
// OpenAI error envelope for everything, and the route plugins.
import Fastify, { LogController, type FastifyInstance, type FastifyReply, type FastifyRequest } from 'fastify';
import { newRequestId, openAIError } from '@kbchat/shared';
import { adminRoutes } from './admin/routes.js';
import { errors, GatewayError } from './errors.js';
import type { GatewayServices } from './gateway.js';
import { relayRoutes, type RawBodyRequest } from './relay/routes.js';

/** Any error thrown while handling a request, as the GatewayError the client gets. */
function toGatewayError(err: unknown, req: FastifyRequest): GatewayError {
  if (err instanceof GatewayError) return err;
  const fe = err as { statusCode?: number; code?: string; message?: string; validation?: unknown };
  if (fe.code === 'FST_ERR_CTP_BODY_TOO_LARGE') return new GatewayError(413, 'Request body is too large (limit 64 MB)', 'invalid_request_error', 'body_too_large');
  if (fe.code === 'FST_ERR_CTP_INVALID_MEDIA_TYPE') return new GatewayError(415, 'Send the body as application/json', 'invalid_request_error', 'unsupported_media_type');
  if (fe.code === 'FST_ERR_BAD_URL') {
    return new GatewayError(400, `Invalid URL: ${fe.message ?? 'the path is not valid percent-encoding'}`, 'invalid_request_error', 'invalid_url');
  }
  if (fe.code === 'FST_ERR_MAX_PARAM_LENGTH') return new GatewayError(414, `Invalid URL: ${fe.message ?? 'a path parameter is too long'}`, 'invalid_request_error', 'uri_too_long');
  if (fe.statusCode && fe.statusCode < 500) return new GatewayError(fe.statusCode, fe.message ?? 'Bad request', 'invalid_request_error', fe.code ?? null);
  req.log.error({ err, requestId: req.id }, 'unexpected error');
  return errors.internal('The gateway hit an unexpected error; the request id identifies it in the gateway log');
}

/** Sends the OpenAI envelope, with the request id in the header and at the end of the message. */
function sendError(err: unknown, req: FastifyRequest, reply: FastifyReply): void {
  const e = toGatewayError(err, req);
  if (e.status >= 500) req.log.warn({ requestId: req.id, code: e.code }, e.message);
  reply.header('x-request-id', req.id);
  if (e.retryAfter && /^[\w ,:+-]{1,64}$/.test(e.retryAfter)) reply.header('retry-after', e.retryAfter);
  reply.code(e.status).send(e.toBody(req.id));
}

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

  app.setErrorHandler((err: unknown, req, reply) => sendError(err, req, reply));

  app.setNotFoundHandler((req, reply) => {
    reply.code(404).send(openAIError(`Invalid URL (${req.method} ${req.url.split('?')[0]})`, 'invalid_request_error', 'not_found', null, req.id));
  });

  app.get('/healthz', async () => ({ ok: true, store: services.store.kind }));
  relayRoutes(app, services.relay, services.auth);
  adminRoutes(app, services);
  return app;
}
