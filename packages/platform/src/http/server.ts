// The platform's HTTP layer: request ids, JSON parsing with clear 400s, the
// {code, statusText, message, data} envelope with real statuses for errors
// (node's own refusals of a malformed or late request included), and the
// bound on heads and stalled bodies that the gateway has too.
import type { IncomingMessage, ServerResponse } from 'node:http';
import Fastify, { LogController, type FastifyInstance, type FastifyReply, type FastifyRequest } from 'fastify';
import { answerOnSocket, clientErrorAnswer, lacksHost, newRequestId, requestStallOptions, watchBodyStalls } from '@kbchat/shared';
import { answerBadPageAddress } from '@kbchat/shared/web-app';
import { errors, PlatformError } from './errors.js';

const DEFAULT_BODY_LIMIT = 32 * 1024 * 1024;

export function toPlatformError(err: unknown, req: FastifyRequest): PlatformError {
  if (err instanceof PlatformError) return err;
  const e = err as { statusCode?: number; code?: string; message?: string; status?: number };
  // Typed errors of the ingest readers and link fetcher carry their own status.
  if (typeof e.status === 'number' && typeof e.code === 'string' && e.status >= 400 && e.status < 600) return new PlatformError(e.status, e.code, e.message ?? 'Bad request');
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

/** What node would refuse with an empty 400 or 417 (no Host, an unknown Expect), in the envelope; the connection closes after it. */
function refuse(res: ServerResponse, e: PlatformError): void {
  res.writeHead(e.status, { 'content-type': 'application/json; charset=utf-8', 'x-request-id': newRequestId(), connection: 'close' });
  res.end(JSON.stringify(e.toBody()));
}

/** `requestStallTimeoutMs`: how long a head may take, and a body may pause, before a 408 (default 60 s). */
export function buildHttpApp(opts: { logLevel: string; bodyLimit?: number; requestStallTimeoutMs?: number }): FastifyInstance {
  const stallMs = opts.requestStallTimeoutMs ?? 60_000;
  const app = Fastify({
    // node's Host check answers with an empty 400: the onRequest hook checks instead.
    http: { ...requestStallOptions(stallMs), requireHostHeader: false },
    clientErrorHandler: (err, socket) => {
      const { status, code, message } = clientErrorAnswer(err, stallMs);
      answerOnSocket(socket, status, { 'x-request-id': newRequestId() }, JSON.stringify(new PlatformError(status, code, message).toBody()));
    },
    logger: { level: opts.logLevel, redact: ['req.headers.authorization'] },
    logController: new LogController({ disableRequestLogging: true }),
    genReqId: () => newRequestId(),
    requestIdHeader: false,
    bodyLimit: opts.bodyLimit ?? DEFAULT_BODY_LIMIT,
    // Shutdown closes every client connection instead of waiting up to the keep-alive timeout on one that is mid-request.
    forceCloseConnections: true,
    // A page address with a broken %-escape gets a page that says so, not JSON; the API's the envelope.
    frameworkErrors: (err, req, reply) => void (answerBadPageAddress(err, req, reply, { title: 'kbchat', apiPrefixes: ['/api/'] }) || sendError(err, req, reply)),
  });
  watchBodyStalls(app.server);
  app.server.on('checkExpectation', (req: IncomingMessage, res: ServerResponse) => {
    refuse(res, lacksHost(req) ? errors.missingHost() : errors.expectationFailed());
  });
  app.addHook('onRequest', (req, reply, done) => {
    reply.header('x-request-id', req.id);
    if (lacksHost(req.raw)) {
      reply.header('connection', 'close');
      return done(errors.missingHost());
    }
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
