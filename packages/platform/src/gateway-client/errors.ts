// The one error type for everything that goes wrong between the platform and
// the gateway. It keeps the gateway's own message (which ends with
// "(request id: …)") so a user's bug report carries the id an operator needs,
// and the exact JSON that was sent, so an operator can replay it.

export class GatewayError extends Error {
  override readonly name = 'GatewayError';
  constructor(
    /** HTTP status from the gateway; 502 when it could not be reached, 504 when it did not answer in time. */
    readonly status: number,
    /** The gateway's machine code (`error.code`, else `error.type`), or connection_error / timeout / bad_response. */
    readonly code: string,
    message: string,
    readonly requestId: string | undefined,
    /** The exact request body sent, for replaying the call. */
    readonly requestBody: string | undefined,
    /** From Retry-After / Retry-After-Ms, when the gateway or upstream said when to come back. */
    readonly retryAfterMs?: number,
    /** The gateway's `error.type` (insufficient_quota, upstream_error, …). */
    readonly type?: string,
  ) {
    super(message);
  }

  /**
   * What a log line keeps of the failed call: the status, the gateway's
   * request id, and the body sent (its start only when it is long; the
   * gateway's request log under that id has the rest, for a replay).
   */
  forLog(): { status: number; gatewayRequestId: string | undefined; requestBody: string | undefined; requestBodyChars?: number } {
    return { status: this.status, gatewayRequestId: this.requestId, ...bodyForLog(this.requestBody, this.requestId) };
  }

  /** A 429, or a quota that ran out: waiting helps, retrying now does not. */
  get isRateLimit(): boolean {
    return this.status === 429 || this.type === 'insufficient_quota' || this.code === 'insufficient_quota' || this.retryAfterMs !== undefined;
  }
}

/** The most of a request body one log line keeps: a chat call's whole body in all but oversized cases. */
export const LOGGED_BODY_CHARS = 16 * 1024;

/** A request body as a log line keeps it: whole up to LOGGED_BODY_CHARS, else its start, its size and where the rest is. */
export function bodyForLog(body: string | undefined, gatewayRequestId?: string): { requestBody: string | undefined; requestBodyChars?: number } {
  if (body === undefined || body.length <= LOGGED_BODY_CHARS) return { requestBody: body };
  const rest = gatewayRequestId ? `the gateway's request log keeps it under ${gatewayRequestId}` : 'the gateway was not reached';
  return {
    requestBody: `${body.slice(0, LOGGED_BODY_CHARS)}… [${body.length - LOGGED_BODY_CHARS} more characters not logged; ${rest}]`,
    requestBodyChars: body.length,
  };
}

export function isGatewayError(err: unknown): err is GatewayError {
  return err instanceof GatewayError;
}

/** Retry-After (seconds or an HTTP date) or Retry-After-Ms, in milliseconds. */
export function parseRetryAfter(headers: Record<string, string | string[] | undefined>, now = Date.now()): number | undefined {
  const first = (v: string | string[] | undefined) => (Array.isArray(v) ? v[0] : v);
  const ms = first(headers['retry-after-ms']);
  if (ms !== undefined && ms.trim() !== '' && Number.isFinite(Number(ms))) return Math.max(0, Number(ms));
  const raw = first(headers['retry-after'])?.trim();
  if (!raw) return undefined;
  if (/^\d+(\.\d+)?$/.test(raw)) return Math.round(Number(raw) * 1000);
  const at = Date.parse(raw);
  return Number.isNaN(at) ? undefined : Math.max(0, at - now);
}

const REQUEST_ID_IN_MESSAGE = /\(request id: ([^)\s]+)\)\s*$/;

/** Builds the error for a non-2xx answer from the gateway's body (OpenAI envelope, or anything else). */
export function errorFromResponse(
  status: number,
  headers: Record<string, string | string[] | undefined>,
  text: string,
  requestBody: string | undefined,
): GatewayError {
  const header = headers['x-request-id'];
  let requestId = (Array.isArray(header) ? header[0] : header) || undefined;
  let message: string | undefined;
  let code: string | undefined;
  let type: string | undefined;
  try {
    const body = JSON.parse(text) as { error?: unknown; message?: unknown; code?: unknown };
    const err = body.error;
    if (err && typeof err === 'object') {
      const e = err as { message?: unknown; code?: unknown; type?: unknown };
      if (typeof e.message === 'string') message = e.message;
      if (typeof e.code === 'string') code = e.code;
      if (typeof e.type === 'string') type = e.type;
    } else if (typeof err === 'string') message = err;
    else if (typeof body.message === 'string') message = body.message;
  } catch {
    /* not JSON: the raw text below */
  }
  message ??= text.trim() ? text.trim().slice(0, 2000) : `the gateway answered HTTP ${status} with no message`;
  const inMessage = REQUEST_ID_IN_MESSAGE.exec(message)?.[1];
  if (inMessage) requestId ??= inMessage;
  else if (requestId) message = `${message} (request id: ${requestId})`;
  return new GatewayError(status, code ?? type ?? `http_${status}`, message, requestId, requestBody, parseRetryAfter(headers), type);
}
