// Anthropic errors ({"type":"error","error":{"type","message"},"request_id"})
// -> what an OpenAI client sees and what the relay does next. The upstream's
// message is kept; its request id is appended, for the provider's support.
import { GatewayError } from '../../errors.js';
import { parseJson, ProviderFailure, unmappedError } from '../wire.js';

/** Anthropic error type -> [status the client sees, OpenAI error type, code]. */
const TYPES: Record<string, [number, string, string]> = {
  invalid_request_error: [400, 'invalid_request_error', 'invalid_request'],
  authentication_error: [401, 'invalid_request_error', 'invalid_api_key'],
  permission_error: [403, 'invalid_request_error', 'permission_denied'],
  not_found_error: [404, 'invalid_request_error', 'model_not_found'],
  request_too_large: [413, 'invalid_request_error', 'request_too_large'],
  rate_limit_error: [429, 'rate_limit_exceeded', 'rate_limit_exceeded'],
  api_error: [500, 'upstream_error', 'upstream_server_error'],
  // 529 is Anthropic's own status; clients know 503 as "overloaded, retry later".
  overloaded_error: [503, 'upstream_error', 'upstream_overloaded'],
  timeout_error: [504, 'upstream_error', 'upstream_timeout'],
};

/** `body` is the upstream's error text (or an error event's data); `error` overrides the translation. */
export function anthropicFailure(status: number, body: string, headers?: Record<string, string | undefined>, error?: GatewayError): ProviderFailure {
  if (error) return ProviderFailure.of(error, status);
  const parsed = parseJson(body);
  const type: string = parsed?.error?.type ?? (status === 529 ? 'overloaded_error' : status >= 500 ? 'api_error' : 'invalid_request_error');
  const upstream: string = typeof parsed?.error?.message === 'string' ? parsed.error.message : `Anthropic returned status ${status}`;
  const requestId = parsed?.request_id ?? headers?.['request-id'];
  const [clientStatus, openaiType, code] = TYPES[type] ?? unmappedError(status);
  // The OpenAI wording clients and operators search for, with Anthropic's own text kept.
  const message = type === 'authentication_error' ? `Incorrect API key provided: ${upstream}` : upstream;
  const withId = requestId ? `${message} (Anthropic request id: ${requestId})` : message;
  const gatewayError = new GatewayError(clientStatus, withId, openaiType, code);
  const retryAfter = headers?.['retry-after'];
  if (retryAfter) gatewayError.retryAfter = retryAfter;
  return ProviderFailure.of(gatewayError, status);
}
