// A restart on the embedded store: the items the dead process had leased are
// given back at start, not left showing "indexing" until their leases lapse
// (60 s). Only there: on a store other workers share, a lease is left alone.
import { afterAll, describe, expect, it } from 'vitest';
import { DatasetsStore } from '../src/datasets/store.js';
import { GatewayClient } from '../src/gateway-client/index.js';
import { claimItems, enqueue, IndexingWorker, NO_VECTOR_MODEL, progress, type BatchProcessor } from '../src/indexing/index.js';
import { createIndexingWorker } from '../src/indexing/wiring.js';
import type { ModelConfig } from '../src/models/config-file.js';
import { eventually, pgliteKind, queueRows, seed, type TestDb } from './fixtures/indexing-stores.js';

const LEASE_MS = 60_000;
let store: TestDb | undefined;
afterAll(async () => {
  await store?.close();
});

/** The store's queue emptied, then `n` items leased for a minute by a process that is gone. */
async function storeWithDeadLeases(n: number) {
  store ??= await pgliteKind().open();
  const db = store.db;
  await db.deleteFrom('training_queue').execute();
  const s = await seed(db, { n });
  await enqueue(db, s.items);
  const claimed = await claimItems(db, { workerId: 'dead-process', limit: n, leaseMs: LEASE_MS, modes: ['chunk'] });
  expect(claimed).toHaveLength(n);
  return { db, s };
}

const done: number[] = [];
const recorder: BatchProcessor<null> = {
  async prepare() {
    return null;
  },
  async commit(_tx, items) {
    done.push(...items.map((i) => i.id));
  },
};

describe('a sole worker at start (the embedded store)', () => {
  it('indexes the items a dead process had leased at once', async () => {
    const { db } = await storeWithDeadLeases(5);
    const started = Date.now();
    const worker = new IndexingWorker({ db, soleWorker: true, pollMs: 20, processors: { chunk: recorder } }).start();
    try {
      await eventually(async () => expect(await queueRows(db)).toHaveLength(0), 5000);
      expect(Date.now() - started).toBeLessThan(LEASE_MS / 10);
      expect(worker.stats.done).toBe(5);
    } finally {
      await worker.stop();
    }
  });

  it("leaves other workers' leases alone when it may not be the only one", async () => {
    const { db } = await storeWithDeadLeases(3);
    const worker = new IndexingWorker({ db, pollMs: 20, processors: { chunk: recorder } }).start();
    try {
      await new Promise((r) => setTimeout(r, 300));
      const rows = await queueRows(db);
      expect(rows.map((r) => [r.status, r.lease_owner])).toEqual(Array(3).fill(['leased', 'dead-process']));
      expect(worker.stats.done).toBe(0);
    } finally {
      await worker.stop();
    }
  });
});

describe("the platform's worker (createIndexingWorker)", () => {
  // No models: nothing is claimed again, so what start did to the leases stays visible.
  const models: ModelConfig = { llmModels: [], vectorModels: [], reRankModels: [], systemEnv: { vectorMaxProcess: 1, qaMaxProcess: 1, hnswEfSearch: 100 } };
  const gateway = new GatewayClient({ url: 'http://127.0.0.1:9' });
  afterAll(() => gateway.close());

  for (const embeddedStore of [true, false]) {
    it(`${embeddedStore ? 'gives back' : 'keeps'} a dead process's leases at start ${embeddedStore ? 'on' : 'off'} the embedded store`, async () => {
      const { db, s } = await storeWithDeadLeases(4);
      const failures: unknown[] = [];
      const worker = createIndexingWorker(db, new DatasetsStore(db), gateway, models, (err) => failures.push(err), { embeddedStore }).start();
      try {
        const expected = embeddedStore ? { queued: 4, indexing: 0 } : { queued: 0, indexing: 4 };
        await eventually(async () => {
          const [p] = await progress(db, { datasetId: s.datasetId, collectionIds: [s.collectionId] });
          expect(p).toMatchObject(expected);
          if (embeddedStore) expect((await queueRows(db)).map((r) => r.error)).toEqual(Array(4).fill(NO_VECTOR_MODEL));
        }, 5000);
        if (!embeddedStore) {
          await new Promise((r) => setTimeout(r, 300));
          expect((await queueRows(db)).every((r) => r.status === 'leased')).toBe(true);
        }
        expect(failures).toEqual([]);
      } finally {
        await worker.stop();
      }
    });
  }
});
