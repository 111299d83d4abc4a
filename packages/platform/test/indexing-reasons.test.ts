// Why an item waits or failed, as the worker records it and the problem list
// reads it: each reason produced for real (a real gateway in front of the
// upstream simulator, PGlite), with its attempts, the attempt limit and the
// next attempt; then the list's paging, the one-item retry and team scoping.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROOT_TOKEN, SIM_MODELS, startTestGateway, type TestGateway } from '../../gateway/test/helpers.js';
import { GatewayClient } from '../src/gateway-client/index.js';
import {
  claimItems,
  enqueue,
  failItems,
  indexChunks,
  IndexingWorker,
  indexQa,
  listProblems,
  markWaiting,
  NO_VECTOR_MODEL,
  progress,
  retryItem,
  type IndexingWorkerOptions,
} from '../src/indexing/index.js';
import { eventually, pgliteKind, queueRows, seed, testWriters, type Seeded, type TestDb } from './fixtures/indexing-stores.js';

let gw: TestGateway;
let client: GatewayClient;
let t: TestDb;
let ids = 0;

beforeAll(async () => {
  // sim-ghost: a channel lists it, the simulator answers 404 "does not exist" (a model gone upstream).
  // No auto-disable: the gateway would take a failing model off its channel, and its items would say "no channel".
  [gw, t] = await Promise.all([startTestGateway({ models: [...SIM_MODELS, 'sim-ghost'], config: { disableThreshold: 0 } }), pgliteKind().open()]);
  client = new GatewayClient({ url: gw.url, token: ROOT_TOKEN });
});
afterAll(async () => {
  await client?.close();
  await gw?.close();
  await t?.close();
});

const problems = (s: Pick<Seeded, 'teamId' | 'collectionId'>, offset = 0, limit = 50) =>
  listProblems(t.db, { teamId: s.teamId, collectionId: s.collectionId, offset, limit });

const chunkWith = (model: string | undefined, c = client) => indexChunks({ embed: (m, x) => c.embeddings(m, x), vectorModelOf: () => model, ...testWriters });
const qaWith = (model: string) => indexQa({ chat: (body) => client.chat(body), qaModelOf: () => model, newId: () => `qa${++ids}` });

/** Runs a worker until `check` passes, then stops it. */
async function runUntil(processors: IndexingWorkerOptions['processors'], check: () => Promise<void>, o: Partial<IndexingWorkerOptions> = {}) {
  const worker = new IndexingWorker({ db: t.db, pollMs: 10, backoffBaseMs: 10, ...o, processors }).start();
  try {
    await eventually(check, 20_000);
  } finally {
    await worker.stop();
  }
}

async function qaSeed(text = 'The office opens at 8:30.'): Promise<Seeded> {
  const s = await seed(t.db, { n: 0 });
  await enqueue(t.db, [
    { teamId: s.teamId, datasetId: s.datasetId, collectionId: s.collectionId, mode: 'qa', payload: JSON.stringify({ text, chunkIndex: 7 }) },
  ]);
  return s;
}

