// Google errors ({"error":{"code","message","status","details"}}) -> what an
// OpenAI client sees and what the relay does next. Gemini answers a wrong key
// with 400 INVALID_ARGUMENT (reason API_KEY_INVALID): that is the channel's
// key, so it is a 401 here, retried elsewhere and counted against the channel.
import { GatewayError } from '../../errors.js';
import { parseJson, ProviderFailure, unmappedError } from '../wire.js';

/** Google status -> [status the client sees, OpenAI error type, code]. */
const STATUSES: Record<string, [number, string, string]> = {
  INVALID_ARGUMENT: [400, 'invalid_request_error', 'invalid_request'],
  FAILED_PRECONDITION: [400, 'invalid_request_error', 'failed_precondition'],
  UNAUTHENTICATED: [401, 'invalid_request_error', 'invalid_api_key'],
  PERMISSION_DENIED: [403, 'invalid_request_error', 'permission_denied'],
  NOT_FOUND: [404, 'invalid_request_error', 'model_not_found'],
  RESOURCE_EXHAUSTED: [429, 'rate_limit_exceeded', 'rate_limit_exceeded'],
  INTERNAL: [500, 'upstream_error', 'upstream_server_error'],
  UNAVAILABLE: [503, 'upstream_error', 'upstream_overloaded'],
  DEADLINE_EXCEEDED: [504, 'upstream_error', 'upstream_timeout'],
};

export function geminiFailure(status: number, body: string, error?: GatewayError): ProviderFailure {
  if (error) return ProviderFailure.of(error, status);
  const e = parseJson(body)?.error;
  const upstream: string = typeof e?.message === 'string' ? e.message.trim() : `Gemini returned status ${status}`;
  const keyRefused = Array.isArray(e?.details) && e.details.some((d: any) => d?.reason === 'API_KEY_INVALID');
  if (keyRefused)
    return ProviderFailure.of(new GatewayError(401, `Incorrect API key provided: ${upstream}`, 'invalid_request_error', 'invalid_api_key'), status, 401);
  const [clientStatus, type, code] = STATUSES[String(e?.status)] ?? unmappedError(status);
  return ProviderFailure.of(new GatewayError(clientStatus, upstream, type, code), status);
}

/**
 * A prompt Gemini refused to answer (promptFeedback.blockReason, inside a
 * 200): a 400 with code content_filter, as OpenAI-compatible APIs report a
 * filtered prompt. Another channel would refuse it too, so it is not retried.
 */
export function blockedPrompt(reason: unknown): ProviderFailure {
  const error = new GatewayError(400, `Gemini blocked the prompt (blockReason ${String(reason)})`, 'invalid_request_error', 'content_filter');
  return new ProviderFailure(error, 200, false, false);
}
