// The platform's HTTP layer: request ids, JSON parsing with clear 400s, the
// {code, statusText, message, data} envelope with real statuses for errors.
import Fastify, { LogController, type FastifyInstance, type FastifyReply, type FastifyRequest } from 'fastify';
import { newRequestId } from '@kbchat/shared';
import { errors, PlatformError } from './errors.js';

export function toPlatformError(err: unknown, req: FastifyRequest): PlatformError {
  if (err instanceof PlatformError) return err;
  const e = err as { statusCode?: number; code?: string; message?: string; status?: number };
  // Typed errors of the ingest readers and link fetcher carry their own status.
  if (typeof e.status === 'number' && typeof e.code === 'string' && e.status >= 400 && e.status < 600) return new PlatformError(e.status, e.code, e.message ?? 'Bad request');
  if (e.code === 'FST_ERR_CTP_BODY_TOO_LARGE') return errors.tooLarge('The request body is too large');
  if (e.code === 'FST_ERR_CTP_INVALID_MEDIA_TYPE') return new PlatformError(415, 'unsupported_media_type', 'Send the body as application/json');
  if (e.statusCode && e.statusCode < 500) return new PlatformError(e.statusCode, e.code ?? 'bad_request', e.message ?? 'Bad request');
  req.log.error({ err, requestId: req.id }, 'unexpected error');
  return errors.internal(`The platform hit an unexpected error (request id ${req.id}); the log has the details`);
}

export function sendError(err: unknown, req: FastifyRequest, reply: FastifyReply): void {
  const e = toPlatformError(err, req);
  reply.header('x-request-id', req.id);
  reply.code(e.status).send(e.toBody());
}

export function buildHttpApp(opts: { logLevel: string; bodyLimit?: number }): FastifyInstance {
  const app = Fastify({
    logger: { level: opts.logLevel, redact: ['req.headers.authorization'] },
    logController: new LogController({ disableRequestLogging: true }),
    genReqId: () => newRequestId(),
    requestIdHeader: false,
    bodyLimit: opts.bodyLimit ?? 32 * 1024 * 1024,
    // Shutdown closes every client connection instead of waiting up to the keep-alive timeout on one that is mid-request.
    forceCloseConnections: true,
    frameworkErrors: (err, req, reply) => sendError(err, req, reply),
  });
  app.addHook('onRequest', (req, reply, done) => {
    reply.header('x-request-id', req.id);
    done();
  });
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (_req, body, done) => {
    if (body === '' || body === undefined) return done(null, undefined);
    try {
      done(null, JSON.parse(body as string));
    } catch (err) {
      done(errors.invalidJson((err as Error).message), undefined);
    }
  });
  app.setErrorHandler((err: unknown, req, reply) => sendError(err, req, reply));
  app.setNotFoundHandler((req, reply) => {
    reply.code(404).send(errors.notFound(`${req.method} ${req.url.split('?')[0]}`).toBody());
  });
  return app;
}
