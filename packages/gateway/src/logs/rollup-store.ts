// SQL for the log rollups (rollup.ts says what they hold). They are written
// by LogsStore.insertMany in the statement sequence, and so the transaction,
// that writes the log rows themselves: the dashboard's spend is the sum of
// the logged costs, always. The rollups' key is (grain, dim, bucket, dim_key),
// so that every dashboard read is one range of it.
import { MysqlAdapter, sql, type Insertable, type Kysely, type RawBuilder } from 'kysely';
import type { GatewayTables, LogRollupsTable } from '../store/schema.js';
import {
  emptySums,
  GRAIN_CODE,
  GRAIN_MS,
  GRAINS,
  HIST_BUCKETS,
  HIST_COLUMNS,
  HIST_DIMS,
  HIST_EDGES,
  ROLLUP_DIMS,
  type Grain,
  type RollupDim,
  type RollupRow,
  type Sums,
} from './rollup.js';

const SCALAR_COLUMNS = ['requests', 'errors', 'prompt_tokens', 'completion_tokens', 'cost', 'latency_sum'] as const;
const SUM_COLUMNS = [...SCALAR_COLUMNS, ...HIST_COLUMNS] as const;
type SumColumn = (typeof SUM_COLUMNS)[number];
/** Rows per upsert statement: ~70 parameters each keeps far under every driver's limit (65535). */
const ROWS_PER_STATEMENT = 400;

export interface RollupRange {
  grain: Grain;
  dim: RollupDim;
  from: number;
  to: number;
}

export interface KeyedSums extends Sums {
  bucket: number;
  dim_key: string;
}

export interface KeyTotal {
  dim_key: string;
  requests: number;
  errors: number;
  prompt_tokens: number;
  completion_tokens: number;
  cost: number;
}

function sumsOf(r: Record<string, unknown>): Sums {
  const s = emptySums();
  s.requests = Number(r.requests);
  s.errors = Number(r.errors);
  s.prompt_tokens = Number(r.prompt_tokens);
  s.completion_tokens = Number(r.completion_tokens);
  s.cost = Number(r.cost);
  s.latency_sum = Number(r.latency_sum);
  for (let k = 0; k < HIST_BUCKETS; k++) s.hist[k] = Number(r[HIST_COLUMNS[k]!]);
  return s;
}

export class RollupStore {
  private readonly db: Kysely<GatewayTables>;
  private readonly mysql: boolean;

  constructor(db: Kysely<GatewayTables>) {
    this.db = db;
    this.mysql = db.getExecutor().adapter instanceof MysqlAdapter;
  }

  /** Adds these rollup rows (rollupsOf's, in its key order) to the stored ones, inside `db` (the log rows' transaction). */
  async add(rows: RollupRow[], db: Kysely<GatewayTables> = this.db): Promise<void> {
    // Rows of dimensions without a histogram go in statements that leave its columns alone.
    await this.upsert(
      rows.filter((r) => HIST_DIMS.has(r.dim)),
      true,
      db,
    );
    await this.upsert(
      rows.filter((r) => !HIST_DIMS.has(r.dim)),
      false,
      db,
    );
  }

  private async upsert(rows: RollupRow[], withHist: boolean, db: Kysely<GatewayTables>): Promise<void> {
    const columns = withHist ? SUM_COLUMNS : SCALAR_COLUMNS;
    for (let i = 0; i < rows.length; i += ROWS_PER_STATEMENT) {
      const values = rows.slice(i, i + ROWS_PER_STATEMENT).map((r) => {
        const v: Insertable<LogRollupsTable> = {
          grain: r.grain,
          dim: r.dim,
          bucket: r.bucket,
          dim_key: r.dim_key,
          requests: r.requests,
          errors: r.errors,
          prompt_tokens: r.prompt_tokens,
          completion_tokens: r.completion_tokens,
          cost: r.cost,
          latency_sum: r.latency_sum,
        };
        if (withHist) for (let k = 0; k < HIST_BUCKETS; k++) v[HIST_COLUMNS[k]!] = r.hist[k];
        return v;
      });
      const insert = db.insertInto('log_rollups').values(values);
      const set: Partial<Record<SumColumn, RawBuilder<number>>> = {};
      for (const c of columns) {
        set[c] = this.mysql ? sql<number>`${sql.ref(c)} + values(${sql.ref(c)})` : sql<number>`${sql.ref(`log_rollups.${c}`)} + ${sql.ref(`excluded.${c}`)}`;
      }
      if (this.mysql) await insert.onDuplicateKeyUpdate(set).execute();
      else await insert.onConflict((oc) => oc.columns(['grain', 'dim', 'bucket', 'dim_key']).doUpdateSet(set)).execute();
    }
  }

