// The platform store: PGlite with pgvector, migrated; reopened with its data.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import { openPlatformStore } from '../src/store/db.js';

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
    expect(applied.rows.map((r) => r.name)).toEqual(['0001_initial']);
    await store.close();
  });
});
