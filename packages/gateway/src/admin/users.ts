// /api/users: list, create, read, edit (balance included), delete.
// Balances are given in currency units (fractions allowed) and kept as micros.
import type { FastifyPluginAsync } from 'fastify';
import {
  createUserBody as createSchema,
  gatewayDeletedSchema,
  gatewayUserPageSchema,
  gatewayUserSchema,
  patchUserBody as patchSchema,
} from '@kbchat/contracts';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { unitsToMicros } from '../accounts/pricing.js';
import { errors } from '../errors.js';
import type { GatewayServices } from '../gateway.js';
import type { UserRow } from '../store/schema.js';
import { actorOf, assertCanManage } from './auth.js';
import { paging, pathId, queryOf, searchOf } from './input.js';

const oneUser = { 200: gatewayUserSchema };
/** The path's id is checked before the body (a bad id is named first). */
const idFirst = { preValidation: async (req: { params: unknown }) => void pathId((req.params as { id: string }).id) };

export const usersPlugin: FastifyPluginAsync<{ services: GatewayServices }> = async (fastify, { services }) => {
  const app = fastify.withTypeProvider<ZodTypeProvider>();
  const { accounts, accountsStore, auth } = services;

  // Read after this process writes its pending charges, so that an admin sees
  // every cost its logs show (other processes write theirs within LOG_FLUSH_MS).
  const load = async (id: number): Promise<UserRow> => {
    await services.ledger.flush();
    const user = await accountsStore.userById(id);
    if (!user) throw errors.notFound(`User ${id}`);
    return user;
  };

  app.get('/users', { schema: { response: { 200: gatewayUserPageSchema } } }, async (req) => {
    const q = queryOf(req);
    const { offset, limit } = paging(q);
    const search = searchOf(q.q);
    await services.ledger.flush();
    const [rows, total] = await Promise.all([accountsStore.listUsers(offset, limit, search), accountsStore.countUsers(search)]);
    return { data: await accounts.publicUsers(rows), total, offset, limit };
  });

  app.post('/users', { schema: { body: createSchema, response: { 201: gatewayUserSchema } } }, async (req, reply) => {
    const input = req.body;
    const actor = actorOf(req).user;
    if (input.role === 'admin' && actor.role !== 'root') throw errors.forbidden('Only root can create administrators');
    const user = await accounts.createUser({
      username: input.username,
      password: input.password,
      role: input.role,
      group: input.group,
      balance_micros: input.balance === undefined ? undefined : unitsToMicros(input.balance),
    });
    reply.code(201);
    return (await accounts.publicUsers([user]))[0];
  });

  app.get(
    '/users/:id',
    { schema: { response: oneUser } },
    async (req) => (await accounts.publicUsers([await load(pathId((req.params as { id: string }).id))]))[0],
  );

  app.patch('/users/:id', { schema: { body: patchSchema, response: oneUser }, ...idFirst }, async (req) => {
    const id = pathId((req.params as { id: string }).id);
    const input = req.body;
    const actor = actorOf(req).user;
    assertCanManage(actor, await load(id));
    if (input.role === 'admin' && actor.role !== 'root') throw errors.forbidden('Only root can make administrators');
    const user = await accounts.updateUser(id, {
      status: input.status,
      role: input.role,
      group: input.group,
      password: input.password,
      balance_micros: input.balance === undefined ? undefined : unitsToMicros(input.balance),
      balance_delta_micros: input.balance_delta === undefined ? undefined : unitsToMicros(input.balance_delta),
    });
    auth.invalidate();
    return (await accounts.publicUsers([user]))[0];
  });

  app.delete('/users/:id', { schema: { response: { 200: gatewayDeletedSchema } } }, async (req) => {
    const id = pathId((req.params as { id: string }).id);
    const actor = actorOf(req).user;
    if (actor.id === id) throw errors.forbidden('You cannot delete yourself');
    assertCanManage(actor, await load(id));
    await accounts.deleteUser(id);
    await services.limits.book.remove('user', String(id));
    auth.invalidate();
    return { deleted: true as const, id };
  });
};
