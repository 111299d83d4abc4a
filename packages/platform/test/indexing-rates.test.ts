// How fast indexing goes, and what progress says is left (issue 34): the
// worker measures its own batches per model (batches side by side count their
// time once) and saves the rate; progress divides the open items up to a
// collection's last one by it; several workers' fresh rates add up, a probe
// stands in only until a worker measured; a collection being deleted has
// nothing waiting and holds no one up. On PGlite and PostgreSQL.
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { enqueue, indexChunks, IndexingWorker, progress, sumProgress } from '../src/indexing/index.js';
import { loadRates, openItems, PROBE_WORKER, rateKey, saveRate } from '../src/indexing/rate-store.js';
import { RateRecorder, type RateSample, WINDOW_MS } from '../src/indexing/rates.js';
import { eventually, pgliteKind, postgresKind, queueRows, seed, testWriters, type StoreKind, type TestDb } from './fixtures/indexing-stores.js';

describe('RateRecorder', () => {
  it('counts batches that ran side by side once, and saves a window once it covers WINDOW_MS of work', () => {
    const saved: RateSample[] = [];
    const r = new RateRecorder((s) => saved.push(s));
    // Two batches of 64 over the same 10 s, then one of 64 over the next 10 s: 192 items in 20 s of work.
    r.record('chunk', 'm', 64, 0, 10_000);
    r.record('chunk', 'm', 64, 500, 10_000);
    expect(saved).toEqual([]);
    r.record('chunk', 'm', 64, 10_000, 10_000 + WINDOW_MS / 2);
    expect(saved).toEqual([{ mode: 'chunk', model: 'm', itemsPerSecond: 192 / 20, items: 192, busyMs: 20_000 }]);
    // Another model is measured apart; a short stretch is saved when the queue goes quiet, a trivial one is not.
    r.record('chunk', 'other', 30, 0, 3000);
    r.record('chunk', 'm', 2, 30_000, 30_500);
    r.flush();
    expect(saved.slice(1)).toEqual([{ mode: 'chunk', model: 'other', itemsPerSecond: 10, items: 30, busyMs: 3000 }]);
  });
});

const kinds: StoreKind[] = [pgliteKind(), await postgresKind()];

