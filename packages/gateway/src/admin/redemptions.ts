// /api/redemptions: top-up codes, for administrators (make, list, disable or
// enable, delete); /api/user/topup: a signed-in user redeems one.
import type { FastifyPluginAsync } from 'fastify';
import {
  createRedemptionsBody,
  gatewayDeletedSchema,
  gatewayRedemptionPageSchema,
  gatewayRedemptionSchema,
  patchRedemptionBody,
  redemptionsCreatedSchema,
  toppedUpSchema,
  topupBody,
  type GatewayRedemption,
} from '@kbchat/contracts';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { MICROS, unitsToMicros } from '../accounts/pricing.js';
import type { RedemptionRow } from '../accounts/redemptions.js';
import { errors } from '../errors.js';
import type { GatewayServices } from '../gateway.js';
import { actorOf } from './auth.js';
import { paging, pathId, queryOf, searchOf } from './input.js';

function publicRedemption(r: RedemptionRow): GatewayRedemption {
  return {
    id: r.id,
    name: r.name,
    key_hint: r.key_hint,
    quota: r.quota / MICROS,
    quota_micros: r.quota,
    status: r.status,
    created_by: r.created_by,
    created_at: r.created_at,
    redeemed_by: r.redeemed_by,
    redeemed_by_username: r.redeemed_by_username,
    redeemed_at: r.redeemed_at,
  };
}

/** The path's id is checked before the body (a bad id is named first). */
const idFirst = { preValidation: async (req: { params: unknown }) => void pathId((req.params as { id: string }).id) };

export const redemptionsPlugin: FastifyPluginAsync<{ services: GatewayServices }> = async (fastify, { services }) => {
  const app = fastify.withTypeProvider<ZodTypeProvider>();
  const { redemptions } = services;

  app.post('/redemptions', { schema: { body: createRedemptionsBody, response: { 201: redemptionsCreatedSchema } } }, async (req, reply) => {
    const b = req.body;
    const made = await redemptions.create({ name: b.name, quota: unitsToMicros(b.quota), count: b.count, createdBy: actorOf(req).user.id });
    reply.code(201);
    return { keys: made.keys, data: made.rows.map(publicRedemption) };
  });

  app.get('/redemptions', { schema: { response: { 200: gatewayRedemptionPageSchema } } }, async (req) => {
    const q = queryOf(req);
    const { offset, limit } = paging(q);
    const { rows, total } = await redemptions.list(offset, limit, searchOf(q.q));
    return { data: rows.map(publicRedemption), total, offset, limit };
  });

  app.patch('/redemptions/:id', { schema: { body: patchRedemptionBody, response: { 200: gatewayRedemptionSchema } }, ...idFirst }, async (req) => {
    const id = pathId((req.params as { id: string }).id);
    const found = await redemptions.get(id);
    if (!found) throw errors.notFound(`Redemption code ${id}`);
    if (!(await redemptions.setStatus(id, req.body.status))) throw errors.badField('status', `Invalid 'status': code ${id} was already redeemed`);
    return publicRedemption((await redemptions.get(id))!);
  });

  app.delete('/redemptions/:id', { schema: { response: { 200: gatewayDeletedSchema } } }, async (req) => {
    const id = pathId((req.params as { id: string }).id);
    if (!(await redemptions.delete(id))) throw errors.notFound(`Redemption code ${id}`);
    return { deleted: true as const, id };
  });
};

/** For any signed-in user: redeems a code into their own balance. */
export const topupPlugin: FastifyPluginAsync<{ services: GatewayServices }> = async (fastify, { services }) => {
  const app = fastify.withTypeProvider<ZodTypeProvider>();
  app.post('/user/topup', { schema: { body: topupBody, response: { 200: toppedUpSchema } } }, async (req) => {
    const user = actorOf(req).user;
    const added = await services.redemptions.redeem(req.body.key, user.id);
    await services.ledger.flush();
    const me = await services.accountsStore.userById(user.id);
    const [shown] = await services.accounts.publicUsers([me!]);
    return { added: added / MICROS, balance: shown!.balance, balance_micros: shown!.balance_micros };
  });
};
