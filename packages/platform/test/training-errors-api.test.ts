// The problem list and the retries over HTTP: getTrainingError (FastGPT's
// route, with kbchat's reason, attempts and next attempt), updateTrainingData
// for one item, retry of a whole knowledge base, bad input named, and another
// team's ids answering 404 without touching anything. The items fail for real:
// the dataset's LLM is the simulator's sim-500, behind a real gateway.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROOT_TOKEN, startTestGateway, type TestGateway } from '../../gateway/test/helpers.js';
import { apiKeyRow, newApiKey, newId } from '../src/keys/auth.js';
import { IndexingWorker, indexQa, type IndexingWorkerOptions } from '../src/indexing/index.js';
import { loadPlatformConfig, startPlatform, type PublicTrainingError, type RunningPlatform } from '../src/index.js';
import { eventually } from './fixtures/indexing-stores.js';

const KEY = 'kbchat-test-training-errors-key-0123';
let gw: TestGateway;
let p: RunningPlatform;
let otherKey: string;

async function call(path: string, o: { json?: unknown; method?: string; key?: string } = {}) {
  const res = await fetch(`${p.url}${path}`, {
    method: o.method ?? (o.json === undefined ? 'GET' : 'POST'),
    headers: { authorization: `Bearer ${o.key ?? KEY}`, ...(o.json === undefined ? {} : { 'content-type': 'application/json' }) },
    body: o.json === undefined ? undefined : JSON.stringify(o.json),
  });
  return { status: res.status, body: (await res.json()) as any };
}
const problems = async (collectionId: string, page: Record<string, number> = {}) =>
  (await call('/api/core/dataset/training/getTrainingError', { json: { collectionId, ...page } })).body.data as { list: PublicTrainingError[]; total: number };
const retryOne = (dataId: string, key?: string) => call('/api/core/dataset/training/updateTrainingData', { method: 'PUT', json: { dataId }, key });

/** The dataset's QA items run through sim-500 by a worker with the test's limits (the platform's own is stopped). */
async function runQa(o: Partial<IndexingWorkerOptions>, until: () => Promise<void>) {
  const worker = new IndexingWorker({
    db: p.services.store.db,
    pollMs: 10,
    backoffBaseMs: 10,
    ...o,
    processors: { qa: indexQa({ chat: (body) => p.services.gateway.chat(body), qaModelOf: () => 'sim-500', newId }) },
  }).start();
  try {
    await eventually(until, 20_000);
  } finally {
    await worker.stop();
  }
}

/** A QA collection of `n` passages in a new dataset whose LLM is sim-500. */
async function qaCollection(n: number): Promise<{ datasetId: string; collectionId: string }> {
  const datasetId = (await call('/api/core/dataset/create', { json: { name: 'failing', vectorModel: 'sim-embed-384', agentModel: 'sim-500' } })).body.data;
  const made = await call('/api/core/dataset/collection/create/text', {
    json: { datasetId, name: 'notes.md', text: 'Passage 0: the office opens at 8:30.', trainingType: 'qa' },
  });
  expect(made.status).toBe(200);
  const collectionId = made.body.data.collectionId;
  if (n > 1) {
    const data = Array.from({ length: n - 1 }, (_, i) => ({ q: `Passage ${i + 1}: room ${i + 1} is on floor ${i % 4}.` }));
    expect((await call('/api/core/dataset/data/pushData', { json: { collectionId, data, trainingType: 'qa' } })).status).toBe(200);
  }
  return { datasetId, collectionId };
}

beforeAll(async () => {
  // No auto-disable: after a few failures the gateway would take sim-500 off its channel, and the items would say "no channel" instead.
  gw = await startTestGateway({ config: { disableThreshold: 0 } });
  const dir = mkdtempSync(join(tmpdir(), 'kbchat-training-errors-'));
  const configPath = join(dir, 'config.json');
  writeFileSync(configPath, JSON.stringify({ llmModels: [{ model: 'sim-chat' }, { model: 'sim-500' }], vectorModels: [{ model: 'sim-embed-384' }] }));
  p = await startPlatform(
    loadPlatformConfig(
      { INITIAL_API_KEY: KEY },
      { host: '127.0.0.1', port: 0, dataDir: dir, databaseUrl: 'pglite:memory', configPath, gatewayUrl: gw.url, gatewayToken: ROOT_TOKEN },
    ),
  );
  await p.services.worker?.stop();
  const team = newId();
  await p.services.keys.insertTeam(team, 'other');
  otherKey = newApiKey();
  await p.services.keys.insertKey(apiKeyRow(otherKey, { teamId: team, appId: null, name: 'other', expiresAt: null }));
}, 90_000);
afterAll(async () => {
  await p?.close();
  await gw?.close();
});

