// Who a request acts for: an API key in Authorization (as before), or else a
// signed-in session from its cookie. A session's state-changing requests must
// carry its CSRF token in X-CSRF-Token: the cookie alone (which a browser
// sends for any site's form) changes nothing.
import { timingSafeEqual } from 'node:crypto';
import type { FastifyRequest } from 'fastify';
import { PlatformError } from '../http/errors.js';
import type { KeyAuthenticator, KeyCaller } from '../keys/auth.js';
import type { AccountsService, SessionCaller } from './service.js';

export const SESSION_COOKIE = 'kbchat_session';
const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

const notSignedIn = () => new PlatformError(401, 'unauthorized', 'Not signed in: sign in, or send an API key as "Authorization: Bearer <key>"');

export class RequestAuth {
  constructor(
    readonly keys: KeyAuthenticator,
    private readonly accounts: AccountsService,
  ) {}

  /** A general key, or a session: dataset, application and key management. */
  async general(req: FastifyRequest): Promise<KeyCaller> {
    if (req.headers.authorization !== undefined) return this.keys.general(req.headers.authorization);
    return this.session(req);
  }

  /** Any key (general or application) in Authorization, or else a session: chat and its history. */
  async any(req: FastifyRequest): Promise<KeyCaller> {
    if (req.headers.authorization !== undefined || !req.cookies?.[SESSION_COOKIE]) return this.keys.authenticate(req.headers.authorization);
    return this.session(req);
  }

  /** A signed-in session (CSRF-checked when it changes something). */
  async session(req: FastifyRequest): Promise<SessionCaller> {
    const token = req.cookies?.[SESSION_COOKIE];
    const caller = token ? await this.accounts.sessionCaller(token) : undefined;
    if (!caller) throw notSignedIn();
    if (!SAFE_METHODS.has(req.method)) {
      const sent = req.headers['x-csrf-token'];
      const ok = typeof sent === 'string' && sent.length === caller.csrfToken.length && timingSafeEqual(Buffer.from(sent), Buffer.from(caller.csrfToken));
      if (!ok) throw new PlatformError(403, 'csrf_failed', "This change came without the session's CSRF token (X-CSRF-Token): reload the page and try again");
    }
    return caller;
  }
}
