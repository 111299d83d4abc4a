// /api/auth/* (sign in, sign out, who am I) and /api/team/members (root
// manages its team's members).
import type { FastifyPluginAsync, FastifyRequest } from 'fastify';
import {
  envelopeOf,
  memberQuery,
  newMemberBody as newMember,
  publicUserSchema,
  sessionInfoSchema,
  signInAnswerSchema,
  signInBody as signIn,
} from '@kbchat/contracts';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { done, ok } from '../datasets/routes.js';
import { authenticated, sessionOf } from '../http/caller.js';
import { SESSION_COOKIE, type RequestAuth } from './request-auth.js';
import type { AccountsService } from './service.js';

const BODY_LIMIT = 16 * 1024;
/** Routes that take the web app's session only (no API key). */
const sessionOnly = [{ session: [] }];

/** Sign-in is open; the rest authenticate per route (a session, or a general key for the member list), before the body is read. */
export const accountsPlugin: FastifyPluginAsync<{ accounts: AccountsService; auth: RequestAuth }> = async (scope, { accounts, auth }) => {
  const app = scope.withTypeProvider<ZodTypeProvider>();
  const session = authenticated((req) => auth.session(req));
  const general = authenticated((req) => auth.general(req));
  const cookieOptions = (req: FastifyRequest) => ({ path: '/', httpOnly: true, sameSite: 'lax' as const, secure: req.protocol === 'https' });

  app.post(
    '/api/auth/login',
    { bodyLimit: BODY_LIMIT, schema: { body: signIn, security: [], response: { 200: envelopeOf(signInAnswerSchema) } } },
    async (req, reply) => {
      const s = await accounts.signIn(req.body.username, req.body.password);
      reply.setCookie(SESSION_COOKIE, s.token, { ...cookieOptions(req), expires: new Date(s.expiresAt) });
      return ok({ user: s.user, csrfToken: s.csrfToken, expiresAt: s.expiresAt });
    },
  );

  app.post('/api/auth/logout', { bodyLimit: BODY_LIMIT, onRequest: session, schema: { security: sessionOnly, response: done } }, async (req, reply) => {
    await accounts.signOut(req.cookies[SESSION_COOKIE]!);
    reply.clearCookie(SESSION_COOKIE, cookieOptions(req));
    return ok(null);
  });

  app.get('/api/auth/me', { onRequest: session, schema: { security: sessionOnly, response: { 200: envelopeOf(sessionInfoSchema) } } }, async (req) => {
    const s = sessionOf(req);
    return ok({ user: s.user, csrfToken: s.csrfToken });
  });

  app.get('/api/team/members', { onRequest: general, schema: { response: { 200: envelopeOf(z.array(publicUserSchema)) } } }, async (req) =>
    ok(await accounts.members(req.caller)),
  );

  app.post(
    '/api/team/members',
    { bodyLimit: BODY_LIMIT, onRequest: session, schema: { body: newMember, security: sessionOnly, response: { 200: envelopeOf(publicUserSchema) } } },
    async (req) => ok(await accounts.addMember(sessionOf(req), req.body.username, req.body.password)),
  );

  app.delete('/api/team/members', { onRequest: session, schema: { querystring: memberQuery, security: sessionOnly, response: done } }, async (req) => {
    await accounts.removeMember(sessionOf(req), req.query.id);
    return ok(null);
  });
};
