// /api/logs: request logs (the list never carries request bodies), one
// request's detail with its stored body, and replaying a failed request.
// Rows carry the names of their user, token and channel beside the ids, so
// that a client shows names without a lookup per row.
import { logPageSchema, publicLogDetailSchema, replayResultSchema, type PublicLog, type PublicLogDetail, type LogPage } from '@kbchat/contracts';
import type { FastifyPluginAsync } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { MICROS } from '../accounts/pricing.js';
import { errors } from '../errors.js';
import type { GatewayServices } from '../gateway.js';
import { ClientSignal } from '../relay/context.js';
import { replayRequest } from '../logs/replay.js';
import { COUNT_CAP, type LogCursor, type LogNames, type LogsStore, type LogSummary, type StatusClass } from '../logs/store.js';
import { MAX_INT32, paging, queryInt, queryOf, queryString, queryTime } from './input.js';

export type { PublicLog, PublicLogDetail, LogPage };

const num = (v: unknown): number | null => (v === null || v === undefined ? null : Number(v));

const nameOf = (names: Map<number, string>, id: number | null) => (id === null ? null : (names.get(id) ?? null));

/** A log row with numbers as numbers (bigint columns come back as strings on some drivers), and names beside the ids. */
function publicLog(r: LogSummary, names: LogNames): PublicLog {
  const userId = num(r.user_id);
  const tokenId = num(r.token_id);
  const channelId = num(r.channel_id);
  return {
    id: Number(r.id),
    request_id: r.request_id,
    created_at: Number(r.created_at),
    user_id: userId,
    user_name: nameOf(names.users, userId),
    token_id: tokenId,
    token_name: nameOf(names.tokens, tokenId),
    channel_id: channelId,
    channel_name: nameOf(names.channels, channelId),
    endpoint: r.endpoint,
    model: r.model,
    upstream_model: r.upstream_model,
    requested_model: r.requested_model ?? null,
    is_stream: Boolean(Number(r.is_stream)),
    prompt_tokens: Number(r.prompt_tokens),
    completion_tokens: Number(r.completion_tokens),
    usage_source: r.usage_source,
    cost: Number(r.cost) / MICROS,
    cost_micros: Number(r.cost),
    latency_ms: Number(r.latency_ms),
    ttft_ms: num(r.ttft_ms),
    status: Number(r.status),
    error: r.error,
    attempts: Number(r.attempts),
  };
}

/** The names a page of rows refers to: one lookup per kind for the page's distinct ids, not one per row. */
function namesFor(store: LogsStore, rows: LogSummary[]): Promise<LogNames> {
  const ids = (pick: (r: LogSummary) => unknown) => [
    ...new Set(
      rows
        .map(pick)
        .filter((v) => v !== null && v !== undefined)
        .map(Number),
    ),
  ];
  return store.namesOf({ users: ids((r) => r.user_id), tokens: ids((r) => r.token_id), channels: ids((r) => r.channel_id) });
}

const STATUS_CLASSES: StatusClass[] = ['ok', 'error', '2xx', '3xx', '4xx', '5xx'];

/** The cursor is where a page ended: `<created_at>_<id>` of its last row (clients pass it back as it is). */
const cursorOf = (r: LogSummary) => `${Number(r.created_at)}_${Number(r.id)}`;

function parseCursor(raw: unknown): LogCursor | undefined {
  const s = queryString(raw, 'cursor');
  if (s === undefined) return undefined;
  const m = /^(\d{1,15})_(\d{1,10})$/.exec(s);
  if (!m) throw errors.badField('cursor', `Invalid 'cursor': pass back a page's next_cursor as it is`);
  return { createdAt: Number(m[1]), id: Number(m[2]) };
}

function requestIdOf(req: { params: unknown }): string {
  const id = (req.params as { requestId?: string }).requestId ?? '';
  if (!/^[A-Za-z0-9_-]{1,64}$/.test(id)) throw errors.badField('requestId', `Invalid 'requestId': not a request id`);
  return id;
}

export const logsPlugin: FastifyPluginAsync<{ services: GatewayServices }> = async (fastify, { services }) => {
  const app = fastify.withTypeProvider<ZodTypeProvider>();
  const { ledger, logsStore } = services;

  app.get('/logs', { schema: { response: { 200: logPageSchema } } }, async (req) => {
    const q = queryOf(req);
    const status = queryString(q.status, 'status');
    if (status !== undefined && !STATUS_CLASSES.includes(status as StatusClass)) {
      throw errors.badField('status', `Invalid 'status': one of ${STATUS_CLASSES.join(', ')}`);
    }
    const filter = {
      userId: queryInt(q.user_id, 'user_id', { min: 1, max: MAX_INT32 }),
      tokenId: queryInt(q.token_id, 'token_id', { min: 1, max: MAX_INT32 }),
      channelId: queryInt(q.channel_id, 'channel_id', { min: 1, max: MAX_INT32 }),
      model: queryString(q.model, 'model'),
      requestId: queryString(q.request_id, 'request_id'),
      status: status as StatusClass | undefined,
      from: queryTime(q.from, 'from'),
      to: queryTime(q.to, 'to'),
    };
    const { offset, limit } = paging(q);
    const cursor = parseCursor(q.cursor);
    if (cursor && offset > 0) throw errors.badField('offset', `Invalid 'offset': give either 'cursor' or 'offset'`);
    await ledger.flush();
    const listed = logsStore.list(filter, offset, limit, cursor).then(async (rows) => ({ rows, names: await namesFor(logsStore, rows) }));
    const [{ rows, names }, counted] = await Promise.all([listed, logsStore.countCapped(filter)]);
    const page: LogPage = {
      data: rows.map((r) => publicLog(r, names)),
      offset,
      limit,
      next_cursor: rows.length === limit ? cursorOf(rows[rows.length - 1]!) : null,
      total: Math.min(counted, COUNT_CAP),
      total_capped: counted > COUNT_CAP,
    };
    return page;
  });

  app.get('/logs/:requestId', { schema: { response: { 200: publicLogDetailSchema } } }, async (req) => {
    const id = requestIdOf(req);
    await ledger.flush();
    const row = await logsStore.byRequestId(id);
    if (!row) throw errors.notFound(`Request ${id}`);
    const { request_body, ...summary } = row;
    const detail: PublicLogDetail = { ...publicLog(summary, await namesFor(logsStore, [summary])), request_body, replayable: request_body !== null };
    return detail;
  });

  app.post('/logs/:requestId/replay', { schema: { response: { 200: replayResultSchema } } }, async (req, reply) => {
    const id = requestIdOf(req);
    await ledger.flush();
    const signal = new ClientSignal();
    reply.raw.on('close', () => {
      if (!reply.raw.writableFinished) signal.abort();
    });
    return replayRequest(services, id, signal);
  });
};
