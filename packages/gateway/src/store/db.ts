// Opens the gateway store: PGlite in the data dir by default, or PostgreSQL /
// MySQL / MariaDB from a URL. Callers get one Kysely handle and the dialect
// kind, and nothing outside store files writes SQL.
import { existsSync, mkdirSync } from 'node:fs';
import { Worker } from 'node:worker_threads';
import { Kysely, MysqlDialect, PostgresDialect, sql } from 'kysely';
import { PGliteDialect } from './pglite-dialect.js';
import { migrateToLatest } from './migrations.js';
import type { GatewayTables } from './schema.js';

export type StoreKind = 'pglite' | 'postgres' | 'mysql';

export interface Store {
  db: Kysely<GatewayTables>;
  kind: StoreKind;
  /** Where the store lives, with any password removed (safe to print). */
  description: string;
  /** The embedded store's raw handle, for bulk loads (COPY); absent on servers. */
  pglite?: PGliteDialect;
  close(): Promise<void>;
}

export function redactUrl(url: string): string {
  try {
    const u = new URL(url);
    if (u.password) u.password = '***';
    return u.toString();
  } catch {
    return '(unparseable database url)';
  }
}

export async function openStore(opts: { url?: string; dataDir?: string }): Promise<Store> {
  let store: Store;
  try {
    store = await connect(opts);
  } catch (err) {
    const where = opts.url ? redactUrl(opts.url) : `${opts.dataDir ?? './data'}/gateway-db`;
    throw new Error(`cannot open the gateway store at ${where}: ${(err as Error).message}`);
  }
  try {
    await migrateToLatest(store.db, store.kind);
  } catch (err) {
    await store.close();
    throw err;
  }
  return store;
}

/**
 * Creating a data dir runs PGlite's initdb, a second WASM instance that stays
 * resident (about 450 MB) until V8 gets round to collecting it, which an idle
 * server may not do for hours (measured: 870 MB after a first start, 340 MB
 * after a restart). Run it in a worker thread instead: when the worker ends,
 * all of its memory goes with it.
 */
async function createDataDir(dir: string, startParams: string[]): Promise<void> {
  const code = `
    const { workerData } = require('node:worker_threads');
    import(workerData.pglite).then(async ({ PGlite }) => {
      const pg = await PGlite.create(workerData.dir, { startParams: workerData.startParams });
      await pg.close();
    });`;
  const worker = new Worker(code, { eval: true, workerData: { pglite: import.meta.resolve('@electric-sql/pglite'), dir, startParams } });
  await new Promise<void>((resolve, reject) => {
    worker.once('error', reject);
    worker.once('exit', (code) => (code === 0 ? resolve() : reject(new Error(`creating the PGlite data dir ${dir} failed (worker exit ${code})`))));
  });
}

async function connect({ url, dataDir }: { url?: string; dataDir?: string }): Promise<Store> {
  if (!url || url.startsWith('pglite:') || url === 'memory://') {
    const { PGlite } = await import('@electric-sql/pglite');
    const target = url === 'memory://' || url === 'pglite:memory' ? 'memory://' : url?.startsWith('pglite:') ? url.slice('pglite:'.length) : `${dataDir ?? './data'}/gateway-db`;
    // PostgreSQL's default 128 MB of shared buffers is resident memory inside the
    // WASM heap; 16 MB holds the gateway's working set (measured: 300 -> 160 MB
    // RSS on a reopened store).
    const startParams = [...PGlite.defaultStartParams, '-c', 'shared_buffers=16MB'];
    if (target !== 'memory://' && !existsSync(`${target}/PG_VERSION`)) {
      mkdirSync(target, { recursive: true });
      await createDataDir(target, startParams);
    }
    const pg = await PGlite.create(target, { startParams });
    const dialect = new PGliteDialect(pg);
    const db = new Kysely<GatewayTables>({ dialect });
    return { db, kind: 'pglite', description: `PGlite (${target})`, pglite: dialect, close: () => db.destroy() };
  }
  if (url.startsWith('postgres://') || url.startsWith('postgresql://')) {
    const pg = await import('pg');
    const Pool = pg.default.Pool;
    // int8 (bigint) columns hold money and times well inside 2^53: read them as numbers.
    const types = { getTypeParser: (oid: number, format?: 'text' | 'binary') => (oid === 20 || oid === 1700 ? Number : pg.default.types.getTypeParser(oid, format as 'text')) };
    const pool = new Pool({ connectionString: url, max: 10, types: types as never });
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
    const db = new Kysely<GatewayTables>({ dialect: new MysqlDialect({ pool }) });
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
