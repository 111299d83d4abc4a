// Several workers on one store never take the same item: on PostgreSQL two
// separate connection pools (two "processes"), on PGlite two workers of one
// process. Every item is processed exactly once and the queue ends empty.
import { sql } from 'kysely';
import { afterAll, describe, expect, it } from 'vitest';
import { enqueue, IndexingWorker, type BatchProcessor } from '../src/indexing/index.js';
import { eventually, pgliteKind, postgresKind, queueRows, seed, type StoreKind } from './fixtures/indexing-stores.js';

const kinds: StoreKind[] = [pgliteKind(), await postgresKind()];
afterAll(async () => {
  await Promise.all(kinds.map((k) => k.drop()));
});

/** Records which worker completed which item, in the completing transaction; slow and jittery, so claims interleave. */
function recorder(worker: string): BatchProcessor<null> {
  return {
    async prepare() {
      await new Promise((r) => setTimeout(r, Math.random() * 8));
      return null;
    },
    async commit(tx, items) {
      await tx
        .insertInto('idx_test_done')
        .values(items.map((i) => ({ item_id: i.id, worker })))
        .execute();
    },
  };
}

describe.each(kinds)('workers sharing $name', (kind) => {
  if (kind.skipReason) console.warn(`[skip] shared-queue workers on ${kind.name}: ${kind.skipReason}`);
  const run = kind.skipReason ? it.skip : it;

  run('claims never overlap: 400 items, two workers, each item processed exactly once', async () => {
    const t = await kind.open();
    const second = t.connect ? t.connect() : t; // PostgreSQL: a second pool, as a second process would have
    try {
      const s = await seed(t.db, { n: 400 });
      await enqueue(t.db, s.items);
      const opts = { concurrency: 4, batchSize: 5, pollMs: 5, leaseMs: 30_000 };
      const a = new IndexingWorker({ ...opts, db: t.db, workerId: 'A', processors: { chunk: recorder('A') } }).start();
      const b = new IndexingWorker({ ...opts, db: second.db, workerId: 'B', processors: { chunk: recorder('B') } }).start();
      await eventually(async () => expect(await queueRows(t.db)).toHaveLength(0), 60_000);
      await Promise.all([a.stop(), b.stop()]);
      const { rows } = await sql<{ total: number; distinct_items: number; by_a: number; by_b: number }>`
        select count(*)::int as total, count(distinct item_id)::int as distinct_items,
          count(*) filter (where worker = 'A')::int as by_a, count(*) filter (where worker = 'B')::int as by_b
        from idx_test_done`.execute(t.db);
      const r = rows[0]!;
      expect(Number(r.total)).toBe(400);
      expect(Number(r.distinct_items)).toBe(400);
      expect(Number(r.by_a)).toBeGreaterThan(0);
      expect(Number(r.by_b)).toBeGreaterThan(0);
      expect(a.stats.done + b.stats.done).toBe(400);
    } finally {
      if (second !== t) await second.close();
      await t.close();
    }
  });
});
