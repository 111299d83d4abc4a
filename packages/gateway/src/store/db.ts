// Opens the gateway store: PGlite in the data dir by default, or PostgreSQL /
// MySQL / MariaDB from a URL. Callers get one Kysely handle and the dialect
// kind, and nothing outside store files writes SQL.
import { CompiledQuery, Kysely, MysqlDialect, PostgresDialect, sql, type RawBuilder, type Transaction } from 'kysely';
import { redactUrl } from '@kbchat/shared';
import { numericTypeParsers, PGliteDialect, pgliteTarget } from '@kbchat/shared/pglite';
import { PGliteThread } from '@kbchat/shared/pglite-thread';
import { migrateToLatest } from './migrations.js';
import type { GatewayTables, StoreKind } from './schema.js';

export type { StoreKind } from './schema.js';

export interface Store {
  db: Kysely<GatewayTables>;
  kind: StoreKind;
  /** Where the store lives, with any password removed (safe to print). */
  description: string;
  close(): Promise<void>;
}

export async function openStore(opts: { url?: string; dataDir?: string }): Promise<Store> {
  let store: Store;
  try {
    store = await connect(opts);
  } catch (err) {
    const where = opts.url ? redactUrl(opts.url) : `${opts.dataDir ?? './data'}/gateway-db`;
    throw new Error(`cannot open the gateway store at ${where}: ${(err as Error).message}`, { cause: err });
  }
  try {
    await migrateToLatest(store.db, store.kind);
  } catch (err) {
    await store.close();
    throw err;
  }
  return store;
}

async function connect({ url, dataDir }: { url?: string; dataDir?: string }): Promise<Store> {
  if (!url || url.startsWith('pglite:') || url === 'memory://') {
    const target = pgliteTarget(url, dataDir, 'gateway-db');
    // On its own thread: the relay thread then never runs SQL (pglite-thread.ts says why).
    const pg = await PGliteThread.open(target);
    const dialect = new PGliteDialect(pg);
    const db = new Kysely<GatewayTables>({ dialect });
    return { db, kind: 'pglite', description: `PGlite (${target})`, close: () => db.destroy() };
  }
  if (url.startsWith('postgres://') || url.startsWith('postgresql://')) {
    const pg = await import('pg');
    const Pool = pg.default.Pool;
    const types = numericTypeParsers(pg.default.types);
    const pool = new Pool({ connectionString: url, max: 10, types: types as never });
    // An idle connection the server ends (a restart, an administrator, a
    // failover) emits an error that nothing awaits: unheard, it would end the
    // process. The pool drops that connection and opens another when needed.
    pool.on('error', (err) => console.error(`kbchat gateway: the store closed an idle connection: ${err.message}`));
    const db = new Kysely<GatewayTables>({ dialect: new PostgresDialect({ pool }) });
    await sql`select 1`.execute(db);
    return { db, kind: 'postgres', description: `PostgreSQL (${redactUrl(url)})`, close: () => db.destroy() };
  }
  if (url.startsWith('mysql://') || url.startsWith('mariadb://')) {
    const mysql = await import('mysql2');
    const pool = mysql.default.createPool({
      uri: url.replace(/^mariadb:/, 'mysql:'),
      connectionLimit: 10,
      supportBigNumbers: true,
      bigNumberStrings: false,
      decimalNumbers: true,
    });
    const db = new Kysely<GatewayTables>({
      dialect: new MysqlDialect({
        pool,
        // Lease expiry reads the store's clock as unix_timestamp(now(3)), which goes through the
        // session's time zone: where that zone has daylight saving, the clock would jump an hour.
        onCreateConnection: async (c) => {
          await c.executeQuery(CompiledQuery.raw("set time_zone = '+00:00'"));
        },
      }),
    });
    await sql`select 1`.execute(db);
    return { db, kind: 'mysql', description: `MySQL (${redactUrl(url)})`, close: () => db.destroy() };
  }
  throw new Error(`GATEWAY_DATABASE_URL must start with mysql://, postgres:// or pglite: (got ${redactUrl(url)})`);
}

/** True for a unique-key violation on any of the stores (another process won a race). */
export function isUniqueViolation(err: unknown): boolean {
  const e = err as { code?: string; errno?: number };
  return e?.code === '23505' || e?.code === 'ER_DUP_ENTRY' || e?.errno === 1062;
}

/**
 * The store's own clock in epoch milliseconds, as SQL. Lease expiry is judged
 * by it, so that gateway hosts whose clocks disagree still agree on which
 * holder has expired.
 */
export function storeNowMs(kind: StoreKind): RawBuilder<number> {
  return kind === 'mysql' ? sql<number>`cast(unix_timestamp(now(3)) * 1000 as signed)` : sql<number>`(extract(epoch from clock_timestamp()) * 1000)::bigint`;
}

/** A transaction, run again (up to 4 times, after a short random wait) when it meets a deadlock or lock-wait timeout. */
export async function retriedTransaction<T>(db: Kysely<GatewayTables>, fn: (tx: Transaction<GatewayTables>) => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await db.transaction().execute(fn);
    } catch (err) {
      if (attempt >= 4 || !isLockConflict(err)) throw err;
      await new Promise((r) => setTimeout(r, 5 * attempt + Math.random() * 20));
    }
  }
}

/**
 * An upsert both stores understand: update the row; where there was none,
 * insert it; where another process inserted it between the two, update theirs.
 */
export async function updateElseInsert(update: () => Promise<{ numUpdatedRows: bigint }>, insert: () => Promise<unknown>): Promise<void> {
  if (Number((await update()).numUpdatedRows) > 0) return;
  try {
    await insert();
  } catch (err) {
    if (!isUniqueViolation(err)) throw err;
    await update();
  }
}

/** True for a deadlock or lock-wait timeout: the transaction can simply run again. */
export function isLockConflict(err: unknown): boolean {
  const e = err as { code?: string; errno?: number };
  return e?.code === '40P01' || e?.code === '40001' || e?.errno === 1213 || e?.errno === 1205;
}

/** Rejects when the store does not answer a query (readiness). */
export async function pingStore(db: Kysely<GatewayTables>): Promise<void> {
  await sql`select 1`.execute(db);
}