describe('getTrainingError and the retries', () => {
  it('lists failed items paged, each with its reason, attempts of the limit and exact message', async () => {
    const { collectionId } = await qaCollection(25);
    await runQa({ maxAttempts: 2 }, async () =>
      expect((await problems(collectionId, { pageSize: 100 })).list.filter((i) => i.status === 'failed')).toHaveLength(25),
    );

    const pages = [
      await problems(collectionId, { pageSize: 10 }),
      await problems(collectionId, { pageSize: 10, offset: 10 }),
      await problems(collectionId, { pageSize: 10, pageNum: 3 }),
    ];
    expect(pages.map((pg) => [pg.total, pg.list.length])).toEqual([
      [25, 10],
      [25, 10],
      [25, 5],
    ]);
    const all = pages.flatMap((pg) => pg.list);
    expect(all.map((i) => i.q)).toEqual([
      'Passage 0: the office opens at 8:30.',
      ...Array.from({ length: 24 }, (_, i) => `Passage ${i + 1}: room ${i + 1} is on floor ${i % 4}.`),
    ]);
    expect(all[3]).toMatchObject({
      collectionId,
      mode: 'qa',
      dataId: null,
      chunkIndex: 2,
      status: 'failed',
      reason: 'upstream_error',
      attempts: 2,
      maxAttempts: 2,
      retryCount: 0,
      nextAttemptAt: null,
    });
    expect(all[3]!.errorMsg).toMatch(/^internal upstream failure \(request id: \w+\)$/);
    expect((await call(`/api/core/dataset/collection/trainingDetail?collectionId=${collectionId}`)).body.data).toMatchObject({
      failed: 25,
      queued: 0,
      rateLimited: 0,
    });

    for (const [body, field] of [
      [{ collectionId, pageSize: 0 }, 'pageSize'],
      [{ pageSize: 5 }, 'collectionId'],
      [{ collectionId, offset: -1 }, 'offset'],
    ] as const) {
      const r = await call('/api/core/dataset/training/getTrainingError', { json: body });
      expect(r.status).toBe(400);
      expect(r.body.message).toContain(`'${field}'`);
    }
  });

  it("retries one item, or every failed one of the knowledge base; another team's ids are 404 and change nothing", async () => {
    const { datasetId, collectionId } = await qaCollection(3);
    await runQa({ maxAttempts: 1 }, async () => expect((await problems(collectionId)).list.filter((i) => i.status === 'failed')).toHaveLength(3));
    const [first, second] = (await problems(collectionId)).list;

    const foreign = await call('/api/core/dataset/training/getTrainingError', { json: { collectionId }, key: otherKey });
    expect([foreign.status, foreign.body.message]).toEqual([404, `Collection ${collectionId} not found`]);
    expect((await retryOne(second!._id, otherKey)).status).toBe(404);
    expect((await call('/api/core/dataset/training/updateTrainingData', { method: 'PUT', json: { collectionId }, key: otherKey })).status).toBe(404);
    expect((await call('/api/core/dataset/training/retry', { json: { datasetId }, key: otherKey })).status).toBe(404);
    expect((await problems(collectionId)).list.map((i) => i.status)).toEqual(['failed', 'failed', 'failed']);

    expect((await retryOne('not-an-item')).status).toBe(404);
    expect((await retryOne('999999999')).status).toBe(404);
    const none = await call('/api/core/dataset/training/updateTrainingData', { method: 'PUT', json: {} });
    expect([none.status, none.body.message]).toEqual([400, expect.stringContaining("'dataId'")]);
    const edit = await call('/api/core/dataset/training/updateTrainingData', { method: 'PUT', json: { dataId: first!._id, q: 'new text' } });
    expect([edit.status, edit.body.message]).toEqual([400, expect.stringContaining("'q'")]);

    expect(await retryOne(first!._id)).toMatchObject({ status: 200, body: { data: { retried: 1 } } });
    expect((await problems(collectionId)).list.map((i) => i._id)).not.toContain(first!._id);
    expect((await call(`/api/core/dataset/collection/trainingDetail?collectionId=${collectionId}`)).body.data).toMatchObject({ queued: 1, failed: 2 });

    // "Retry all failed" of the knowledge base: the other two, attempts from zero.
    expect((await call('/api/core/dataset/training/retry', { json: { datasetId } })).body.data).toEqual({ retried: 2 });
    expect(await problems(collectionId)).toEqual({ list: [], total: 0 });
    expect((await call(`/api/core/dataset/collection/trainingDetail?collectionId=${collectionId}`)).body.data).toMatchObject({ queued: 3, failed: 0 });
  });

  it('a waiting item shows its next attempt; retrying it makes it due now and keeps what it said', async () => {
    const { collectionId } = await qaCollection(1);
    await runQa({ maxAttempts: 3, backoffBaseMs: 60_000 }, async () => expect((await problems(collectionId)).list[0]?.attempts).toBe(1));
    const [item] = (await problems(collectionId)).list;
    expect(item).toMatchObject({ status: 'waiting', reason: 'upstream_error', attempts: 1, maxAttempts: 3, retryCount: 2 });
    expect(Date.parse(item!.nextAttemptAt!) - Date.parse(item!.updateTime)).toBe(60_000);

    const before = Date.now();
    expect((await retryOne(item!._id)).status).toBe(200);
    const [after] = (await problems(collectionId)).list;
    expect(after).toMatchObject({ _id: item!._id, status: 'waiting', attempts: 1, errorMsg: item!.errorMsg });
    expect(Date.parse(after!.nextAttemptAt!)).toBeGreaterThanOrEqual(before - 1);
    expect(Date.parse(after!.nextAttemptAt!)).toBeLessThan(Date.parse(item!.nextAttemptAt!));
  });
});