describe('the reason of each problem item', () => {
  it('upstream_error: a model call that fails upstream, counted up to the limit, then failed with the exact message', async () => {
    const s = await qaSeed();
    // A long backoff holds the item after its first attempt: "attempt 1 of 3", next attempt a minute away.
    await runUntil({ qa: qaWith('sim-500') }, async () => expect((await problems(s)).list[0]?.attempts).toBe(1), { maxAttempts: 3, backoffBaseMs: 60_000 });
    const [waiting] = (await problems(s)).list;
    expect(waiting).toMatchObject({
      status: 'waiting',
      reason: 'upstream_error',
      attempts: 1,
      maxAttempts: 3,
      chunkIndex: 7,
      preview: 'The office opens at 8:30.',
      mode: 'qa',
    });
    expect(waiting!.nextAttemptAt! - waiting!.updatedAt).toBe(60_000);
    expect(waiting!.error).toMatch(/\(request id: \w+\)$/);

    await retryItem(t.db, { teamId: s.teamId, id: waiting!.id }); // due now, attempts kept
    await runUntil({ qa: qaWith('sim-500') }, async () => expect((await problems(s)).list[0]?.status).toBe('failed'), { maxAttempts: 3 });
    const [failed] = (await problems(s)).list;
    expect(failed).toMatchObject({ status: 'failed', reason: 'upstream_error', attempts: 3, maxAttempts: 3, nextAttemptAt: null });
    const withoutId = (e: string) => e.replace(/\(request id: \w+\)$/, '');
    expect(withoutId(failed!.error)).toBe(withoutId(waiting!.error));
  });

  it('parse_failure: an answer with no question/answer pairs', async () => {
    const s = await qaSeed();
    await runUntil({ qa: qaWith('sim-chat') }, async () => expect((await problems(s)).list[0]?.status).toBe('failed'), { maxAttempts: 1 });
    const [item] = (await problems(s)).list;
    expect(item).toMatchObject({ reason: 'parse_failure', attempts: 1, maxAttempts: 1 });
    expect(item!.error).toMatch(/^the model sim-chat gave no question\/answer pairs; its answer began: /);
  });

  it('model_missing: not configured (held without an attempt), no channel in the gateway, or gone upstream (404)', async () => {
    const unconfigured = await seed(t.db, { n: 2 });
    await enqueue(t.db, unconfigured.items);
    await runUntil({ chunk: chunkWith(undefined) }, async () => expect((await problems(unconfigured)).total).toBe(2), { unconfiguredRecheckMs: 60_000 });
    for (const p of (await problems(unconfigured)).list) {
      expect(p).toMatchObject({ status: 'waiting', reason: 'model_missing', error: NO_VECTOR_MODEL, attempts: 0, maxAttempts: 5 });
      expect(p.nextAttemptAt!).toBeGreaterThan(Date.now() + 50_000);
      expect(p.preview).toMatch(/^question \d about topic \d$/);
    }

    const noChannel = await seed(t.db, { n: 1 });
    await enqueue(t.db, noChannel.items);
    await runUntil({ chunk: chunkWith('sim-embed-nowhere') }, async () => expect((await problems(noChannel)).list[0]?.status).toBe('failed'), {
      maxAttempts: 1,
    });
    expect((await problems(noChannel)).list[0]).toMatchObject({ reason: 'model_missing', chunkIndex: 0, dataId: noChannel.dataIds[0] });
    expect((await problems(noChannel)).list[0]!.error).toMatch(/^No available channel for model sim-embed-nowhere/);

    const gone = await seed(t.db, { n: 1 });
    await enqueue(t.db, gone.items);
    await runUntil({ chunk: chunkWith('sim-ghost') }, async () => expect((await problems(gone)).list[0]?.status).toBe('failed'), { maxAttempts: 1 });
    expect((await problems(gone)).list[0]).toMatchObject({ reason: 'model_missing' });
    expect((await problems(gone)).list[0]!.error).toMatch(/sim-ghost/);
  });

  it('other: our own side failing (a store write)', async () => {
    const s = await seed(t.db, { n: 1 });
    await enqueue(t.db, s.items);
    const broken = indexChunks({
      embed: (m, x) => client.embeddings(m, x),
      vectorModelOf: () => 'sim-embed-384',
      ...testWriters,
      writeVectors: async () => {
        throw new Error('disk full');
      },
    });
    await runUntil({ chunk: broken }, async () => expect((await problems(s)).list[0]?.status).toBe('failed'), { maxAttempts: 1 });
    expect((await problems(s)).list[0]).toMatchObject({ reason: 'other', error: 'disk full' });
  });

  it('rate_limited: held without an attempt; progress counts them with their earliest next attempt', async () => {
    const limited = await startTestGateway({ sim: { rpm: 1 } });
    const c = new GatewayClient({ url: limited.url, token: ROOT_TOKEN });
    try {
      const s = await seed(t.db, { n: 4 });
      await enqueue(t.db, s.items);
      // The first batch uses the minute's one request; the second is refused and waits 30 s.
      await runUntil({ chunk: chunkWith('sim-embed-384', c) }, async () => expect((await problems(s)).total).toBe(2), {
        batchSize: 2,
        rateLimitBaseMs: 30_000,
      });
      const list = (await problems(s)).list;
      for (const p of list) {
        expect(p).toMatchObject({ status: 'waiting', reason: 'rate_limited', attempts: 0 });
        expect(p.error).toMatch(/^rate limited, waiting 30 s before trying again: Rate limit reached: 1 requests per minute/);
      }
      const earliest = Math.min(...list.map((p) => p.nextAttemptAt!));
      expect(earliest).toBeGreaterThan(Date.now() + 20_000);
      const [p] = await progress(t.db, { datasetId: s.datasetId });
      expect(p).toMatchObject({ queued: 2, done: 2, rateLimited: 2, rateLimitedUntil: new Date(earliest).toISOString() });
      // Once that time has passed they are due, no longer held by the limit.
      expect((await progress(t.db, { datasetId: s.datasetId, now: earliest + 1 }))[0]).toMatchObject({ rateLimited: 0, rateLimitedUntil: null });
    } finally {
      await c.close();
      await limited.close();
    }
  });
});

