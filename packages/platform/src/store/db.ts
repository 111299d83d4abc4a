// Opens the platform store: PGlite with pgvector in the data dir by default,
// or PostgreSQL (with the pgvector extension) from DATABASE_URL. Nothing
// outside store files writes SQL.
import { CompiledQuery, Kysely, PostgresDialect, sql } from 'kysely';
import { redactUrl } from '@kbchat/shared';
import { numericTypeParsers, openPGlite, PGliteDialect, pgliteTarget } from '@kbchat/shared/pglite';
import { migratePlatform, type ExtraMigrations } from './migrations.js';
import { markSearchSession, SESSION_HNSW_SQL } from './session.js';
import type { PlatformDatabase, PlatformDb } from './database.js';

export interface PlatformStore {
  db: PlatformDb;
  kind: 'pglite' | 'postgres';
  description: string;
  close(): Promise<void>;
}

export async function openPlatformStore(opts: { url?: string; dataDir?: string; migrations?: ExtraMigrations }): Promise<PlatformStore> {
  const store = await connect(opts.url, opts.dataDir);
  try {
    await migratePlatform(store.db, opts.migrations);
    // PGlite's one connection gets the search session settings now (pool connections as they open).
    if (store.kind === 'pglite') for (const statement of [...SESSION_HNSW_SQL, PGLITE_BUILD_MEMORY_SQL]) await sql.raw(statement).execute(store.db);
    markSearchSession(store.db);
  } catch (err) {
    await store.close();
    throw err;
  }
  return store;
}

/**
 * pgvector builds an HNSW graph in maintenance_work_mem and, past it, on disk
 * at live-insert speed (~8 ms a vector in PGlite): at 100,000 384-dim vectors
 * (a ~200 MB graph) the default 64 MB turned a ~2-minute build into a
 * quarter of an hour with the process blocked. The limit allocates nothing
 * until a build needs it. (A PostgreSQL server keeps its operator's setting.)
 */
const PGLITE_BUILD_MEMORY_SQL = `set maintenance_work_mem = '1GB'`;

async function connect(url: string | undefined, dataDir: string | undefined): Promise<PlatformStore> {
  if (!url || url.startsWith('pglite:') || url === 'memory://') {
    const { vector } = await import('@electric-sql/pglite-pgvector');
    const target = pgliteTarget(url, dataDir, 'platform-db');
    // 16 MB like the gateway's store: searches go to the in-memory copies
    // (vector-cache.ts, fulltext-cache.ts), so 32 MB bought no speed and cost
    // up to 16 MB resident (docs/benchmarks.md, "Memory of kbchat start").
    const pg = await openPGlite(target, { sharedBuffers: '16MB', extensions: { vector } });
    const db = new Kysely<PlatformDatabase>({ dialect: new PGliteDialect(pg) });
    return { db, kind: 'pglite', description: `PGlite with pgvector (${target})`, close: () => db.destroy() };
  }
  if (url.startsWith('postgres://') || url.startsWith('postgresql://')) {
    const pg = await import('pg');
    const types = numericTypeParsers(pg.default.types);
    const pool = new pg.default.Pool({ connectionString: url, max: 10, types: types as never });
    // An idle connection the server ends (a restart, an administrator) emits an
    // error nothing awaits: unheard, it would end the process. The pool opens another.
    pool.on('error', (err) => console.error(`kbchat platform: the store closed an idle connection: ${err.message}`));
    const onCreateConnection = async (conn: { executeQuery(q: CompiledQuery): Promise<unknown> }) => {
      for (const statement of SESSION_HNSW_SQL) await conn.executeQuery(CompiledQuery.raw(statement));
    };
    const db = new Kysely<PlatformDatabase>({ dialect: new PostgresDialect({ pool, onCreateConnection }) });
    await sql`select 1`.execute(db);
    return { db, kind: 'postgres', description: `PostgreSQL (${redactUrl(url)})`, close: () => db.destroy() };
  }
  throw new Error(`DATABASE_URL must start with postgres:// or pglite: (got ${redactUrl(url)})`);
}

/** Rejects when the store does not answer a query (readiness). */
export async function pingStore(db: PlatformDb): Promise<void> {
  await sql`select 1`.execute(db);
}
