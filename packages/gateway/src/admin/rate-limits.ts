// /api/rate-limits: the limits of tokens, users, groups and models, and the
// budgets of tokens and users (limits/), for administrators. The subject is a token's or a user's id, a
// group's or a model's name (a model's may hold slashes: the path's rest).
import type { FastifyPluginAsync, FastifyRequest } from 'fastify';
import { rateLimitBody, rateLimitDeletedSchema, rateLimitListSchema, rateLimitSchema, rateLimitScopeSchema, type RateLimit } from '@kbchat/contracts';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { errors } from '../errors.js';
import type { GatewayServices } from '../gateway.js';
import type { LimitRow, LimitScope } from '../limits/store.js';
import { actorOf, assertCanManage } from './auth.js';
import { MICROS, unitsToMicros } from '../accounts/pricing.js';

/** A row as the API shows it: the budget in units. */
function shown(r: LimitRow): RateLimit {
  const budget = r.budget !== null && r.budget_period ? { amount: r.budget / MICROS, period: r.budget_period } : null;
  return { scope: r.scope, subject: r.subject, rpm: r.rpm, tpm: r.tpm, rpd: r.rpd, budget };
}

export const rateLimitsPlugin: FastifyPluginAsync<{ services: GatewayServices }> = async (fastify, { services }) => {
  const app = fastify.withTypeProvider<ZodTypeProvider>();
  const { limits, accountsStore, groupsStore } = services;

  /** The scope and subject named by the path, checked to exist (a model's name is any name). */
  async function subjectOf(req: FastifyRequest): Promise<{ scope: LimitScope; subject: string }> {
    const params = req.params as Record<string, string | undefined>;
    const scope = rateLimitScopeSchema.safeParse(params.scope);
    if (!scope.success) throw errors.badField('scope', `Invalid 'scope': one of token, user, group, model`);
    const subject = (params['*'] ?? '').trim();
    if (!subject || subject.length > 200)
      throw errors.badField('subject', `Invalid 'subject': /api/rate-limits/${scope.data}/<id or name>, at most 200 characters`);
    if (scope.data === 'token' || scope.data === 'user') {
      const id = /^[1-9]\d{0,9}$/.test(subject) ? Number(subject) : NaN;
      if (!Number.isSafeInteger(id)) throw errors.badField('subject', `Invalid 'subject': a ${scope.data}'s id`);
      const token = scope.data === 'token' ? await accountsStore.tokenById(id) : undefined;
      if (scope.data === 'token' && !token) throw errors.notFound(`Token ${id}`);
      const user = await accountsStore.userById(token ? token.user_id : id);
      if (!user) throw errors.notFound(`User ${id}`);
      // An admin limits only whom it manages: never root, nor another admin (unless root), nor its own account.
      const actor = actorOf(req).user;
      assertCanManage(actor, user);
      if (actor.role !== 'root' && actor.id === user.id) throw errors.forbidden('Only root sets the limits and budget of your own account and tokens');
    }
    // Asked of the store: a group made on another process a moment ago is not in this one's book yet.
    if (scope.data === 'group' && !(await groupsStore.has(subject))) throw errors.notFound(`Group ${subject}`);
    return { scope: scope.data, subject };
  }

  app.get('/rate-limits', { schema: { response: { 200: rateLimitListSchema } } }, async () => ({
    data: limits.book.list().map(shown),
    counting: limits.counters.where,
    problem: limits.counters.problem() ?? null,
  }));

  app.put('/rate-limits/:scope/*', { schema: { body: rateLimitBody, response: { 200: rateLimitSchema } } }, async (req): Promise<RateLimit> => {
    const { scope, subject } = await subjectOf(req);
    const { budget } = req.body;
    if (budget && scope !== 'token' && scope !== 'user') throw errors.badField('budget', `Invalid 'budget': only tokens and users have budgets`);
    const row: LimitRow = {
      scope,
      subject,
      rpm: req.body.rpm ?? null,
      tpm: req.body.tpm ?? null,
      rpd: req.body.rpd ?? null,
      budget: budget ? unitsToMicros(budget.amount) : null,
      budget_period: budget?.period ?? null,
    };
    await limits.book.set(row);
    return shown(row);
  });

  app.delete('/rate-limits/:scope/*', { schema: { response: { 200: rateLimitDeletedSchema } } }, async (req) => {
    const { scope, subject } = await subjectOf(req);
    if (!(await limits.book.remove(scope, subject))) throw errors.notFound(`Rate limits of ${scope} ${subject}`);
    return { deleted: true as const, scope, subject };
  });
};
