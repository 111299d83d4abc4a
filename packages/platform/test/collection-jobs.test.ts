// Large collections in steps (issue 34), on the embedded store over real
// HTTP: an import of more chunks than a statement takes is written a batch a
// statement with every chunk in order; a delete goes a batch a statement too,
// its progress readable while it runs (collection trainingDetail's job), and
// afterwards the store is vacuumed (the tables shrink) and its WAL released; a job a dead process left is finished at the next start (an
// import cut short is deleted).
import { randomBytes } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sql } from 'kysely';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadPlatformConfig, startPlatform, type RunningPlatform } from '../src/index.js';
import { PG_ADMIN_URL } from './fixtures/indexing-stores.js';
import { apiCaller } from './api-caller.js';

const KEY = 'kbchat-test-collection-jobs-key-0123456789';
const BATCH = 40;
/** `n` paragraphs of about 60 tokens, each its own chunk at chunkSize 64. */
const text = (n: number, tag: string) =>
  Array.from(
    { length: n },
    (_, i) =>
      `${tag} ${i + 1}: the dock at berth ${i % 9} took ${(i + 3) * 17} crates of wire, ${(i + 5) * 11} drums of oil and ${(i + 7) * 13} bales of cotton, counted by clerk ${i % 13} before noon.`,
  ).join('\n\n');

/** A fresh database on the test PostgreSQL (with pgvector), or why there is none. */
async function postgresDatabase(): Promise<{ url?: string; skip?: string; drop(): Promise<void> }> {
  const admin = new pg.Client({ connectionString: PG_ADMIN_URL, connectionTimeoutMillis: 2000 });
  try {
    await admin.connect();
  } catch (err) {
    return { skip: `PostgreSQL not reachable at ${PG_ADMIN_URL}: ${(err as Error).message}`, drop: async () => {} };
  }
  // The platform itself needs pgvector (the indexing tests get by without it; this one starts the platform).
  const vector = await admin.query(`select 1 from pg_available_extensions where name = 'vector'`);
  if (!vector.rowCount) {
    await admin.end();
    return { skip: `PostgreSQL at ${PG_ADMIN_URL} has no pgvector`, drop: async () => {} };
  }
  const name = `kbchat_jobs_${randomBytes(4).toString('hex')}`;
  await admin.query(`create database ${name}`);
  return {
    url: Object.assign(new URL(PG_ADMIN_URL), { pathname: `/${name}` }).href,
    async drop() {
      await admin.query(`drop database if exists ${name} with (force)`);
      await admin.end();
    },
  };
}

const postgres = await postgresDatabase();
const stores = [{ name: 'pglite' as const }, { name: 'postgres' as const, url: postgres.url, skip: postgres.skip }];
afterAll(() => postgres.drop());

