// The indexing queue on PGlite and on PostgreSQL (fresh database, when
// reachable): enqueue inside the caller's transaction, a worker that embeds
// through a real gateway in front of the simulator, leases, exact errors,
// retryFailed, "no vector model configured", progress.
import { sql, type Kysely } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROOT_TOKEN, startTestGateway, type TestGateway } from '../../gateway/test/helpers.js';
import { GatewayClient } from '../src/gateway-client/index.js';
import {
  claimItems,
  completeItems,
  enqueue,
  indexChunks,
  IndexingWorker,
  NO_VECTOR_MODEL,
  progress,
  retryFailed,
  type ChunkIndexingDeps,
} from '../src/indexing/index.js';
import { eventually, pgliteKind, postgresKind, queueRows, seed, testWriters, type StoreKind, type TestDb } from './fixtures/indexing-stores.js';

const kinds: StoreKind[] = [pgliteKind(), await postgresKind()];
let gw: TestGateway;
let client: GatewayClient;

beforeAll(async () => {
  gw = await startTestGateway();
  client = new GatewayClient({ url: gw.url, token: ROOT_TOKEN });
});
afterAll(async () => {
  await client?.close();
  await gw?.close();
  await Promise.all(kinds.map((k) => k.drop()));
});

function chunkDeps(
  models: Record<string, string | undefined> | ((ds: string) => string | undefined),
  extra: Partial<ChunkIndexingDeps> = {},
): ChunkIndexingDeps {
  return {
    embed: (model, texts) => client.embeddings(model, texts),
    vectorModelOf: typeof models === 'function' ? models : (ds) => models[ds],
    ...testWriters,
    ...extra,
  };
}

async function vectorCounts(db: Kysely<any>): Promise<Map<string, number>> {
  const { rows } = await sql<{ key: string; n: number }>`select data_id || ':' || index_id as key, count(*)::int as n from idx_test_vectors group by 1`.execute(
    db,
  );
  return new Map(rows.map((r) => [r.key, Number(r.n)]));
}

