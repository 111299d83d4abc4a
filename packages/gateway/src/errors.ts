// Every error a gateway client sees, in one place: the OpenAI envelope's type
// and code, the HTTP status, and the message. Messages follow one-api's texts
// where clients already look for them.
import { byteSize } from '@kbchat/server-kit';
import { openAIError, type OpenAIErrorBody } from '@kbchat/shared';

export class GatewayError extends Error {
  /** An upstream's Retry-After (seconds or an HTTP date), passed on to the client. */
  retryAfter?: string;

  constructor(
    readonly status: number,
    message: string,
    readonly type: string,
    readonly code: string | null = null,
    readonly param: string | null = null,
  ) {
    super(message);
  }

  /** The OpenAI envelope a client gets, the request id at the end of the message. */
  toBody(requestId: string): OpenAIErrorBody {
    return openAIError(this.message, this.type, this.code, this.param, requestId);
  }
}

export const errors = {
  invalidJson: (detail: string) =>
    new GatewayError(400, `We could not parse the JSON body of your request: ${detail}`, 'invalid_request_error', 'invalid_json'),
  badField: (field: string, message: string) => new GatewayError(400, message, 'invalid_request_error', 'invalid_field', field),
  notFound: (what: string) => new GatewayError(404, `${what} not found`, 'invalid_request_error', 'not_found'),
  conflict: (message: string) => new GatewayError(409, message, 'invalid_request_error', 'conflict'),
  missingToken: () =>
    new GatewayError(
      401,
      'No API token provided: send "Authorization: Bearer <token>" (on /v1/messages, "x-api-key: <token>" also works)',
      'invalid_request_error',
      'missing_token',
    ),
  invalidToken: () => new GatewayError(401, 'Invalid token: this key does not exist or was deleted', 'invalid_request_error', 'invalid_api_key'),
  tokenDisabled: () => new GatewayError(401, 'This token is disabled', 'invalid_request_error', 'token_disabled'),
  tokenExpired: () => new GatewayError(401, 'This token has expired', 'invalid_request_error', 'token_expired'),
  tokenExhausted: () =>
    new GatewayError(403, 'This token has used up its own quota (token quota is not enough)', 'insufficient_quota', 'token_quota_exhausted'),
  userDisabled: () => new GatewayError(403, 'The user that owns this token is disabled', 'invalid_request_error', 'user_disabled'),
  insufficientUserQuota: () => new GatewayError(403, 'user quota is not enough', 'insufficient_quota', 'insufficient_user_quota'),
  modelNotAllowed: (model: string) =>
    new GatewayError(403, `This token is not allowed to use model ${model}`, 'invalid_request_error', 'model_not_allowed', 'model'),
  ipNotAllowed: (ip: string) => new GatewayError(403, `This token is not allowed from IP address ${ip}`, 'invalid_request_error', 'ip_not_allowed'),
  noChannel: (model: string, group: string) =>
    new GatewayError(503, `No available channel for model ${model} under group ${group}`, 'new_api_error', 'model_not_found', 'model'),
  badResponseStatus: (status: number, upstreamMessage: string | undefined) =>
    new GatewayError(status, upstreamMessage ?? `upstream returned status code ${status}`, 'upstream_error', 'bad_response_status_code', String(status)),
  unreachable: (dialError: string) => new GatewayError(502, `get request url failed: ${dialError}`, 'upstream_error', 'do_request_failed'),
  upstreamTimeout: (ms: number) => new GatewayError(504, `upstream did not answer within ${ms} ms`, 'upstream_error', 'upstream_timeout'),
  badUpstreamBody: (detail: string) => new GatewayError(502, `upstream sent a body that is not valid JSON: ${detail}`, 'upstream_error', 'bad_response_body'),
  streamDropped: (detail: string) => new GatewayError(502, `upstream stream ended abruptly: ${detail}`, 'upstream_error', 'stream_dropped'),
  clientClosed: () => new GatewayError(499, 'the client closed the request before the answer was complete', 'invalid_request_error', 'client_closed_request'),
  emptyStream: () =>
    new GatewayError(502, 'upstream stream ended with no content, and the non-stream retry gave none either', 'upstream_error', 'empty_response'),
  unauthorized: (message = 'Log in as an administrator (root session or admin token)') =>
    new GatewayError(401, message, 'invalid_request_error', 'unauthorized'),
  forbidden: (message: string) => new GatewayError(403, message, 'invalid_request_error', 'forbidden'),
  csrfFailed: () =>
    new GatewayError(
      403,
      "This change came without the session's CSRF token (X-CSRF-Token): reload the page and try again",
      'invalid_request_error',
      'csrf_failed',
    ),
  internal: (message: string) => new GatewayError(500, message, 'server_error', 'internal_error'),
  bodyTooLarge: (limit: number) =>
    new GatewayError(413, `The request body is larger than the ${byteSize(limit)} this endpoint accepts`, 'invalid_request_error', 'body_too_large'),
  notJson: () => new GatewayError(415, 'Send the body as application/json', 'invalid_request_error', 'unsupported_media_type'),
};
