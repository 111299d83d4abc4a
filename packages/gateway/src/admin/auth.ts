// Who is calling the admin API. Log-in gives a session (a random secret, kept
// hashed, valid 7 days); every other /api route takes that session or an API
// token whose owner is an administrator (role root or admin).
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { randomSecret } from '@kbchat/shared';
import { z } from 'zod';
import { bearer } from '../accounts/auth.js';
import { hashKey } from '../accounts/secrets.js';
import { errors, GatewayError } from '../errors.js';
import type { GatewayServices } from '../gateway.js';
import type { UserRow } from '../store/schema.js';
import { parseBody } from './input.js';

export const SESSION_TTL_MS = 7 * 86_400_000;

export interface Actor {
  user: UserRow;
  via: 'session' | 'token';
}

const actors = new WeakMap<FastifyRequest, Actor>();

/** The administrator behind a request that passed the guard. */
export function actorOf(req: FastifyRequest): Actor {
  const actor = actors.get(req);
  if (!actor) throw errors.unauthorized();
  return actor;
}

const ROLE_RANK: Record<string, number> = { user: 0, admin: 1, root: 2 };

/** Root manages everyone; an admin manages itself and plain users. */
export function canManage(actor: UserRow, target: UserRow): boolean {
  if (actor.role === 'root' || actor.id === target.id) return true;
  return (ROLE_RANK[target.role] ?? 0) < (ROLE_RANK[actor.role] ?? 0);
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
async function resolveActor(services: GatewayServices, authorization: string | undefined, key: string, ip: string, now: number): Promise<Actor | undefined> {
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

/** onRequest hook for every guarded /api route. */
export function adminGuard(services: GatewayServices) {
  return async (req: FastifyRequest): Promise<void> => {
    const key = bearer(req.headers.authorization);
    if (!key) throw errors.unauthorized('Log in as an administrator: send "Authorization: Bearer <session or admin token>"');
    const actor = await resolveActor(services, req.headers.authorization, key, req.ip, Date.now());
    if (!actor) throw errors.unauthorized('Invalid session or token: log in again, or use an admin token');
    if (actor.user.status !== 'enabled') throw errors.forbidden('This user is disabled');
    if (actor.user.role !== 'root' && actor.user.role !== 'admin') {
      throw errors.forbidden('The admin API needs an administrator (role admin or root)');
    }
    actors.set(req, actor);
  };
}

const loginSchema = z.strictObject({
  username: z.string().min(1, 'required'),
  password: z.string().min(1, 'required'),
});

/** Routes that need no administrator: log-in and log-out. */
export function publicAuthRoutes(app: FastifyInstance, services: GatewayServices): void {
  app.post('/auth/login', async (req) => {
    const input = parseBody(loginSchema, req.body);
    const user = await services.accounts.login(input.username, input.password);
    const session = randomSecret('kbs-');
    const expiresAt = Date.now() + SESSION_TTL_MS;
    await services.accountsStore.insertSession(hashKey(session), user.id, expiresAt);
    return { session, expires_at: expiresAt, user: (await services.accounts.publicUsers([user]))[0] };
  });

  app.post('/auth/logout', async (req) => {
    const key = bearer(req.headers.authorization);
    if (!key) throw errors.unauthorized('Send the session to end: "Authorization: Bearer <session>"');
    await services.accountsStore.deleteSession(hashKey(key));
    return { ok: true };
  });
}

/** Guarded: the administrator the request acts as. */
export function meRoutes(app: FastifyInstance, services: GatewayServices): void {
  app.get('/auth/me', async (req) => {
    const actor = actorOf(req);
    return { user: (await services.accounts.publicUsers([actor.user]))[0], via: actor.via };
  });
}