describe('the problem list and the one-item retry', () => {
  it('pages failed items first, then waiting ones, with a total; other collections and teams see none of them', async () => {
    const s = await seed(t.db, { n: 25 });
    await enqueue(t.db, s.items);
    // 5 items fail for good (one attempt allowed), 20 wait on a missing model.
    const claimed = await claimItems(t.db, { workerId: 'w', limit: 5, leaseMs: 60_000, modes: ['chunk'] });
    expect(claimed.every((i) => i.collectionId === s.collectionId)).toBe(true);
    await failItems(
      t.db,
      'w',
      claimed.map((i) => i.id),
      { error: 'upstream broke', reason: 'upstream_error', maxAttempts: 1, backoffBaseMs: 1, backoffMaxMs: 1 },
    );
    // Held for an hour, so that no later claim of this file takes them.
    await markWaiting(t.db, { mode: 'chunk', error: NO_VECTOR_MODEL, datasetId: s.datasetId, nextAttemptAt: Date.now() + 3_600_000 });

    const pages = [await problems(s, 0, 10), await problems(s, 10, 10), await problems(s, 20, 10)];
    expect(pages.map((p) => p.total)).toEqual([25, 25, 25]);
    expect(pages.map((p) => p.list.length)).toEqual([10, 10, 5]);
    const all = pages.flatMap((p) => p.list);
    expect(new Set(all.map((p) => p.id)).size).toBe(25);
    expect(all.slice(0, 5).map((p) => [p.status, p.reason, p.attempts, p.maxAttempts])).toEqual(Array(5).fill(['failed', 'upstream_error', 1, 1]));
    expect(all.slice(5).every((p) => p.status === 'waiting' && p.reason === 'model_missing')).toBe(true);
    expect(all.map((p) => p.chunkIndex)).toEqual(Array.from({ length: 25 }, (_, i) => i));

    expect(await listProblems(t.db, { teamId: 'another-team', collectionId: s.collectionId, offset: 0, limit: 50 })).toEqual({ list: [], total: 0 });
    const other = await seed(t.db, { n: 0, teamId: s.teamId, datasetId: s.datasetId });
    expect((await problems(other)).total).toBe(0);
  });

  it('retries one item: a failed one starts over, a waiting one is due now and keeps its reason; held, gone or foreign ones are not touched', async () => {
    const s = await seed(t.db, { n: 3 });
    await enqueue(t.db, s.items);
    const [a, b, c] = await claimItems(t.db, { workerId: 'w', limit: 3, leaseMs: 60_000, modes: ['chunk'] });
    expect([a, b, c].map((i) => i?.collectionId)).toEqual(Array(3).fill(s.collectionId));
    await failItems(t.db, 'w', [a!.id], { error: 'upstream broke', reason: 'upstream_error', maxAttempts: 1, backoffBaseMs: 1, backoffMaxMs: 1 });
    await failItems(t.db, 'w', [b!.id], { error: 'upstream broke', reason: 'upstream_error', maxAttempts: 5, backoffBaseMs: 60_000, backoffMaxMs: 60_000 });

    expect(await retryItem(t.db, { teamId: 'another-team', id: a!.id })).toBe('missing');
    expect(await retryItem(t.db, { teamId: s.teamId, id: a!.id, collectionId: 'another-collection' })).toBe('missing');
    expect(await retryItem(t.db, { teamId: s.teamId, id: 987654321 })).toBe('missing');
    expect(await retryItem(t.db, { teamId: s.teamId, id: c!.id })).toBe('busy'); // a worker holds it
    expect((await queueRows(t.db)).find((r) => r.id === a!.id)).toMatchObject({ status: 'failed' });

    const before = Date.now();
    expect(await retryItem(t.db, { teamId: s.teamId, id: a!.id })).toBe('retried');
    expect(await retryItem(t.db, { teamId: s.teamId, id: b!.id })).toBe('retried');
    const rows = await queueRows(t.db);
    expect(rows.find((r) => r.id === a!.id)).toMatchObject({ status: 'queued', attempts: 0, error: null, reason: null });
    expect(rows.find((r) => r.id === b!.id)).toMatchObject({ status: 'queued', attempts: 1, error: 'upstream broke', reason: 'upstream_error' });
    for (const id of [a!.id, b!.id]) expect(Number(rows.find((r) => r.id === id).next_attempt_at)).toBeGreaterThanOrEqual(before);
    // The failed one left the list (nothing wrong with it now); the waiting one is still there, due now.
    expect((await problems(s)).list.map((p) => p.id)).toEqual([b!.id]);
  });
});