  /** The stored rows of one dimension in [from, to), optionally only these keys; ordered by bucket. */
  async series(range: RollupRange, keys?: string[]): Promise<KeyedSums[]> {
    if (keys && keys.length === 0) return [];
    let q = this.db
      .selectFrom('log_rollups')
      .select(['bucket', 'dim_key', ...SUM_COLUMNS])
      .where('grain', '=', GRAIN_CODE[range.grain])
      .where('dim', '=', range.dim)
      .where('bucket', '>=', range.from)
      .where('bucket', '<', range.to);
    if (keys) q = q.where('dim_key', 'in', keys);
    const rows = await q.orderBy('bucket').execute();
    return rows.map((r) => ({ bucket: Number(r.bucket), dim_key: String(r.dim_key), ...sumsOf(r) }));
  }

  /** Totals per key of one dimension over [from, to): the `limit` largest by `order`. */
  async topKeys(range: RollupRange, order: 'requests' | 'cost', limit: number): Promise<KeyTotal[]> {
    // sum() over bigint is numeric: a string on PGlite, a number on PostgreSQL and MySQL (db.ts's parsers).
    const sum = (c: string) => sql<number | string>`sum(${sql.ref(c)})`;
    const rows = await this.db
      .selectFrom('log_rollups')
      .select([
        'dim_key',
        sum('requests').as('requests'),
        sum('errors').as('errors'),
        sum('prompt_tokens').as('prompt_tokens'),
        sum('completion_tokens').as('completion_tokens'),
        sum('cost').as('cost'),
      ])
      .where('grain', '=', GRAIN_CODE[range.grain])
      .where('dim', '=', range.dim)
      .where('bucket', '>=', range.from)
      .where('bucket', '<', range.to)
      .groupBy('dim_key')
      .orderBy(sum(order), 'desc')
      .orderBy('dim_key')
      .limit(limit)
      .execute();
    return rows.map((r) => ({
      dim_key: String(r.dim_key),
      requests: Number(r.requests),
      errors: Number(r.errors),
      prompt_tokens: Number(r.prompt_tokens),
      completion_tokens: Number(r.completion_tokens),
      cost: Number(r.cost),
    }));
  }

  /**
   * Latency histograms of the log rows of these tokens or users in [from, to)
   * ('' for rows without one), read from the log itself: their rollups keep
   * no histogram (rollup.ts HIST_DIMS). One query a key, each a range of
   * that dimension's (id, created_at, id) index, bucketed in SQL as
   * latencyBucket does (HIST_EDGES), so that only 60 counts come back. Its
   * cost grows with the key's rows in range (docs/benchmarks.md, the console).
   */
  async latencyHistograms(dim: 'token' | 'user', keys: string[], from: number, to: number): Promise<Map<string, number[]>> {
    const column = sql.ref(dim === 'token' ? 'token_id' : 'user_id');
    const bucket = this.mysql
      ? sql`case ${sql.join(
          HIST_EDGES.map((edge, k) => sql`when latency_ms >= ${sql.lit(edge)} then ${sql.lit(k)}`)
            .slice(1)
            .reverse(),
          sql` `,
        )} else 0 end`
      : sql`width_bucket(latency_ms::bigint, ${sql.raw(`array[${HIST_EDGES.slice(1).join(',')}]::bigint[]`)})`;
    const out = new Map<string, number[]>();
    for (const key of keys) {
      const which = key === '' ? sql`${column} is null` : sql`${column} = ${Number(key)}`;
      const rows = await sql<{ k: number; n: number }>`select ${bucket} as k, count(*) as n from logs
        where ${which} and created_at >= ${from} and created_at < ${to} group by 1`.execute(this.db);
      const hist = emptySums().hist;
      for (const r of rows.rows) hist[Math.min(HIST_BUCKETS - 1, Math.max(0, Number(r.k)))]! += Number(r.n);
      out.set(key, hist);
    }
    return out;
  }

  /**
   * The models that were ever charged for tokens (within log retention),
   * from the day rollups: a few rows per model and day. Requests refused
   * before they reached a model (a name nobody serves) used no tokens and
   * are left out, so a client's typo is not listed as a model.
   */
  async modelsWithTraffic(limit: number): Promise<string[]> {
    const rows = await this.db
      .selectFrom('log_rollups')
      .select('dim_key')
      .where('grain', '=', GRAIN_CODE.day)
      .where('dim', '=', 'model')
      .groupBy('dim_key')
      .having(sql<number>`sum(prompt_tokens) + sum(completion_tokens)`, '>', 0)
      .orderBy('dim_key')
      .limit(limit)
      .execute();
    return rows.map((r) => String(r.dim_key));
  }