for (const store of stores)
  describe.skipIf(Boolean('skip' in store && store.skip))(`collections imported and deleted in steps on '${store.name}'`, () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'kbchat-platform-jobs-'));
    let p: RunningPlatform;
    // No worker: what is measured is the import and the delete alone.
    const env = {
      INITIAL_API_KEY: KEY,
      PLATFORM_WORKER: 'off',
      COLLECTION_BATCH_ROWS: String(BATCH),
      GATEWAY_URL: 'http://127.0.0.1:9',
      ...('url' in store ? { DATABASE_URL: store.url } : {}),
    };
    const start = () => startPlatform(loadPlatformConfig(env, { host: '127.0.0.1', port: 0, dataDir }));
    const api = apiCaller(() => p.url, KEY);
    const call = (path: string, init: { method?: string; json?: unknown } = {}) => api(path, init.json, init.method);
    const importText = async (datasetId: string, name: string, body: string) => {
      const r = await call('/api/core/dataset/collection/create/text', { json: { datasetId, name, text: body, chunkSize: 64 } });
      expect(r.status, JSON.stringify(r.body)).toBe(200);
      return r.body.data as { collectionId: string; results: { insertLen: number } };
    };
    const db = () => p.services.store.db;

    beforeAll(async () => {
      p = await start();
    }, 60_000);
    afterAll(async () => p?.close());

    it("writes an import past one statement's size a batch a step: every chunk once, in order, queued, no job left", async () => {
      const datasetId = (await call('/api/core/dataset/create', { json: { name: 'Docks' } })).body.data;
      const made = await importText(datasetId, 'docks', text(BATCH * 3 + 7, 'Dock'));
      expect(made.results.insertLen).toBe(BATCH * 3 + 7);
      const rows = await sql<{
        chunk_index: number;
        q: string;
      }>`select chunk_index, q from data where collection_id = ${made.collectionId} order by chunk_index`.execute(db());
      expect(rows.rows.map((r) => r.chunk_index)).toEqual(Array.from({ length: BATCH * 3 + 7 }, (_, i) => i));
      expect(rows.rows.at(-1)!.q).toContain(`Dock ${BATCH * 3 + 7}:`);
      const queued = await sql<{ n: number }>`select count(*)::int as n from training_queue where collection_id = ${made.collectionId}`.execute(db());
      expect(queued.rows[0]!.n).toBe(BATCH * 3 + 7);
      expect((await sql`select * from collection_jobs`.execute(db())).rows).toEqual([]);
      // Only a large text skips keeping its raw text; this one is kept.
      expect(
        (await sql<{ raw_text: string | null }>`select raw_text from collections where id = ${made.collectionId}`.execute(db())).rows[0]!.raw_text,
      ).toContain('Dock 1:');
    }, 60_000);

    it('deletes a large collection a batch a step, its progress readable meanwhile, then vacuums: its tables shrink', async () => {
      const datasetId = (await call('/api/core/dataset/create', { json: { name: 'Yards' } })).body.data;
      // The kept one first: VACUUM gives back only the empty pages at a table's end.
      const small = await importText(datasetId, 'kept', text(3, 'Kept'));
      const big = await importText(datasetId, 'yards', text(BATCH * 25, 'Yard'));
      const tables = sql<{
        bytes: number;
      }>`select (pg_relation_size('data') + pg_relation_size('data_indexes') + pg_relation_size('training_queue'))::int8 as bytes`;
      const before = Number((await tables.execute(db())).rows[0]!.bytes);

      const seen: { kind: string; done: number; total: number }[] = [];
      let deleting = true;
      const watch = (async () => {
        while (deleting) {
          const d = await call(`/api/core/dataset/collection/trainingDetail?collectionId=${big.collectionId}`);
          if (d.status === 200 && d.body.data.job) seen.push(d.body.data.job);
        }
      })();
      const gone = await call(`/api/core/dataset/collection/delete?id=${big.collectionId}`, { method: 'DELETE' });
      deleting = false;
      await watch;
      expect(gone.status).toBe(200);
      // Seen part way: a delete job of all its chunks, counting up, never past the total.
      const partway = seen.filter((j) => j.kind === 'delete' && j.done > 0 && j.done < j.total);
      expect(partway.length, JSON.stringify(seen)).toBeGreaterThan(0);
      expect(seen.every((j) => j.total === BATCH * 25 && j.done <= j.total)).toBe(true);
      expect(seen.map((j) => j.done)).toEqual([...seen.map((j) => j.done)].sort((a, b) => a - b));

      // Gone, with everything of it; the other collection untouched.
      expect((await call(`/api/core/dataset/collection/detail?id=${big.collectionId}`)).status).toBe(404);
      const left = await sql<{ n: number }>`select count(*)::int as n from data where collection_id = ${big.collectionId}`.execute(db());
      expect(left.rows[0]!.n).toBe(0);
      expect((await sql`select * from training_queue where collection_id = ${big.collectionId}`.execute(db())).rows).toEqual([]);
      expect(
        (await call('/api/core/dataset/collection/listV2', { json: { datasetId } })).body.data.list.map((c: { _id: string; dataAmount: number }) => [
          c._id,
          c.dataAmount,
        ]),
      ).toEqual([[small.collectionId, 3]]);
      // Vacuumed: the tables' emptied pages at their end went back to the file system (PGlite runs no autovacuum).
      // (The WAL a delete this small writes fits in the one segment in use; bench/import-bench.mjs shows it released after a large one.)
      const after = Number((await tables.execute(db())).rows[0]!.bytes);
      expect(after, `${before} -> ${after} bytes`).toBeLessThan(before / 2);
    }, 120_000);

    it('finishes at the next start what a dead process left: its delete, and an import cut short (deleted)', async () => {
      const datasetId = (await call('/api/core/dataset/create', { json: { name: 'Quays' } })).body.data;
      const halfDeleted = await importText(datasetId, 'half deleted', text(BATCH * 2 + 1, 'Quay'));
      const cutShort = await importText(datasetId, 'cut short', text(BATCH + 1, 'Pier'));
      const kept = await importText(datasetId, 'kept', text(2, 'Kept'));
      // What a process killed in the middle leaves: job rows of another owner, part of the work done, its heartbeat stale.
      const teamId = (await sql<{ team_id: string }>`select team_id from datasets where id = ${datasetId}`.execute(db())).rows[0]!.team_id;
      // On PostgreSQL another process may still be at it: only a job silent for 5 minutes is taken over (PGlite, one process, takes any).
      const stale = Date.now() - 6 * 60_000;
      await sql`delete from data where id in (select id from data where collection_id = ${halfDeleted.collectionId} limit ${BATCH})`.execute(db());
      await sql`insert into collection_jobs (collection_id, team_id, dataset_id, kind, done, total, owner, heartbeat_at, created_at) values
      (${halfDeleted.collectionId}, ${teamId}, ${datasetId}, 'delete', ${BATCH}, ${BATCH * 2 + 1}, 'dead-1', ${stale}, ${stale}),
      (${cutShort.collectionId}, ${teamId}, ${datasetId}, 'import', ${BATCH}, ${BATCH * 3}, 'dead-1', ${stale}, ${stale})`.execute(db());
      // Shown as under way meanwhile.
      const during = await call(`/api/core/dataset/trainingDetail?datasetId=${datasetId}`);
      expect(during.body.data.collections.find((c: { collectionId: string }) => c.collectionId === cutShort.collectionId).job).toEqual({
        kind: 'import',
        done: BATCH,
        total: BATCH * 3,
      });

      await p.close();
      p = await start();
      const list = async () => (await call('/api/core/dataset/collection/listV2', { json: { datasetId } })).body.data.list.map((c: { _id: string }) => c._id);
      // Found at start and finished.
      for (let i = 0; i < 100 && (await list()).length > 1; i++) await new Promise((r) => setTimeout(r, 100));
      expect(await list()).toEqual([kept.collectionId]);
      expect((await sql`select * from collection_jobs`.execute(db())).rows).toEqual([]);
      const orphans = await sql<{
        n: number;
      }>`select count(*)::int as n from data where collection_id in (${halfDeleted.collectionId}, ${cutShort.collectionId})`.execute(db());
      expect(orphans.rows[0]!.n).toBe(0);
    }, 120_000);
  });
