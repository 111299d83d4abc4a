// /api/auth/* (sign in, sign out, who am I) and /api/team/members (root
// manages its team's members).
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { memberQuery, newMemberBody as newMember, signInBody as signIn } from '@kbchat/contracts';
import { ok } from '../datasets/routes.js';
import { parseInput } from '../http/validate.js';
import { SESSION_COOKIE, type RequestAuth } from './request-auth.js';
import type { AccountsService } from './service.js';

const BODY_LIMIT = 16 * 1024;
/** Routes that take the web app's session only (no API key). */
const sessionOnly = [{ session: [] }];

export function accountRoutes(app: FastifyInstance, accounts: AccountsService, auth: RequestAuth): void {
  const cookieOptions = (req: FastifyRequest) => ({ path: '/', httpOnly: true, sameSite: 'lax' as const, secure: req.protocol === 'https' });

  app.post('/api/auth/login', { bodyLimit: BODY_LIMIT, schema: { body: signIn, security: [] } }, async (req, reply: FastifyReply) => {
    const b = parseInput(signIn, req.body);
    const s = await accounts.signIn(b.username, b.password);
    reply.setCookie(SESSION_COOKIE, s.token, { ...cookieOptions(req), expires: new Date(s.expiresAt) });
    return ok({ user: s.user, csrfToken: s.csrfToken, expiresAt: s.expiresAt });
  });

  app.post('/api/auth/logout', { bodyLimit: BODY_LIMIT, schema: { security: sessionOnly } }, async (req, reply: FastifyReply) => {
    await auth.session(req);
    await accounts.signOut(req.cookies[SESSION_COOKIE]!);
    reply.clearCookie(SESSION_COOKIE, cookieOptions(req));
    return ok(null);
  });

  app.get('/api/auth/me', { schema: { security: sessionOnly } }, async (req) => {
    const s = await auth.session(req);
    return ok({ user: s.user, csrfToken: s.csrfToken });
  });

  app.get('/api/team/members', async (req) => ok(await accounts.members(await auth.general(req))));

  app.post('/api/team/members', { bodyLimit: BODY_LIMIT, schema: { body: newMember, security: sessionOnly } }, async (req) => {
    const caller = await auth.session(req);
    const b = parseInput(newMember, req.body);
    return ok(await accounts.addMember(caller, b.username, b.password));
  });

  app.delete('/api/team/members', { schema: { querystring: memberQuery, security: sessionOnly } }, async (req) => {
    const caller = await auth.session(req);
    const { id } = parseInput(memberQuery, req.query);
    await accounts.removeMember(caller, id);
    return ok(null);
  });
}
