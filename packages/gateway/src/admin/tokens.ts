// /api/tokens: API tokens of users. The key is returned once, by the create
// call; afterwards only its hint (`sk-...abcd`, `***` for short keys) is shown.
// Every route, the list included, covers only tokens whose owner the caller
// may manage (assertCanManage: root everyone, an admin itself and plain users,
// a plain user itself). Plain users come in signed in (the console's session):
// an API token cannot mint or widen tokens for its owner.
import type { FastifyPluginAsync } from 'fastify';
import {
  createTokenBody as createSchema,
  gatewayCreatedTokenSchema,
  gatewayDeletedSchema,
  gatewayTokenPageSchema,
  gatewayTokenSchema,
  patchTokenBody as patchSchema,
  type PatchTokenBody,
} from '@kbchat/contracts';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { unitsToMicros } from '../accounts/pricing.js';
import type { TokenInput } from '../accounts/service.js';
import { errors } from '../errors.js';
import type { GatewayServices } from '../gateway.js';
import type { TokenScope } from '../accounts/store.js';
import type { TokenRow, UserRow } from '../store/schema.js';
import { actorOf, assertCanManage, rolesManagedBy } from './auth.js';
import { MAX_INT32, paging, pathId, queryInt, queryOf, searchOf } from './input.js';

function tokenInput(input: PatchTokenBody): TokenInput {
  return {
    name: input.name,
    status: input.status,
    expires_at: input.expires_at,
    quota_limit_micros: input.quota_limit === undefined ? undefined : input.quota_limit === null ? null : unitsToMicros(input.quota_limit),
    models: input.models,
    ip_allow: input.ip_allow,
    group: input.group,
  };
}

/** A token's group decides what it pays: only administrators set it (a user could otherwise pick a cheaper group). */
function assertMaySetGroup(actor: UserRow, input: PatchTokenBody): void {
  if (input.group !== undefined && actor.role === 'user') throw errors.forbidden("Only administrators set a token's group");
}

const oneToken = { 200: gatewayTokenSchema };
/** The path's id is checked before the body (a bad id is named first). */
const idFirst = { preValidation: async (req: { params: unknown }) => void pathId((req.params as { id: string }).id) };

export const tokensPlugin: FastifyPluginAsync<{ services: GatewayServices }> = async (fastify, { services }) => {
  const app = fastify.withTypeProvider<ZodTypeProvider>();
  const { accounts, accountsStore, auth } = services;

  const loadUser = async (id: number): Promise<UserRow> => {
    const user = await accountsStore.userById(id);
    if (!user) throw errors.notFound(`User ${id}`);
    return user;
  };

  /** The token, after checking the caller may manage its owner. */
  const loadManaged = async (actor: UserRow, id: number): Promise<TokenRow> => {
    const token = await accountsStore.tokenById(id);
    if (!token) throw errors.notFound(`Token ${id}`);
    const owner = await accountsStore.userById(token.user_id);
    if (owner) assertCanManage(actor, owner);
    else if (actor.role !== 'root') throw errors.forbidden(`Only root can manage token ${id}: its owner is gone`);
    return token;
  };

  /** The tokens `actor` may manage, optionally of one user only. */
  const scopeOf = async (actor: UserRow, userId: number | undefined): Promise<TokenScope> => {
    if (userId !== undefined) {
      const owner = await accountsStore.userById(userId);
      if (owner) assertCanManage(actor, owner);
      else if (actor.role !== 'root') return { userId: -1 }; // as for root: nobody's tokens
      return { userId };
    }
    return actor.role === 'root' ? {} : { owners: { selfId: actor.id, roles: rolesManagedBy(actor) } };
  };

  app.addHook('onRequest', async (req) => {
    const actor = actorOf(req);
    if (actor.via === 'token' && actor.user.role === 'user')
      throw errors.forbidden('Plain users manage their tokens signed in (a session), not with an API token');
  });

  app.get('/tokens', { schema: { response: { 200: gatewayTokenPageSchema } } }, async (req) => {
    const q = queryOf(req);
    const userId = queryInt(q.user_id, 'user_id', { min: 1, max: MAX_INT32 });
    const { offset, limit } = paging(q);
    const search = searchOf(q.q);
    const scope = await scopeOf(actorOf(req).user, userId);
    const [rows, total] = await Promise.all([accountsStore.listTokens(scope, offset, limit, search), accountsStore.countTokens(scope, search)]);
    return { data: await accounts.publicTokens(rows), total, offset, limit };
  });

  app.post('/tokens', { schema: { body: createSchema, response: { 201: gatewayCreatedTokenSchema } } }, async (req, reply) => {
    const input = req.body;
    const actor = actorOf(req).user;
    const owner = input.user_id === undefined ? actor : await loadUser(input.user_id);
    assertCanManage(actor, owner);
    assertMaySetGroup(actor, input);
    const { token, key } = await accounts.createToken(owner.id, tokenInput(input));
    auth.invalidate();
    reply.code(201);
    return { token: (await accounts.publicTokens([token]))[0], key };
  });

  app.get('/tokens/:id', { schema: { response: oneToken } }, async (req) => {
    const id = pathId((req.params as { id: string }).id);
    return (await accounts.publicTokens([await loadManaged(actorOf(req).user, id)]))[0];
  });

  app.patch('/tokens/:id', { schema: { body: patchSchema, response: oneToken }, ...idFirst }, async (req) => {
    const id = pathId((req.params as { id: string }).id);
    const input = req.body;
    const actor = actorOf(req).user;
    await loadManaged(actor, id);
    assertMaySetGroup(actor, input);
    const token = await accounts.updateToken(id, tokenInput(input));
    auth.invalidate();
    return (await accounts.publicTokens([token]))[0];
  });

  app.delete('/tokens/:id', { schema: { response: { 200: gatewayDeletedSchema } } }, async (req) => {
    const id = pathId((req.params as { id: string }).id);
    await loadManaged(actorOf(req).user, id);
    await accountsStore.deleteToken(id);
    // Its rate limits and budget go with it (ids are never reused, but the list should not keep them).
    await services.limits.book.remove('token', String(id));
    auth.invalidate();
    return { deleted: true as const, id };
  });
};
