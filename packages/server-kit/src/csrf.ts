// The CSRF token of a browser session, the same in both services: derived
// from the session's secret, so that only a page that was given it (by log-in
// or /api/auth/me) can send it, and nothing needs storing.
import { createHash, timingSafeEqual } from 'node:crypto';

export function csrfTokenOf(sessionToken: string): string {
  return createHash('sha256').update(`csrf:${sessionToken}`).digest('base64url');
}

/** Whether a request's X-CSRF-Token header is the session's token (compared in constant time). */
export function isCsrfTokenOf(sent: string | string[] | undefined, sessionToken: string): boolean {
  if (typeof sent !== 'string') return false;
  const expected = Buffer.from(csrfTokenOf(sessionToken));
  const given = Buffer.from(sent);
  return given.length === expected.length && timingSafeEqual(given, expected);
}
