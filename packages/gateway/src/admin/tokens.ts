// /api/tokens: API tokens of users. The key is returned once, by the create
// call; afterwards only its hint (`sk-...abcd`, `***` for short keys) is shown.
// Every route, the list included, covers only tokens whose owner the caller
// may manage (assertCanManage: root everyone, an admin itself and plain users).
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { unitsToMicros } from '../accounts/pricing.js';
import type { TokenInput } from '../accounts/service.js';
import { errors } from '../errors.js';
import type { GatewayServices } from '../gateway.js';
import type { TokenRow, UserRow } from '../store/schema.js';
import { actorOf, assertCanManage, canManage } from './auth.js';
import { MAX_INT32, MAX_UNITS, paging, parseBody, pathId, queryInt, queryOf } from './input.js';

const fields = {
  name: z.string().trim().min(1, 'must not be empty').max(100, 'at most 100 characters'),
  status: z.enum(['enabled', 'disabled']),
  expires_at: z
    .number()
    .int('must be an integer (epoch milliseconds)')
    .refine((v) => v > Date.now(), 'must be a time in the future, in epoch milliseconds')
    .nullable(),
  quota_limit: z.number().finite().min(0, 'must be >= 0').max(MAX_UNITS, `must be <= ${MAX_UNITS}`).nullable(),
  models: z.array(z.string().trim().min(1, 'must be a non-empty model name').max(200, 'at most 200 characters')).max(1000, 'at most 1000 models'),
  ip_allow: z.string().max(4000, 'at most 4000 characters').nullable(),
};

const createSchema = z.strictObject({
  user_id: z.number().int().positive().max(MAX_INT32).optional(),
  name: fields.name,
  status: fields.status.optional(),
  expires_at: fields.expires_at.optional(),
  quota_limit: fields.quota_limit.optional(),
  models: fields.models.optional(),
  ip_allow: fields.ip_allow.optional(),
});

const patchSchema = z.strictObject({
  name: fields.name.optional(),
  status: fields.status.optional(),
  expires_at: fields.expires_at.optional(),
  quota_limit: fields.quota_limit.optional(),
  models: fields.models.optional(),
  ip_allow: fields.ip_allow.optional(),
});

/** Tokens read per query while filtering a list for a non-root administrator. */
const SCAN_CHUNK = 500;

function tokenInput(input: z.infer<typeof patchSchema>): TokenInput {
  return {
    name: input.name,
    status: input.status,
    expires_at: input.expires_at,
    quota_limit_micros: input.quota_limit === undefined ? undefined : input.quota_limit === null ? null : unitsToMicros(input.quota_limit),
    models: input.models,
    ip_allow: input.ip_allow,
  };
}

export function tokenRoutes(app: FastifyInstance, services: GatewayServices): void {
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

  /**
   * A page of the tokens `actor` may manage: `offset` and `limit` count those
   * tokens only. Root sees every token; anyone else filters while scanning,
   * looking each owner up once.
   */
  const listManaged = async (actor: UserRow, userId: number | undefined, offset: number, limit: number): Promise<TokenRow[]> => {
    if (actor.role === 'root') return accountsStore.listTokens(userId, offset, limit);
    if (userId !== undefined) {
      const owner = await accountsStore.userById(userId);
      if (!owner) return []; // as for root: nobody's tokens
      assertCanManage(actor, owner);
      return accountsStore.listTokens(userId, offset, limit);
    }
    const owners = new Map<number, UserRow | undefined>();
    const mayManage = async (t: TokenRow): Promise<boolean> => {
      if (!owners.has(t.user_id)) owners.set(t.user_id, await accountsStore.userById(t.user_id));
      const owner = owners.get(t.user_id);
      return owner !== undefined && canManage(actor, owner); // as loadManaged: an ownerless token is root's business
    };
    const out: TokenRow[] = [];
    let skip = offset;
    for (let at = 0; ; at += SCAN_CHUNK) {
      const rows = await accountsStore.listTokens(undefined, at, SCAN_CHUNK);
      for (const t of rows) {
        if (!(await mayManage(t))) continue;
        if (skip > 0) {
          skip--;
          continue;
        }
        out.push(t);
        if (out.length === limit) return out;
      }
      if (rows.length < SCAN_CHUNK) return out;
    }
  };

  app.get('/tokens', async (req) => {
    const q = queryOf(req);
    const userId = queryInt(q.user_id, 'user_id', { min: 1, max: MAX_INT32 });
    const { offset, limit } = paging(q);
    const rows = await listManaged(actorOf(req).user, userId, offset, limit);
    return { data: await accounts.publicTokens(rows), offset, limit };
  });

  app.post('/tokens', async (req, reply) => {
    const input = parseBody(createSchema, req.body);
    const actor = actorOf(req).user;
    const owner = input.user_id === undefined ? actor : await loadUser(input.user_id);
    assertCanManage(actor, owner);
    const { token, key } = await accounts.createToken(owner.id, tokenInput(input));
    auth.invalidate();
    reply.code(201);
    return { token: (await accounts.publicTokens([token]))[0], key };
  });

  app.get('/tokens/:id', async (req) => {
    const id = pathId((req.params as { id: string }).id);
    return (await accounts.publicTokens([await loadManaged(actorOf(req).user, id)]))[0];
  });

  app.patch('/tokens/:id', async (req) => {
    const id = pathId((req.params as { id: string }).id);
    const input = parseBody(patchSchema, req.body);
    await loadManaged(actorOf(req).user, id);
    const token = await accounts.updateToken(id, tokenInput(input));
    auth.invalidate();
    return (await accounts.publicTokens([token]))[0];
  });

  app.delete('/tokens/:id', async (req) => {
    const id = pathId((req.params as { id: string }).id);
    await loadManaged(actorOf(req).user, id);
    await accountsStore.deleteToken(id);
    auth.invalidate();
    return { deleted: true, id };
  });
}
