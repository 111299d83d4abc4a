// The SQL of step-wise deletes and their jobs (datasets/jobs.ts, store.ts) on
// PGlite and on PostgreSQL (the test server may lack pgvector, which the
// whole platform needs: collection-jobs.test.ts runs it over HTTP on PGlite).
// A delete counts its steps in the job row and leaves nothing of the
// collection; a job another process left is taken over only once stale on
// PostgreSQL, at once on the embedded store; a dataset goes in steps too.
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CollectionJobs } from '../src/datasets/jobs.js';
import { DatasetsStore } from '../src/datasets/store.js';
import { enqueue } from '../src/indexing/index.js';
import { retrievalMigrations } from '../src/retrieval/index.js';
import { indexingMigrations } from '../src/indexing/index.js';
import { datasetMigrations } from '../src/datasets/migration.js';
import { pgliteKind, postgresKind, seed, testResultMigrations, type StoreKind, type TestDb } from './fixtures/indexing-stores.js';

const migrations = { ...indexingMigrations, ...datasetMigrations, ...retrievalMigrations, ...testResultMigrations };
const kinds: StoreKind[] = [pgliteKind(migrations), await postgresKind(migrations)];

for (const kind of kinds) {
  describe.skipIf(Boolean(kind.skipReason))(`collection jobs on '${kind.name}'`, () => {
    let t: TestDb;
    const embedded = kind.name === 'pglite';
    const jobsOf = (
      store: DatasetsStore,
      onError: (err: unknown) => void = (err) => {
        throw err;
      },
    ) => new CollectionJobs(store, { batchRows: 10, vacuumAfterRows: 10, embeddedStore: embedded, vacuumSearchTables: async () => undefined, onError });
    beforeAll(async () => {
      t = await kind.open();
    });
    afterAll(async () => {
      await t?.close();
      await kind.drop();
    });

    it('deletes a collection a batch a step, the job row counting, then everything of it is gone', async () => {
      const store = new DatasetsStore(t.db as never);
      const s = await seed(t.db, { n: 95 });
      const kept = await seed(t.db, { n: 3, teamId: s.teamId, datasetId: s.datasetId });
      await enqueue(t.db, [...s.items, ...kept.items]);
      const seen: number[] = [];
      // Every step's count, read from the job row as a progress poll would.
      const original = store.deleteDataBatch.bind(store);
      store.deleteDataBatch = async (where, limit, now) => {
        const n = await original(where, limit, now);
        const job = await store.job(s.collectionId);
        if (job) seen.push(job.done);
        return n;
      };
      await jobsOf(store).deleteCollection({ id: s.collectionId, team_id: s.teamId, dataset_id: s.datasetId });
      expect(seen).toEqual([10, 20, 30, 40, 50, 60, 70, 80, 90, 95, 95]);
      const left = await sql<{ n: number }>`select
          (select count(*) from data where collection_id = ${s.collectionId})::int + (select count(*) from training_queue where collection_id = ${s.collectionId})::int
          + (select count(*) from collections where id = ${s.collectionId})::int + (select count(*) from collection_jobs)::int as n`.execute(t.db);
      expect(left.rows[0]!.n).toBe(0);
      expect(await store.countData({ collectionId: kept.collectionId })).toBe(3);
    });

    it('takes over a job another process left: at once on the embedded store, only once stale on PostgreSQL', async () => {
      const store = new DatasetsStore(t.db as never);
      const s = await seed(t.db, { n: 25 });
      const now = Date.now();
      await store.startJob({ collectionId: s.collectionId, teamId: s.teamId, datasetId: s.datasetId, kind: 'import', total: 40, owner: 'other-process' }, now);
      const jobs = jobsOf(store);
      const first = await jobs.sweep();
      if (embedded) expect(first.map((j) => j.collection_id)).toEqual([s.collectionId]);
      else {
        // Its owner may still be at it: left alone until its heartbeat is 5 minutes old.
        expect(first).toEqual([]);
        await sql`update collection_jobs set heartbeat_at = ${now - 6 * 60_000}`.execute(t.db);
        expect((await jobs.sweep()).map((j) => [j.collection_id, j.kind])).toEqual([[s.collectionId, 'import']]);
      }
      // The import it stood for is deleted, as its one statement would have left nothing.
      expect(await store.collection(s.teamId, s.collectionId)).toBeUndefined();
      expect(await store.countData({ collectionId: s.collectionId })).toBe(0);
    });

    it('deletes a dataset in steps', async () => {
      const store = new DatasetsStore(t.db as never);
      const s = await seed(t.db, { n: 33 });
      await seed(t.db, { n: 12, teamId: s.teamId, datasetId: s.datasetId });
      expect(await jobsOf(store).deleteDataset(s.teamId, s.datasetId)).toBe(true);
      expect(await store.countData({ datasetId: s.datasetId })).toBe(0);
      expect(await store.dataset(s.teamId, s.datasetId)).toBeUndefined();
    });
  });
}