describe.each(kinds)('indexing queue on $name', (kind) => {
  if (kind.skipReason) console.warn(`[skip] indexing queue on ${kind.name}: ${kind.skipReason}`);
  const run = kind.skipReason ? it.skip : it;
  let t: TestDb;
  beforeAll(async () => {
    if (!kind.skipReason) t = await kind.open();
  });
  afterAll(async () => {
    await t?.close();
  });

  run("enqueues inside the caller's transaction: a rollback leaves no item", async () => {
    const s = await seed(t.db, { n: 3 });
    await expect(
      t.db.transaction().execute(async (tx) => {
        await enqueue(tx, s.items);
        throw new Error('rolled back');
      }),
    ).rejects.toThrow('rolled back');
    expect((await queueRows(t.db)).filter((r) => r.collection_id === s.collectionId)).toHaveLength(0);
    await t.db.deleteFrom('collections').where('id', '=', s.collectionId).execute();
  });

  run('embeds every index through the gateway: each ends with exactly its vectors, progress says done', async () => {
    const s = await seed(t.db, { n: 40, indexesPer: 2 });
    await enqueue(t.db, s.items);
    const before = (await progress(t.db, { datasetId: s.datasetId }))[0]!;
    expect(before).toMatchObject({ collectionId: s.collectionId, queued: 40, indexing: 0, failed: 0, done: 0, total: 40, lastError: null });
    gw.sim.reset();
    const worker = new IndexingWorker({
      db: t.db,
      concurrency: 3,
      batchSize: 8,
      pollMs: 20,
      processors: { chunk: indexChunks(chunkDeps({ [s.datasetId]: 'sim-embed-384' })) },
    }).start();
    await eventually(async () => expect((await progress(t.db, { datasetId: s.datasetId }))[0]).toMatchObject({ queued: 0, indexing: 0, done: 40 }));
    await worker.stop();
    expect(gw.sim.stats().byModel['sim-embed-384']).toBe(5); // 40 items / 8 a batch: one embeddings call each
    const counts = await vectorCounts(t.db);
    const { rows: indexes } = await sql<{ key: string }>`select data_id || ':' || id as key from data_indexes where dataset_id = ${s.datasetId}`.execute(t.db);
    expect(indexes).toHaveLength(80);
    for (const { key } of indexes) expect(counts.get(key)).toBe(1);
    const v = await t.db.selectFrom('idx_test_vectors').select('vector').where('data_id', '=', s.dataIds[0]!).executeTakeFirstOrThrow();
    expect(v.vector).toHaveLength(384);
    expect((await queueRows(t.db)).filter((r) => r.collection_id === s.collectionId)).toHaveLength(0);
    // Indexed again (a data update): replaced, not duplicated.
    await enqueue(t.db, s.items.slice(0, 5));
    const again = new IndexingWorker({
      db: t.db,
      batchSize: 8,
      pollMs: 20,
      processors: { chunk: indexChunks(chunkDeps({ [s.datasetId]: 'sim-embed-384' })) },
    }).start();
    await eventually(async () => expect((await progress(t.db, { datasetId: s.datasetId }))[0]!.done).toBe(40));
    await again.stop();
    const after = await vectorCounts(t.db);
    for (const { key } of indexes) expect(after.get(key)).toBe(1);
  });

  run("after a short claim the worker lingers: items enqueued one by one go in as full batches of their mode's size", async () => {
    const s = await seed(t.db, { n: 21, vectorModel: 'linger' });
    const open = async () => (await queueRows(t.db)).filter((r) => r.collection_id === s.collectionId).length;
    gw.sim.reset();
    const worker = new IndexingWorker({
      db: t.db,
      concurrency: 1,
      batchSize: 2,
      batchSizes: { chunk: 10 },
      lingerMs: 1500,
      pollMs: 20,
      processors: { chunk: indexChunks(chunkDeps({ [s.datasetId]: 'sim-embed-384' })) },
    }).start();
    try {
      await enqueue(t.db, s.items.slice(0, 1));
      worker.wake();
      await eventually(async () => expect(worker.stats.done).toBe(1));
      // That claim came back short: the next waits out the linger, whatever wakes it meanwhile.
      for (const item of s.items.slice(1)) {
        await enqueue(t.db, [item]);
        worker.wake();
      }
      await eventually(async () => expect(worker.stats.done).toBe(21));
      expect(await open()).toBe(0);
    } finally {
      await worker.stop();
    }
    expect(gw.sim.stats().byModel['sim-embed-384']).toBe(3); // 1, then 10 and 10: not batches of 2, nor one per wake
  });

  run('`done` counts committed work only: whoever sees it grow finds those items gone from the queue', async () => {
    const s = await seed(t.db, { n: 60, vectorModel: 'committed' });
    await enqueue(t.db, s.items);
    const open = async () =>
      Number((await sql<{ n: number }>`select count(*)::int as n from training_queue where collection_id = ${s.collectionId}`.execute(t.db)).rows[0]!.n);
    // A processor that writes nothing: the only work in each transaction is the queue's own delete, so the commit is the race.
    const worker = new IndexingWorker({
      db: t.db,
      concurrency: 2,
      batchSize: 1,
      pollMs: 5,
      processors: { chunk: { prepare: async () => null, commit: async () => {} } },
    }).start();
    const seen: string[] = [];
    try {
      while (worker.stats.done < s.items.length) {
        const done = worker.stats.done;
        const left = await open();
        if (done + left > s.items.length) seen.push(`done ${done} while ${left} of ${s.items.length} still queued`);
      }
    } finally {
      await worker.stop();
    }
    expect(seen).toEqual([]);
    expect(await open()).toBe(0);
  });

  run('a lease that runs out is claimed again, and the first holder can no longer complete it', async () => {
    const s = await seed(t.db, { n: 2, vectorModel: 'lease' });
    await enqueue(t.db, s.items);
    const now = Date.now();
    const a = await claimItems(t.db, { workerId: 'A', limit: 10, leaseMs: 1000, modes: ['chunk'], now });
    expect(a.map((i) => i.dataId).sort()).toEqual([...s.dataIds].sort());
    expect(await claimItems(t.db, { workerId: 'B', limit: 10, leaseMs: 1000, modes: ['chunk'], now: now + 500 })).toEqual([]);
    expect((await progress(t.db, { datasetId: s.datasetId, now: now + 500 }))[0]).toMatchObject({ queued: 0, indexing: 2 });
    // After the lease: queued again (its worker is presumed dead) and B takes it.
    expect((await progress(t.db, { datasetId: s.datasetId, now: now + 1500 }))[0]).toMatchObject({ queued: 2, indexing: 0 });
    const b = await claimItems(t.db, { workerId: 'B', limit: 10, leaseMs: 1000, modes: ['chunk'], now: now + 1500 });
    expect(b.map((i) => i.id).sort()).toEqual(a.map((i) => i.id).sort());
    expect(b.every((i) => i.attempts === 0)).toBe(true);
    const lateA = await t.db.transaction().execute((tx) =>
      completeItems(
        tx,
        'A',
        a.map((i) => i.id),
      ),
    );
    expect(lateA.size).toBe(0);
    const byB = await t.db.transaction().execute((tx) =>
      completeItems(
        tx,
        'B',
        b.map((i) => i.id),
      ),
    );
    expect(byB.size).toBe(2);
  });

  run('a failing item shows the exact gateway error, fails after maxAttempts, and retryFailed brings it back', async () => {
    const s = await seed(t.db, { n: 3, vectorModel: 'no-such-model' });
    await enqueue(t.db, s.items);
    const models: Record<string, string> = { [s.datasetId]: 'no-such-model' };
    const opts = { db: t.db, batchSize: 10, pollMs: 10, maxAttempts: 2, backoffBaseMs: 10, backoffMaxMs: 20 };
    const worker = new IndexingWorker({ ...opts, processors: { chunk: indexChunks(chunkDeps(models)) } }).start();
    await eventually(async () => expect((await progress(t.db, { datasetId: s.datasetId }))[0]!.failed).toBe(3));
    await worker.stop();
    const rows = (await queueRows(t.db)).filter((r) => r.collection_id === s.collectionId);
    for (const r of rows) {
      expect(r.status).toBe('failed');
      expect(Number(r.attempts)).toBe(2);
      expect(r.error).toMatch(/^No available channel for model no-such-model under group default \(request id: \w+\)$/);
    }
    const p = (await progress(t.db, { datasetId: s.datasetId }))[0]!;
    expect(p).toMatchObject({ queued: 0, failed: 3, done: 0, total: 3 });
    expect(p.lastError).toBe(rows.at(-1)!.error);

    expect(await retryFailed(t.db, { collectionId: s.collectionId })).toBe(3);
    expect((await queueRows(t.db)).filter((r) => r.collection_id === s.collectionId).map((r) => [r.status, Number(r.attempts), r.error])).toEqual([
      ['queued', 0, null],
      ['queued', 0, null],
      ['queued', 0, null],
    ]);
    models[s.datasetId] = 'sim-embed-384'; // the operator fixed the model
    const fixed = new IndexingWorker({ ...opts, processors: { chunk: indexChunks(chunkDeps(models)) } }).start();
    await eventually(async () => expect((await progress(t.db, { datasetId: s.datasetId }))[0]).toMatchObject({ failed: 0, queued: 0, done: 3 }));
    await fixed.stop();
  });

  run('one bad item does not fail the rest of its batch', async () => {
    const s = await seed(t.db, { n: 6 });
    await enqueue(t.db, s.items);
    const bad = s.dataIds[2]!;
    const deps = chunkDeps(
      { [s.datasetId]: 'sim-embed-384' },
      {
        async writePostings(tx, items) {
          if (items.some((i) => i.dataId === bad)) throw new Error(`posting of ${bad} refused`);
          await testWriters.writePostings(tx, items);
        },
      },
    );
    const worker = new IndexingWorker({ db: t.db, batchSize: 6, pollMs: 10, maxAttempts: 1, processors: { chunk: indexChunks(deps) } }).start();
    await eventually(async () => expect((await progress(t.db, { datasetId: s.datasetId }))[0]).toMatchObject({ queued: 0, indexing: 0, failed: 1, done: 5 }));
    await worker.stop();
    const failed = (await queueRows(t.db)).filter((r) => r.collection_id === s.collectionId);
    expect(failed.map((r) => [r.data_id, r.error])).toEqual([[bad, `posting of ${bad} refused`]]);
    expect(await vectorCounts(t.db).then((c) => [...c.keys()].some((k) => k.startsWith(`${bad}:`)))).toBe(false);
  });

  run('without a vector model every waiting item says "no vector model configured" and starts once one is', async () => {
    const s = await seed(t.db, { n: 4 });
    const other = await seed(t.db, { n: 2 });
    await enqueue(t.db, [...s.items, ...other.items]);
    const noEmbed = new IndexingWorker({
      db: t.db,
      pollMs: 10,
      processors: { chunk: indexChunks({ vectorModelOf: () => 'sim-embed-384', ...testWriters }) },
    }).start();
    await eventually(async () => {
      const rows = (await queueRows(t.db)).filter((r) => [s.collectionId, other.collectionId].includes(r.collection_id));
      expect(rows.map((r) => [r.status, r.error])).toEqual(Array(6).fill(['queued', NO_VECTOR_MODEL]));
    });
    await noEmbed.stop();
    expect((await progress(t.db, { datasetId: s.datasetId }))[0]).toMatchObject({ queued: 4, done: 0, lastError: NO_VECTOR_MODEL });

    // A dataset whose model is not configured: its items say so (held back, no attempt counted); the other dataset proceeds.
    const partial = new IndexingWorker({
      db: t.db,
      pollMs: 10,
      unconfiguredRecheckMs: 60_000,
      processors: { chunk: indexChunks(chunkDeps((ds) => (ds === other.datasetId ? 'sim-embed-384' : undefined))) },
    }).start();
    await eventually(async () => expect((await progress(t.db, { datasetId: other.datasetId }))[0]!.done).toBe(2));
    await partial.stop();
    const held = (await queueRows(t.db)).filter((r) => r.collection_id === s.collectionId);
    expect(held.map((r) => [r.status, Number(r.attempts), r.error])).toEqual(Array(4).fill(['queued', 0, NO_VECTOR_MODEL]));
    expect(held.every((r) => Number(r.next_attempt_at) > Date.now() + 30_000)).toBe(true);

    // Configured now: a new worker wakes the held items at start instead of waiting out the recheck.
    const configured = new IndexingWorker({ db: t.db, pollMs: 10, processors: { chunk: indexChunks(chunkDeps(() => 'sim-embed-384')) } }).start();
    await eventually(async () => expect((await progress(t.db, { datasetId: s.datasetId }))[0]).toMatchObject({ queued: 0, done: 4, lastError: null }));
    await configured.stop();
  });

  run('progress counts queued, indexing and failed per collection, zero for an idle one', async () => {
    const s = await seed(t.db, { n: 5, vectorModel: 'progress' });
    const idle = await seed(t.db, { n: 0, teamId: s.teamId, datasetId: s.datasetId });
    await enqueue(t.db, s.items);
    const now = Date.now();
    const claimed = await claimItems(t.db, { workerId: 'P', limit: 2, leaseMs: 60_000, modes: ['chunk'], now });
    expect(claimed).toHaveLength(2);
    const list = await progress(t.db, { datasetId: s.datasetId, collectionIds: [s.collectionId, idle.collectionId] });
    expect(list).toEqual([
      {
        collectionId: s.collectionId,
        queued: 3,
        indexing: 2,
        failed: 0,
        done: 0,
        total: 5,
        lastError: null,
        rateLimited: 0,
        rateLimitedUntil: null,
        timeLeftSeconds: null,
        job: null,
      },
      {
        collectionId: idle.collectionId,
        queued: 0,
        indexing: 0,
        failed: 0,
        done: 0,
        total: 0,
        lastError: null,
        rateLimited: 0,
        rateLimitedUntil: null,
        timeLeftSeconds: null,
        job: null,
      },
    ]);
    // Deleting the collection removes its items with it.
    await t.db.deleteFrom('collections').where('id', '=', s.collectionId).execute();
    expect((await queueRows(t.db)).filter((r) => r.collection_id === s.collectionId)).toHaveLength(0);
  });
});
