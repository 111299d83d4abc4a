// SQL for request logs: batched inserts (with their rollups), filtered
// listing by keyset, batched deletes.
import { sql, type Kysely } from 'kysely';
import { copyFromBlob } from '@kbchat/shared/pglite';
import type { GatewayTables, LogRow, NewLog } from '../store/schema.js';
import { rollupsOf } from './rollup.js';
import { RollupStore } from './rollup-store.js';

/** A row's columns but its id and body: what a list page reads, and (with the body) what COPY writes, in this order. */
const SUMMARY_COLUMNS = [
  'request_id',
  'created_at',
  'user_id',
  'token_id',
  'channel_id',
  'endpoint',
  'model',
  'upstream_model',
  'is_stream',
  'prompt_tokens',
  'completion_tokens',
  'usage_source',
  'cost',
  'latency_ms',
  'ttft_ms',
  'status',
  'error',
  'attempts',
  'requested_model',
] as const;
const LOG_COLUMNS = [...SUMMARY_COLUMNS, 'request_body'] as const;

/** One CSV field: NULL is an empty unquoted field, text is always quoted. */
function csvField(v: unknown): string {
  if (v === null || v === undefined) return '';
  if (typeof v === 'string') return v.includes('"') ? `"${v.replace(/"/g, '""')}"` : `"${v}"`;
  return String(v);
}

/**
 * One row as a CSV line, in LOG_COLUMNS order. Spelled out field by field: a
 * loop over column names made every read a megamorphic keyed lookup, on the
 * relay's thread for every request.
 */
function csvLine(r: NewLog): string {
  return (
    `${csvField(r.request_id)},${csvField(r.created_at)},${csvField(r.user_id)},${csvField(r.token_id)},${csvField(r.channel_id)},` +
    `${csvField(r.endpoint)},${csvField(r.model)},${csvField(r.upstream_model)},${csvField(r.is_stream)},${csvField(r.prompt_tokens)},` +
    `${csvField(r.completion_tokens)},${csvField(r.usage_source)},${csvField(r.cost)},${csvField(r.latency_ms)},${csvField(r.ttft_ms)},` +
    `${csvField(r.status)},${csvField(r.error)},${csvField(r.attempts)},${csvField(r.requested_model)},${csvField(r.request_body)}\n`
  );
}

export type StatusClass = 'ok' | 'error' | '2xx' | '3xx' | '4xx' | '5xx';

export interface LogFilter {
  userId?: number;
  tokenId?: number;
  channelId?: number;
  model?: string;
  requestId?: string;
  /** ok: below 400 and not failed; error: 400 and above, or failed after the status was sent. */
  status?: StatusClass;
  from?: number;
  to?: number;
}

/** Where a page ends: the list is ordered by (created_at, id), newest first. */
export interface LogCursor {
  createdAt: number;
  id: number;
}

/** Counting stops here: a page never counts a million rows. */
export const COUNT_CAP = 10_000;

export type LogSummary = Omit<LogRow, 'request_body'>;

/** Names by id, of the users, tokens and channels some log rows refer to. */
export interface LogNames {
  users: Map<number, string>;
  tokens: Map<number, string>;
  channels: Map<number, string>;
}

export class LogsStore {
  readonly rollups: RollupStore;

  constructor(
    private readonly db: Kysely<GatewayTables>,
    /** The embedded store (PGlite), which takes COPY. */
    private readonly embedded = false,
  ) {
    this.rollups = new RollupStore(db);
  }

  /**
   * How insertMany writes these rows: one statement per group, each of which
   * is written whole or not at all. The embedded store takes any number in
   * one COPY. On servers, at most 500 rows per statement keeps well under every
   * driver's parameter limit, and at most ~4 MB of text keeps an escaped
   * statement under MySQL's max_allowed_packet (16 MB on MariaDB by default):
   * failed requests keep whole bodies, a few of which would otherwise make the
   * whole batch fail. A larger single row goes alone.
   */
  statements(rows: NewLog[]): NewLog[][] {
    if (rows.length === 0) return [];
    if (this.embedded) return [rows];
    const out: NewLog[][] = [];
    let start = 0;
    while (start < rows.length) {
      let end = start;
      let bytes = 0;
      while (end < rows.length && end - start < 500) {
        const row = rows[end]!;
        const size = 256 + Buffer.byteLength(row.request_body ?? '') + Buffer.byteLength(row.error ?? '');
        if (end > start && bytes + size > 4 * 1024 * 1024) break;
        bytes += size;
        end++;
      }
      out.push(rows.slice(start, end));
      start = end;
    }
    return out;
  }

  /**
   * Inserts the rows and adds them to the rollups, one group of
   * statements(rows) at a time, each group with its rollups in one
   * transaction (the caller's, when `db` is one): a group that fails is not
   * written, but the groups before it stay written; a caller that retries
   * (the ledger) passes one group at a time.
   */
  async insertMany(rows: NewLog[], db: Kysely<GatewayTables> = this.db): Promise<void> {
    for (const group of this.statements(rows)) {
      const write = async (tx: Kysely<GatewayTables>) => {
        if (this.embedded) await this.copyMany(tx, group);
        else await tx.insertInto('logs').values(group).execute();
        await this.rollups.add(rollupsOf(group), tx);
      };
      if (db.isTransaction) await write(db);
      else await db.transaction().execute(write);
    }
  }

