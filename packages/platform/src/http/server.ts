// The platform's HTTP layer on @kbchat/server-kit's base (request ids, JSON
// parsing with clear 400s, the bound on heads and stalled bodies that the
// gateway has too, the documents): the {code, statusText, message, data}
// envelope with real statuses for errors (node's own refusals of a malformed
// or late request included).
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { answerBadPageAddress, buildServiceApp, type ServiceAppOptions, type ServiceErrors } from '@kbchat/server-kit';
import { errors, PlatformError } from './errors.js';

const DEFAULT_BODY_LIMIT = 32 * 1024 * 1024;

export function toPlatformError(err: unknown, req: FastifyRequest): PlatformError {
  if (err instanceof PlatformError) return err;
  const e = err as { statusCode?: number; code?: string; message?: string; status?: number };
  // Typed errors of the ingest readers and link fetcher carry their own status.
  if (typeof e.status === 'number' && typeof e.code === 'string' && e.status >= 400 && e.status < 600)
    return new PlatformError(e.status, e.code, e.message ?? 'Bad request');
  if (e.code === 'FST_ERR_CTP_BODY_TOO_LARGE') return errors.bodyTooLarge(req.routeOptions.bodyLimit ?? DEFAULT_BODY_LIMIT);
  if (e.code === 'FST_ERR_CTP_INVALID_MEDIA_TYPE') return new PlatformError(415, 'unsupported_media_type', 'Send the body as application/json');
  if (e.statusCode && e.statusCode < 500) return new PlatformError(e.statusCode, e.code ?? 'bad_request', e.message ?? 'Bad request');
  req.log.error({ err, requestId: req.id }, 'unexpected error');
  return errors.internal(`The platform hit an unexpected error (request id ${req.id}); the log has the details`);
}

export function sendError(err: unknown, req: FastifyRequest, reply: FastifyReply): void {
  const e = toPlatformError(err, req);
  reply.header('x-request-id', req.id);
  if (e.headers) reply.headers(e.headers);
  reply.code(e.status).send(e.toBody());
}

/** Every error in the envelope; a page address with a broken %-escape gets a page that says so, not JSON. */
const platformErrors: ServiceErrors = {
  send: sendError,
  beforeRouting: (err, req, reply) => void (answerBadPageAddress(err, req, reply, { title: 'kbchat', apiPrefixes: ['/api/'] }) || sendError(err, req, reply)),
  notFound: (req, reply) => {
    reply.code(404).send(errors.notFound(`${req.method} ${req.url.split('?')[0]}`).toBody());
  },
  invalidJson: (detail) => errors.invalidJson(detail),
  refusal: (status, code, message) => new PlatformError(status, code, message),
  refusalBody: (status, code, message) => JSON.stringify(new PlatformError(status, code, message).toBody()),
};

/** `requestStallTimeoutMs`: how long a head may take, and a body may pause, before a 408 (default 60 s). */
export function buildHttpApp(
  opts: { logLevel: string; bodyLimit?: number; requestStallTimeoutMs?: number } & Partial<Pick<ServiceAppOptions, 'docs' | 'routes' | 'webApp'>>,
): FastifyInstance {
  return buildServiceApp({
    logLevel: opts.logLevel,
    redact: ['req.headers.authorization'],
    bodyLimit: opts.bodyLimit ?? DEFAULT_BODY_LIMIT,
    requestStallTimeoutMs: opts.requestStallTimeoutMs ?? 60_000,
    // Shutdown closes every client connection instead of waiting up to the keep-alive timeout on one that is mid-request.
    fastify: { forceCloseConnections: true },
    errors: platformErrors,
    docs: opts.docs,
    routes: opts.routes,
    webApp: opts.webApp,
  });
}