for (const kind of kinds) {
  describe.skipIf(Boolean(kind.skipReason))(`indexing rates on '${kind.name}'`, () => {
    let t: TestDb;
    beforeAll(async () => {
      t = await kind.open();
    });
    afterAll(async () => {
      await t?.close();
      await kind.drop();
    });

    it('a worker saves the rate of its batches per model, and the probe stands in only until then', async () => {
      const model = `rate-${kind.name}`;
      await saveRate(t.db, { model, mode: 'chunk', workerId: PROBE_WORKER, itemsPerSecond: 50, items: 16, busyMs: 320 });
      expect((await loadRates(t.db, [{ mode: 'chunk', model }])).get(rateKey('chunk', model))).toMatchObject({ itemsPerSecond: 50, source: 'probe' });

      const s = await seed(t.db, { n: 40, vectorModel: model });
      await enqueue(t.db, s.items);
      const saved: RateSample[] = [];
      const embed = async (_: string, texts: string[]) => {
        await new Promise((r) => setTimeout(r, 600));
        return { vectors: texts.map(() => Float32Array.from([1, 0, 0])) };
      };
      const rates = new RateRecorder((r) => {
        saved.push(r);
        void saveRate(t.db, { ...r, workerId: worker.workerId });
      });
      const chunk = indexChunks({
        embed,
        vectorModelOf: () => model,
        ...testWriters,
        indexed: (m, n, startedAt) => rates.record('chunk', m, n, startedAt, Date.now()),
      });
      const worker = new IndexingWorker({ db: t.db, pollMs: 10, batchSize: 8, processors: { chunk }, quietMs: 50, onQuiet: async () => rates.flush() }).start();
      await eventually(async () => expect(saved.length).toBeGreaterThan(0), 20_000);
      await worker.stop();
      // 40 items, each batch of 8 taking at least 600 ms: at most 13.3 a second (about that), measured from the real batches.
      expect(saved[0]!.items).toBe(40);
      expect(saved[0]!.itemsPerSecond).toBeLessThanOrEqual(8 / 0.6);
      expect(saved[0]!.itemsPerSecond).toBeGreaterThan(4);
      await eventually(async () => {
        const rate = (await loadRates(t.db, [{ mode: 'chunk', model }])).get(rateKey('chunk', model));
        expect(rate).toMatchObject({ source: 'measured', itemsPerSecond: saved[0]!.itemsPerSecond });
      });
    });

    it("progress: time left is the open items up to the collection's last one over its model's rate; none before a rate", async () => {
      const model = `eta-${kind.name}`;
      const first = await seed(t.db, { n: 7, vectorModel: model });
      const second = await seed(t.db, { n: 5, teamId: first.teamId, datasetId: first.datasetId });
      await enqueue(t.db, first.items);
      await enqueue(t.db, second.items);
      const before = await progress(t.db, { datasetId: first.datasetId });
      expect(before.map((p) => p.timeLeftSeconds)).toEqual([null, null]);

      await saveRate(t.db, { model, mode: 'chunk', workerId: 'w1', itemsPerSecond: 2, items: 40, busyMs: 20_000 });
      // What is queued up to each collection's last item, whatever dataset it is of (other tests' leftovers included).
      const rows = await queueRows(t.db);
      const upTo = (ids: string[]) => {
        const last = Math.max(...rows.filter((r) => ids.includes(r.data_id)).map((r) => Number(r.id)));
        return rows.filter((r) => r.mode === 'chunk' && r.status !== 'failed' && Number(r.id) <= last).length;
      };
      const ahead = { first: upTo(first.dataIds), second: upTo(second.dataIds) };
      expect(ahead.second).toBeGreaterThanOrEqual(ahead.first + 5);
      const byId = async () => new Map((await progress(t.db, { datasetId: first.datasetId })).map((p) => [p.collectionId, p.timeLeftSeconds]));
      expect(await byId()).toEqual(
        new Map([
          [first.collectionId, Math.ceil(ahead.first / 2)],
          [second.collectionId, Math.ceil(ahead.second / 2)],
        ]),
      );
      expect(sumProgress(await progress(t.db, { datasetId: first.datasetId })).timeLeftSeconds).toBe(Math.ceil(ahead.second / 2));

      // A second worker measuring at the same time: the rates add up.
      await saveRate(t.db, { model, mode: 'chunk', workerId: 'w2', itemsPerSecond: 3, items: 60, busyMs: 20_000 });
      expect((await byId()).get(second.collectionId)).toBe(Math.ceil(ahead.second / 5));
      // An idle collection says nothing is left.
      const idle = await seed(t.db, { n: 0, teamId: first.teamId, datasetId: first.datasetId });
      expect((await progress(t.db, { datasetId: first.datasetId, collectionIds: [idle.collectionId] }))[0]!.timeLeftSeconds).toBeNull();
    });

    it("progress: a collection being deleted has nothing waiting, counts in no one's time left nor in what a new import waits behind, and its dataset says it is being deleted", async () => {
      const model = `del-${kind.name}`;
      const going = await seed(t.db, { n: 6, vectorModel: model });
      const staying = await seed(t.db, { n: 4, teamId: going.teamId, datasetId: going.datasetId });
      await enqueue(t.db, going.items);
      await enqueue(t.db, staying.items);
      await saveRate(t.db, { model, mode: 'chunk', workerId: 'w1', itemsPerSecond: 1, items: 40, busyMs: 20_000 });
      const of = (list: Awaited<ReturnType<typeof progress>>, id: string) => list.find((p) => p.collectionId === id)!;
      const before = await progress(t.db, { datasetId: going.datasetId });
      expect(sumProgress(before)).toMatchObject({ queued: 10, total: 10, deleting: 0 });
      const leftBefore = of(before, staying.collectionId).timeLeftSeconds!;
      const openBefore = await openItems(t.db, 'chunk');

      // The delete has started (datasets/jobs.ts writes this row first), none of its rows removed yet.
      await sql`insert into collection_jobs (collection_id, team_id, dataset_id, kind, done, total, owner, heartbeat_at, created_at)
        values (${going.collectionId}, ${going.teamId}, ${going.datasetId}, 'delete', 0, 6, 'test', ${Date.now()}, ${Date.now()})`.execute(t.db);
      const during = await progress(t.db, { datasetId: going.datasetId });
      expect(of(during, going.collectionId)).toMatchObject({
        queued: 0,
        indexing: 0,
        failed: 0,
        timeLeftSeconds: null,
        job: { kind: 'delete', done: 0, total: 6 },
      });
      // The other collection's items ahead of it no longer include the six that go.
      expect(of(during, staying.collectionId)).toMatchObject({ queued: 4, timeLeftSeconds: leftBefore - 6 });
      expect(sumProgress(during)).toMatchObject({ queued: 4, total: 4, deleting: 1, timeLeftSeconds: leftBefore - 6 });
      expect(await openItems(t.db, 'chunk')).toBe(openBefore - 6);
    });
  });
}
