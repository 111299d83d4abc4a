// The platform store: PGlite with pgvector, migrated; reopened with its data.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import pg from 'pg';
import { openPlatformStore } from '../src/store/db.js';
import { PG_ADMIN_URL } from './fixtures/indexing-stores.js';

describe('platform store (PGlite + pgvector)', () => {
  it('migrates, stores vectors of any dimension and keeps them across a reopen', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'kbchat-platform-store-'));
    let store = await openPlatformStore({ dataDir: dir });
    await store.db.insertInto('teams').values({ id: 't1', name: 'root', created_at: Date.now() }).execute();
    await sql`create table v3 (id int primary key, e vector(3))`.execute(store.db);
    await sql`insert into v3 values (1, '[1,0,0]'), (2, '[0,1,0]')`.execute(store.db);
    const nearest = await sql<{ id: number }>`select id from v3 order by e <=> '[0.9,0.1,0]' limit 1`.execute(store.db);
    expect(nearest.rows[0]!.id).toBe(1);
    await store.close();
    store = await openPlatformStore({ dataDir: dir });
    expect((await store.db.selectFrom('teams').selectAll().execute()).map((t) => t.id)).toEqual(['t1']);
    const applied = await sql<{ name: string }>`select name from kbchat_platform_migrations`.execute(store.db);
    expect(applied.rows.map((r) => r.name)).toEqual(['0001_initial', '9005_data_pages', '9008_data_rows']);
    await store.close();
  });
});

const pgUnreachable = await (async () => {
  const probe = new pg.Client({ connectionString: PG_ADMIN_URL, connectionTimeoutMillis: 2000 });
  try {
    await probe.connect();
    await probe.end();
    return undefined;
  } catch (err) {
    return `not reachable at ${PG_ADMIN_URL}: ${(err as Error).message}`;
  }
})();
if (pgUnreachable) console.warn(`[skip] platform store on PostgreSQL: ${pgUnreachable}`);

describe.skipIf(!!pgUnreachable)('platform store on PostgreSQL', () => {
  it('says clearly at start that the pgvector extension is missing, or migrates where it is installed', async () => {
    const admin = new pg.Client({ connectionString: PG_ADMIN_URL, connectionTimeoutMillis: 2000 });
    await admin.connect();
    const name = `kbchat_pf_${Date.now().toString(36)}`;
    await admin.query(`create database ${name}`);
    try {
      const url = Object.assign(new URL(PG_ADMIN_URL), { pathname: `/${name}` }).href;
      const hasVector = (await admin.query(`select 1 from pg_available_extensions where name = 'vector'`)).rowCount! > 0;
      if (hasVector) {
        const store = await openPlatformStore({ url });
        expect(store.kind).toBe('postgres');
        await store.close();
      } else {
        await expect(openPlatformStore({ url })).rejects.toThrow(/needs the pgvector extension/);
      }
    } finally {
      await admin.query(`drop database if exists ${name}`);
      await admin.end();
    }
  });
});
