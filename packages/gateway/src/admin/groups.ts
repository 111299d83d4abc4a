// /api/groups: price groups and their ratios (accounts/groups.ts), for
// administrators. `default` always exists and cannot be deleted; a group that
// a user, a token or a channel names cannot be deleted either (409 with the
// counts): its callers would silently change price, so they are moved first.
import type { PublicGroup } from '@kbchat/contracts';
import { DEFAULT_GROUP, groupBody, groupDeletedSchema, groupName, groupsAnswerSchema, publicGroupSchema } from '@kbchat/contracts';
import type { FastifyPluginAsync, FastifyRequest } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import type { GroupUsage } from '../accounts/groups-store.js';
import { MICROS } from '../accounts/pricing.js';
import { errors } from '../errors.js';
import type { GatewayServices } from '../gateway.js';
import type { GroupRow } from '../store/schema.js';

const NONE: GroupUsage = { users: 0, tokens: 0, channels: 0 };

function publicGroup(g: GroupRow, usage: GroupUsage = NONE): PublicGroup {
  return {
    name: g.name,
    ratio: g.ratio_micros / MICROS,
    description: g.description,
    ...usage,
    created_at: g.created_at,
    updated_at: g.updated_at,
  };
}

/** The group named in the path, checked as a body's group is (a 400 naming `name`). */
function nameOf(req: FastifyRequest): string {
  const r = groupName.safeParse((req.params as { name?: string }).name ?? '');
  if (!r.success) throw errors.badField('name', `Invalid 'name': ${r.error.issues[0]!.message}`);
  return r.data;
}

const plural = (n: number, one: string) => `${n} ${one}${n === 1 ? '' : 's'}`;

export const groupsPlugin: FastifyPluginAsync<{ services: GatewayServices }> = async (fastify, { services }) => {
  const app = fastify.withTypeProvider<ZodTypeProvider>();
  const { groups, groupsStore } = services;
  const oneGroup = { 200: publicGroupSchema };

  app.get('/groups', { schema: { response: { 200: groupsAnswerSchema } } }, async () => {
    const usage = await groupsStore.usage();
    return { data: groups.list().map((g) => publicGroup(g, usage.get(g.name))) };
  });

  app.get('/groups/:name', { schema: { response: oneGroup } }, async (req) => {
    const name = nameOf(req);
    const group = groups.get(name);
    if (!group) throw errors.notFound(`Group ${name}`);
    return publicGroup(group, (await groupsStore.usage()).get(name));
  });

  // Creates the group, or changes its ratio (and description): in force on this process at once, on others within CHANNEL_REFRESH_MS.
  app.put('/groups/:name', { schema: { body: groupBody, response: oneGroup }, preValidation: async (req) => void nameOf(req) }, async (req) => {
    const name = nameOf(req);
    const { ratio, description } = req.body;
    const group = await groups.set(name, Math.round(ratio * MICROS), description);
    return publicGroup(group, (await groupsStore.usage()).get(name));
  });

  app.delete('/groups/:name', { schema: { response: { 200: groupDeletedSchema } } }, async (req) => {
    const name = nameOf(req);
    if (name === DEFAULT_GROUP) throw errors.conflict(`The group ${DEFAULT_GROUP} cannot be deleted: it is every user's group unless another is set`);
    if (!(await groupsStore.has(name))) throw errors.notFound(`Group ${name}`);
    const used = (await groupsStore.usage()).get(name) ?? NONE;
    if (used.users + used.tokens + used.channels > 0) {
      throw errors.conflict(
        `The group ${name} is in use by ${plural(used.users, 'user')}, ${plural(used.tokens, 'token')} and ${plural(used.channels, 'channel')}: move them to another group first`,
      );
    }
    await groups.remove(name);
    await services.limits.book.remove('group', name);
    return { deleted: true as const, name };
  });
};
