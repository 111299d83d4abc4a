// /api/dashboard: the console's charts for a time range (logs/dashboard.ts
// builds them from the log rollups).
import { dashboardAnswerSchema } from '@kbchat/contracts';
import type { FastifyPluginAsync } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { errors } from '../errors.js';
import type { GatewayServices } from '../gateway.js';
import { DashboardService, MAX_POINTS } from '../logs/dashboard.js';
import type { Dimension } from '../logs/rollup.js';
import { queryInt, queryOf, queryString, queryTime } from './input.js';

const DIMENSIONS: Dimension[] = ['model', 'channel', 'token', 'user'];
const DAY_MS = 86_400_000;

export const dashboardPlugin: FastifyPluginAsync<{ services: GatewayServices }> = async (fastify, { services }) => {
  const app = fastify.withTypeProvider<ZodTypeProvider>();
  const dashboard = new DashboardService(services.logsStore.rollups, () => services.channels.list());

  app.get('/dashboard', { schema: { response: { 200: dashboardAnswerSchema } } }, async (req) => {
    const q = queryOf(req);
    const to = queryTime(q.to, 'to') ?? Date.now();
    const from = queryTime(q.from, 'from') ?? to - DAY_MS;
    if (from >= to) throw errors.badField('from', `Invalid 'from': must be before 'to'`);
    if (to - from > MAX_POINTS * DAY_MS) throw errors.badField('from', `Invalid 'from': the range is at most ${MAX_POINTS} days`);
    const groupField = q.group_by !== undefined ? 'group_by' : 'groupBy';
    const groupBy = queryString(q.group_by ?? q.groupBy, groupField);
    if (groupBy !== undefined && !DIMENSIONS.includes(groupBy as Dimension)) {
      throw errors.badField(groupField, `Invalid '${groupField}': one of ${DIMENSIONS.join(', ')}`);
    }
    const top = queryInt(q.top, 'top', { min: 1, max: 20 }) ?? 5;
    const rankLimit = queryInt(q.users, 'users', { min: 1, max: 100 }) ?? 10;
    // Rows settled but not yet written are part of the picture.
    await services.ledger.flush();
    return dashboard.build({ from, to, groupBy: groupBy as Dimension | undefined, top, rankLimit });
  });
};
