// Who is calling the admin API. Log-in gives a session (a random secret, kept
// hashed, valid 7 days), in the answer for API clients or, for the console in
// a browser, in an httpOnly cookie the page's scripts never see. Every other
// /api route takes a bearer (that session or an API token whose owner is an
// administrator, role root or admin) or, with no Authorization header, the
// session cookie; a cookie's changes must carry its CSRF token in
// X-CSRF-Token, since a browser sends the cookie for any site's form too.
import type { FastifyPluginAsync, FastifyRequest } from 'fastify';
import { gatewayLoginAnswerSchema, gatewayLogoutAnswerSchema, gatewayMeSchema, loginBody as loginSchema } from '@kbchat/contracts';
import { csrfTokenOf, isCsrfTokenOf } from '@kbchat/server-kit';
import { randomSecret } from '@kbchat/shared';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { bearer } from '../accounts/auth.js';
import { hashKey } from '../accounts/secrets.js';
import { errors, GatewayError } from '../errors.js';
import type { GatewayServices } from '../gateway.js';
import type { UserRow } from '../store/schema.js';

export const SESSION_TTL_MS = 7 * 86_400_000;
/** Not the platform's kbchat_session: cookies are per host, not per port, and both services run on one host. */
export const SESSION_COOKIE = 'kbchat_gateway_session';
const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

export interface Actor {
  user: UserRow;
  via: 'session' | 'token';
  /** The session's CSRF token, when it came in the cookie (a browser). */
  csrfToken?: string;
}

const actors = new WeakMap<FastifyRequest, Actor>();

/** The user behind a request that passed the guard. */
export function actorOf(req: FastifyRequest): Actor {
  const actor = actors.get(req);
  if (!actor) throw errors.unauthorized();
  return actor;
}

const ROLE_RANK: Record<UserRow['role'], number> = { user: 0, admin: 1, root: 2 };

/** Root manages everyone; an admin manages itself and plain users. */
export function canManage(actor: UserRow, target: UserRow): boolean {
  if (actor.role === 'root' || actor.id === target.id) return true;
  return (ROLE_RANK[target.role] ?? 0) < (ROLE_RANK[actor.role] ?? 0);
}

/** The roles whose users `actor` manages besides itself (root: all of them). */
export function rolesManagedBy(actor: UserRow): UserRow['role'][] {
  return (Object.keys(ROLE_RANK) as UserRow['role'][]).filter((role) => actor.role === 'root' || ROLE_RANK[role]! < (ROLE_RANK[actor.role] ?? 0));
}

/** canManage, as a 403 that names the target. */
export function assertCanManage(actor: UserRow, target: UserRow): void {
  if (!canManage(actor, target)) throw errors.forbidden(`Only root can manage ${target.role} users (user ${target.id})`);
}

/**
 * Finds the user behind a bearer secret: a session first, then an API token,
 * checked by the relay's own authenticator (status, expiry, IP allow-list,
 * owner) so that admin tokens obey exactly the same rules.
 */
async function bearerActor(services: GatewayServices, authorization: string | undefined, key: string, ip: string, now: number): Promise<Actor | undefined> {
  const sessionUser = await services.accountsStore.sessionUser(hashKey(key), now);
  if (sessionUser) return { user: sessionUser, via: 'session' };
  try {
    const caller = await services.auth.authenticate(authorization, ip, now);
    return { user: caller.user, via: 'token' };
  } catch (err) {
    if (err instanceof GatewayError && err.code === 'invalid_api_key') return undefined;
    throw err;
  }
}

/** The session in the cookie (sessions only: a cookie never holds an API token), CSRF-checked when it changes something. */
async function cookieActor(services: GatewayServices, req: FastifyRequest, session: string, now: number): Promise<Actor> {
  const user = await services.accountsStore.sessionUser(hashKey(session), now);
  if (!user) throw errors.unauthorized('Your session has expired or was ended: sign in again');
  if (!SAFE_METHODS.has(req.method) && !isCsrfTokenOf(req.headers['x-csrf-token'], session)) throw errors.csrfFailed();
  return { user, via: 'session', csrfToken: csrfTokenOf(session) };
}