  /**
   * On the embedded store COPY from CSV costs about a quarter of a multi-row
   * INSERT (16 against 60 µs a row, measured).
   */
  private async copyMany(db: Kysely<GatewayTables>, rows: NewLog[]): Promise<void> {
    let csv = '';
    for (const row of rows) csv += csvLine(row);
    await db.executeQuery(copyFromBlob(`copy logs (${LOG_COLUMNS.join(', ')}) from '/dev/blob' with (format csv)`, new Blob([csv])));
  }

  private filtered(filter: LogFilter) {
    let q = this.db.selectFrom('logs');
    if (filter.userId !== undefined) q = q.where('user_id', '=', filter.userId);
    if (filter.tokenId !== undefined) q = q.where('token_id', '=', filter.tokenId);
    if (filter.channelId !== undefined) q = q.where('channel_id', '=', filter.channelId);
    if (filter.model !== undefined) q = q.where('model', '=', filter.model);
    if (filter.requestId !== undefined) q = q.where('request_id', '=', filter.requestId);
    // Spelled as the partial index logs_failed_time_idx is, so that PostgreSQL uses it.
    if (filter.status === 'error') q = q.where(sql<boolean>`(status >= 400 or error is not null)`);
    if (filter.status === 'ok') q = q.where('status', '<', 400).where('error', 'is', null);
    const hundreds = filter.status?.match(/^([2-5])xx$/)?.[1];
    if (hundreds) q = q.where('status', '>=', Number(hundreds) * 100).where('status', '<', Number(hundreds) * 100 + 100);
    if (filter.from !== undefined) q = q.where('created_at', '>=', filter.from);
    if (filter.to !== undefined) q = q.where('created_at', '<', filter.to);
    return q;
  }

  /**
   * One page, newest first by (created_at, id): after `cursor` when given
   * (keyset: as fast on the thousandth page as on the first, and rows added
   * meanwhile neither repeat nor shift rows between pages), else from
   * `offset` (kept for older clients; slow deep down).
   */
  list(filter: LogFilter, offset: number, limit: number, cursor?: LogCursor): Promise<LogSummary[]> {
    let q = this.filtered(filter).select(['id', ...SUMMARY_COLUMNS]);
    const c = cursor;
    // The first condition alone bounds the index range on every store; the second drops the ties.
    if (c) q = q.where('created_at', '<=', c.createdAt).where((eb) => eb.or([eb('created_at', '<', c.createdAt), eb('id', '<', c.id)]));
    q = q.orderBy('created_at', 'desc').orderBy('id', 'desc').limit(limit);
    if (!c && offset) q = q.offset(offset);
    return q.execute();
  }

  /** How many rows match, counted up to COUNT_CAP + 1 at most (more reads as "more than COUNT_CAP"). */
  async countCapped(filter: LogFilter): Promise<number> {
    const inner = this.filtered(filter)
      .select(sql<number>`1`.as('one'))
      .limit(COUNT_CAP + 1);
    const r = await this.db
      .selectFrom(inner.as('matching'))
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .executeTakeFirst();
    return Number(r?.n ?? 0);
  }

  /**
   * The names of the users, tokens and channels a page of rows refers to: one
   * query per kind for the ids given (a page's distinct ids), none for an
   * empty list. A deleted one is simply absent.
   */
  async namesOf(ids: { users: number[]; tokens: number[]; channels: number[] }): Promise<LogNames> {
    const [users, tokens, channels] = await Promise.all([
      ids.users.length ? this.db.selectFrom('users').select(['id', 'username as name']).where('id', 'in', ids.users).execute() : [],
      ids.tokens.length ? this.db.selectFrom('tokens').select(['id', 'name']).where('id', 'in', ids.tokens).execute() : [],
      ids.channels.length ? this.db.selectFrom('channels').select(['id', 'name']).where('id', 'in', ids.channels).execute() : [],
    ]);
    const byId = (rows: { id: number; name: string }[]) => new Map(rows.map((r) => [Number(r.id), r.name]));
    return { users: byId(users), tokens: byId(tokens), channels: byId(channels) };
  }

  byRequestId(requestId: string): Promise<LogRow | undefined> {
    return this.db.selectFrom('logs').selectAll().where('request_id', '=', requestId).orderBy('id', 'desc').limit(1).executeTakeFirst();
  }

  /**
   * Deletes rows older than `before` among the `batch` oldest rows (by id);
   * returns how many went. Rows are written in time order, so walking the
   * primary key finds the old ones first, and a call never reads more than
   * `batch` rows. Fewer than `batch` deleted means there is nothing older left.
   */
  async deleteOlderThan(before: number, batch: number): Promise<number> {
    const oldest = await this.db.selectFrom('logs').select(['id', 'created_at']).orderBy('id').limit(batch).execute();
    const ids = oldest.filter((r) => Number(r.created_at) < before).map((r) => r.id);
    if (ids.length === 0) return 0;
    const r = await this.db.deleteFrom('logs').where('id', 'in', ids).executeTakeFirst();
    return Number(r.numDeletedRows);
  }
}