  /**
   * Display names of channels, tokens or users by id (a deleted one has
   * none). A token's is "name (owner)": many users name theirs alike.
   */
  async names(dim: 'channel' | 'token' | 'user', ids: number[]): Promise<Map<number, string>> {
    if (ids.length === 0) return new Map();
    if (dim === 'token') {
      const rows = await this.db
        .selectFrom('tokens')
        .leftJoin('users', 'users.id', 'tokens.user_id')
        .select(['tokens.id as id', 'tokens.name as name', 'users.username as owner'])
        .where('tokens.id', 'in', ids)
        .execute();
      return new Map(rows.map((r) => [Number(r.id), r.owner === null ? String(r.name) : `${r.name} (${r.owner})`]));
    }
    const rows =
      dim === 'user'
        ? await this.db.selectFrom('users').select(['id', 'username as name']).where('id', 'in', ids).execute()
        : await this.db.selectFrom('channels').select(['id', 'name']).where('id', 'in', ids).execute();
    return new Map(rows.map((r) => [Number(r.id), String(r.name)]));
  }

  /**
   * Deletes the buckets that end at or before `before` (log retention deletes
   * the rows older than it). A bucket that straddles `before` stays whole:
   * at most one per grain still counts rows the log no longer has.
   */
  async deleteBefore(before: number): Promise<number> {
    let n = 0;
    for (const grain of GRAINS) {
      for (const dim of ROLLUP_DIMS) {
        const r = await this.db
          .deleteFrom('log_rollups')
          .where('grain', '=', GRAIN_CODE[grain])
          .where('dim', '=', dim)
          .where('bucket', '<=', before - GRAIN_MS[grain])
          .executeTakeFirst();
        n += Number(r.numDeletedRows);
      }
    }
    return n;
  }
}

/**
 * Builds the rollups of the log rows already stored, in SQL that buckets
 * exactly as rollupsOf does (HIST_EDGES come from latencyBucket). The
 * migration that creates the table runs it once, so that an upgraded
 * gateway's dashboard covers its old rows too.
 */
// Kysely<any>: only migration 0004 runs this, against the schema as it was then; migrations
// take Kysely<any>, not the current tables (https://kysely.dev/docs/migrations).
export async function backfillRollups(db: Kysely<any>): Promise<void> {
  const mysql = db.getExecutor().adapter instanceof MysqlAdapter;
  const keyOf: Record<RollupDim, RawBuilder<string>> = {
    all: sql<string>`''`,
    // MySQL's default collation groups 'GPT-4' with 'gpt-4': the rollups keep them apart, as rollupsOf does.
    model: mysql ? sql<string>`(model collate utf8mb4_bin)` : sql<string>`model`,
    // concat('', NULL) is '' on PostgreSQL and NULL on MySQL: coalesce makes both ''.
    channel: sql<string>`coalesce(concat('', channel_id), '')`,
    token: sql<string>`coalesce(concat('', token_id), '')`,
    user: sql<string>`coalesce(concat('', user_id), '')`,
  };
  const hist = HIST_COLUMNS.map((c, k) => {
    const cond =
      k === 0
        ? sql`latency_ms < 1`
        : k === HIST_BUCKETS - 1
          ? sql`latency_ms >= ${sql.lit(HIST_EDGES[k]!)}`
          : sql`latency_ms >= ${sql.lit(HIST_EDGES[k]!)} and latency_ms < ${sql.lit(HIST_EDGES[k + 1]!)}`;
    return sql`sum(case when ${cond} then 1 else 0 end)`;
  });
  for (const grain of GRAINS) {
    const bucket = sql`created_at - (created_at % ${sql.lit(GRAIN_MS[grain])})`;
    for (const dim of ROLLUP_DIMS) {
      const key = keyOf[dim];
      await sql`
        insert into log_rollups (grain, dim, bucket, dim_key, ${sql.join(SUM_COLUMNS.map((c) => sql.ref(c)))})
        select ${sql.lit(GRAIN_CODE[grain])}, ${sql.lit(dim)}, ${bucket}, ${key}, count(*),
          sum(case when status >= 400 or error is not null then 1 else 0 end),
          sum(prompt_tokens), sum(completion_tokens), sum(cost), sum(latency_ms), ${sql.join(HIST_DIMS.has(dim) ? hist : hist.map(() => sql`0`))}
        from logs group by ${dim === 'all' ? bucket : sql`${bucket}, ${key}`}`.execute(db);
    }
  }
}