/**
 * onRequest hook for the guarded /api routes. `admins` lets only root and
 * admin through (every route but /api/auth/me); otherwise any enabled user.
 */
export function apiGuard(services: GatewayServices, who: 'admins' | 'signed-in') {
  return async (req: FastifyRequest): Promise<void> => {
    const now = Date.now();
    let actor: Actor | undefined;
    const session = req.cookies?.[SESSION_COOKIE];
    if (req.headers.authorization === undefined && session) {
      actor = await cookieActor(services, req, session, now);
    } else {
      const key = bearer(req.headers.authorization);
      if (!key) throw errors.unauthorized('Log in as an administrator: send "Authorization: Bearer <session or admin token>", or sign in to the console');
      actor = await bearerActor(services, req.headers.authorization, key, req.ip, now);
      if (!actor) throw errors.unauthorized('Invalid session or token: log in again, or use an admin token');
    }
    if (actor.user.status !== 'enabled') throw errors.forbidden('This user is disabled');
    if (who === 'admins' && actor.user.role !== 'root' && actor.user.role !== 'admin') {
      throw errors.forbidden('The admin API needs an administrator (role admin or root)');
    }
    actors.set(req, actor);
  };
}

const cookieOptions = (req: FastifyRequest) => ({ path: '/', httpOnly: true, sameSite: 'lax' as const, secure: req.protocol === 'https' });

/** Routes that need no signed-in user: log-in, and log-out (which ends the session it is given). */
export const publicAuthPlugin: FastifyPluginAsync<{ services: GatewayServices }> = async (fastify, { services }) => {
  const app = fastify.withTypeProvider<ZodTypeProvider>();
  app.post('/auth/login', { schema: { body: loginSchema, security: [], response: { 200: gatewayLoginAnswerSchema } } }, async (req, reply) => {
    const input = req.body;
    const user = await services.accounts.login(input.username, input.password);
    const session = randomSecret('kbs-');
    const expiresAt = Date.now() + SESSION_TTL_MS;
    await services.accountsStore.insertSession(hashKey(session), user.id, expiresAt);
    const publicUser = (await services.accounts.publicUsers([user]))[0];
    if (!input.cookie) return { session, expires_at: expiresAt, user: publicUser };
    reply.setCookie(SESSION_COOKIE, session, { ...cookieOptions(req), expires: new Date(expiresAt) });
    return { user: publicUser, csrf_token: csrfTokenOf(session), expires_at: expiresAt };
  });

  app.post(
    '/auth/logout',
    { schema: { description: "Ends the session given as the bearer, or the cookie's (with its X-CSRF-Token)", response: { 200: gatewayLogoutAnswerSchema } } },
    async (req, reply) => {
      const cookieSession = req.cookies?.[SESSION_COOKIE];
      if (req.headers.authorization === undefined && cookieSession) {
        if (!isCsrfTokenOf(req.headers['x-csrf-token'], cookieSession)) throw errors.csrfFailed();
        await services.accountsStore.deleteSession(hashKey(cookieSession));
        reply.clearCookie(SESSION_COOKIE, cookieOptions(req));
        return { ok: true as const };
      }
      const key = bearer(req.headers.authorization);
      if (!key) throw errors.unauthorized('Send the session to end: "Authorization: Bearer <session>", or its cookie');
      await services.accountsStore.deleteSession(hashKey(key));
      return { ok: true as const };
    },
  );
};

/** Any signed-in user (plain users too, so the console can say what they may do): who the request acts as. */
export const mePlugin: FastifyPluginAsync<{ services: GatewayServices }> = async (fastify, { services }) => {
  const app = fastify.withTypeProvider<ZodTypeProvider>();
  app.get('/auth/me', { schema: { response: { 200: gatewayMeSchema } } }, async (req) => {
    const actor = actorOf(req);
    // Read afresh: a token's actor is the relay's cached user, whose balance predates the leases publicUsers adds back.
    const row = (await services.accountsStore.userById(actor.user.id)) ?? actor.user;
    const user = (await services.accounts.publicUsers([row]))[0];
    return actor.csrfToken ? { user, via: actor.via, csrf_token: actor.csrfToken } : { user, via: actor.via };
  });
};
