// Every error a platform client sees: the FastGPT envelope
// {code, statusText, message, data} with the real HTTP status (FastGPT answers
// 500 for everything; clients here can rely on 400/401/403/404/408/409/413/429).
import { byteSize } from '@kbchat/server-kit';

export class PlatformError extends Error {
  constructor(
    readonly status: number,
    /** Stable machine code, sent as statusText. */
    readonly statusText: string,
    message: string,
    /** Headers the answer carries (Retry-After of a 429). */
    readonly headers?: Record<string, string>,
  ) {
    super(message);
  }

  toBody(): { code: number; statusText: string; message: string; data: null } {
    return { code: this.status, statusText: this.statusText, message: this.message, data: null };
  }
}

export const errors = {
  badField: (field: string, message: string) => new PlatformError(400, 'invalid_field', `Invalid '${field}': ${message}`),
  invalidJson: (detail: string) => new PlatformError(400, 'invalid_json', `The request body is not valid JSON: ${detail}`),
  missingKey: () => new PlatformError(401, 'unauthorized', 'No API key: send "Authorization: Bearer <key>"'),
  invalidKey: () => new PlatformError(401, 'unauthorized', 'Invalid API key: it does not exist, was deleted or has expired'),
  appKeyNotAllowed: () =>
    new PlatformError(403, 'app_key_not_allowed', "This is an application key: it opens only its application's chat. Use a general key here."),
  notFound: (what: string) => new PlatformError(404, 'not_found', `${what} not found`),
  conflict: (message: string) => new PlatformError(409, 'conflict', message),
  tooLarge: (message: string) => new PlatformError(413, 'too_large', message),
  bodyTooLarge: (limit: number) => new PlatformError(413, 'too_large', `The request body is larger than the ${byteSize(limit)} this endpoint accepts`),
  missingHost: () => new PlatformError(400, 'missing_host', 'An HTTP/1.1 request must have a Host header'),
  expectationFailed: () => new PlatformError(417, 'expectation_failed', 'Only "Expect: 100-continue" is supported'),
  internal: (message: string) => new PlatformError(500, 'internal_error', message),
};
