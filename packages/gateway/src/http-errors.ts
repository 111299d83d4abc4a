// How an error becomes what the client gets, for both of the gateway's HTTP
// layers: Fastify (server.ts) and the relay's fronts (relay/front-serve.ts):
// always the OpenAI envelope with a request id. What node:http refuses before
// either sees a request (clientError, a missing Host, an unknown Expect) is
// answered by @kbchat/server-kit, in the envelope server.ts gives it.
import { errors, GatewayError } from './errors.js';

export interface ErrorLog {
  error(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
}

/** Any error as the GatewayError the client gets; Fastify's own errors keep their 4xx meaning. `bodyLimit`: the route's. */
export function asGatewayError(err: unknown, requestId: string, log: ErrorLog, bodyLimit: number): GatewayError {
  if (err instanceof GatewayError) return err;
  const fe = err as { statusCode?: number; code?: string; message?: string };
  if (fe.code === 'FST_ERR_CTP_BODY_TOO_LARGE') return errors.bodyTooLarge(bodyLimit);
  if (fe.code === 'FST_ERR_CTP_INVALID_MEDIA_TYPE') return errors.notJson();
  if (fe.code === 'FST_ERR_BAD_URL') {
    return new GatewayError(400, `Invalid URL: ${fe.message ?? 'the path is not valid percent-encoding'}`, 'invalid_request_error', 'invalid_url');
  }
  if (fe.code === 'FST_ERR_MAX_PARAM_LENGTH')
    return new GatewayError(414, `Invalid URL: ${fe.message ?? 'a path parameter is too long'}`, 'invalid_request_error', 'uri_too_long');
  if (fe.statusCode && fe.statusCode < 500) return new GatewayError(fe.statusCode, fe.message ?? 'Bad request', 'invalid_request_error', fe.code ?? null);
  log.error({ err, requestId }, 'unexpected error');
  return errors.internal('The gateway hit an unexpected error; the request id identifies it in the gateway log');
}

/** The headers of an error answer: the request id, and an upstream's Retry-After when it is safe to pass on. */
export function errorHeaders(e: GatewayError, requestId: string, log: ErrorLog): Record<string, string> {
  if (e.status >= 500) log.warn({ requestId, code: e.code }, e.message);
  const headers: Record<string, string> = { 'x-request-id': requestId };
  if (e.retryAfter && /^[\w ,:+-]{1,64}$/.test(e.retryAfter)) headers['retry-after'] = e.retryAfter;
  return headers;
}
