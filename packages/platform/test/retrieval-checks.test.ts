// Saved retrieval checks over HTTP: a real gateway in front of the upstream
// simulator, the platform on PGlite with its indexing worker. Checks are made,
// edited and refused by name; runs are stored with the dataset's chunking and
// compared with the run before: a chunk deleted turns a passing check red, a
// new chunk pushes an expected one down a rank; runs are bounded per dataset.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROOT_TOKEN, startTestGateway, type TestGateway } from '../../gateway/test/helpers.js';
import { loadPlatformConfig, startPlatform, type RunningPlatform } from '../src/index.js';
import { apiKeyRow } from '../src/keys/auth.js';
import { diffRuns } from '../src/retrieval-checks/diff.js';
import { RUNS_KEPT } from '../src/retrieval-checks/service.js';
import { apiCaller } from './api-caller.js';

const KEY = 'kbchat-test-checks-key-0123456789';
const OTHER_KEY = 'kbchat-test-checks-other-0123456789';
const FULL_TEXT = { searchMode: 'fullTextRecall' };

describe('retrieval checks', () => {
  let gw: TestGateway;
  let p: RunningPlatform;
  let datasetId: string;
  let collectionId: string;
  const call = apiCaller(() => p.url, KEY);
  const waitIndexed = async (id: string) => {
    const until = Date.now() + 30_000;
    for (;;) {
      const d = (await call(`/api/core/dataset/trainingDetail?datasetId=${id}`)).body.data;
      if (d.total > 0 && d.done === d.total) return;
      if (d.failed > 0 || Date.now() > until) throw new Error(`indexing did not finish: ${JSON.stringify(d)}`);
      await new Promise((r) => setTimeout(r, 100));
    }
  };
  const create = async (body: Record<string, unknown>) => call('/api/core/dataset/check/create', { datasetId, settings: FULL_TEXT, ...body });
  const run = async () => {
    const r = await call('/api/core/dataset/check/run', { datasetId, wait: true });
    expect(r.status).toBe(200);
    return r.body.data;
  };

  beforeAll(async () => {
    gw = await startTestGateway();
    const dir = mkdtempSync(join(tmpdir(), 'kbchat-checks-'));
    const configPath = join(dir, 'config.json');
    writeFileSync(
      configPath,
      JSON.stringify({
        llmModels: [{ model: 'sim-chat' }],
        vectorModels: [{ model: 'sim-embed-384', defaultToken: 200, maxToken: 512 }],
        reRankModels: [{ model: 'sim-rerank' }],
      }),
    );
    p = await startPlatform(
      loadPlatformConfig(
        { INITIAL_API_KEY: KEY },
        { host: '127.0.0.1', port: 0, dataDir: dir, databaseUrl: 'pglite:memory', configPath, gatewayUrl: gw.url, gatewayToken: ROOT_TOKEN },
      ),
    );
    datasetId = (await call('/api/core/dataset/create', { name: 'geo', vectorModel: 'sim-embed-384' })).body.data;
    const text = [
      '# Volcanoes\n\nMount Etna is an active volcano on the east coast of Sicily.',
      '# Glaciers\n\nThe Aletsch glacier is the largest glacier in the Alps.',
      '# Deserts\n\nThe Atacama desert in Chile is one of the driest places on Earth.',
    ].join('\n\n');
    collectionId = (await call('/api/core/dataset/collection/create/text', { datasetId, name: 'geo.md', text, chunkSize: 40 })).body.data.collectionId;
    await waitIndexed(datasetId);
    await p.services.keys.insertTeam('otherchecksteam000000000', 'other');
    await p.services.keys.insertKey(apiKeyRow(OTHER_KEY, { teamId: 'otherchecksteam000000000', appId: null, name: 'other', expiresAt: null }));
  }, 90_000);
  afterAll(async () => {
    await p?.close();
    await gw?.close();
  });

  it('refuses bad input with a 400 naming the field, and keeps what was stored', async () => {
    const cases: [Record<string, unknown>, RegExp][] = [
      [{ question: '  ', expected: [{ text: 'Etna' }] }, /'question'/],
      [{ question: 'q', expected: [] }, /'expected'.*at least one/],
      [{ question: 'q', expected: [{ label: 'only a label' }] }, /'expected\[0\]\.text'/],
      [{ question: 'q', expected: [{ text: 'Etna', colour: 'red' }] }, /'expected\[0\]\.colour': unknown field/],
      [{ question: 'q', expected: [{ text: 'Etna' }], settings: { searchMode: 'psychic' } }, /'settings\.searchMode'/],
      [{ question: 'q', expected: [{ text: 'Etna' }], settings: { similarity: 2 } }, /'settings\.similarity'/],
      [{ question: 'q', expected: [{ text: 'Etna' }], settings: { usingReRank: true, rerankModel: 'nowhere' } }, /'settings\.rerankModel'.*nowhere/],
      [{ question: 'q', expected: [{ collectionId: 'nosuchcollection' }] }, /'expected\[0\]\.collectionId'/],
      [{ question: 'q', expected: [{ text: 'x' }, { dataId: 'nosuchdata' }] }, /'expected\[1\]\.dataId'/],
    ];
    for (const [body, message] of cases) {
      const r = await create(body);
      expect(r.status, JSON.stringify(body)).toBe(400);
      expect(r.body.message).toMatch(message);
    }
    expect((await call('/api/core/dataset/check/create', { datasetId: 'nope', question: 'q', expected: [{ text: 'x' }] })).status).toBe(404);
    expect((await call(`/api/core/dataset/check/list?datasetId=${datasetId}`)).body.data).toEqual([]);
    const noChecks = await call('/api/core/dataset/check/run', { datasetId });
    expect(noChecks.status).toBe(400);
    expect(noChecks.body.message).toMatch(/'datasetId'.*no checks/);
    expect((await call('/api/core/dataset/check/run')).body.message).toMatch(/'id'/);

    const id = (await create({ question: 'Which volcano is active?', expected: [{ text: 'Mount Etna' }] })).body.data;
    const badUpdate = await call('/api/core/dataset/check/update', { id, expected: [{ text: '' }] }, 'PUT');
    expect(badUpdate.status).toBe(400);
    expect(badUpdate.body.message).toMatch(/'expected\[0\]\.text'/);
    expect((await call(`/api/core/dataset/check/detail?id=${id}`)).body.data.expected).toEqual([{ text: 'Mount Etna' }]);
    expect((await call(`/api/core/dataset/check/delete?id=${id}`, undefined, 'DELETE')).status).toBe(200);
  });

  it('creates, reads, edits and deletes checks, each team seeing only its own', async () => {
    const made = await create({
      question: 'Where is the Aletsch glacier?',
      expected: [{ text: 'largest glacier', collectionId, label: 'geo.md' }],
      settings: { searchMode: 'mixedRecall', limit: 800 },
    });
    expect(made.status).toBe(200);
    const id = made.body.data;
    const detail = (await call(`/api/core/dataset/check/detail?id=${id}`)).body.data;
    expect(detail).toMatchObject({
      _id: id,
      datasetId,
      question: 'Where is the Aletsch glacier?',
      expected: [{ text: 'largest glacier', collectionId, label: 'geo.md' }],
    });
    // searchTest's defaults fill what was not sent.
    expect(detail.settings).toEqual({ searchMode: 'mixedRecall', limit: 800, similarity: 0, usingReRank: false, datasetSearchUsingExtensionQuery: false });
    const updated = await call('/api/core/dataset/check/update', { id, question: 'Which glacier is the largest in the Alps?' }, 'PUT');
    expect(updated.body.data).toMatchObject({ question: 'Which glacier is the largest in the Alps?', settings: { searchMode: 'mixedRecall' } });

    // The other team: 404 for every id of this one, and its own list of this dataset refused.
    expect((await call(`/api/core/dataset/check/detail?id=${id}`, undefined, 'GET', OTHER_KEY)).status).toBe(404);
    expect((await call('/api/core/dataset/check/update', { id, question: 'mine now' }, 'PUT', OTHER_KEY)).status).toBe(404);
    expect((await call(`/api/core/dataset/check/delete?id=${id}`, undefined, 'DELETE', OTHER_KEY)).status).toBe(404);
    expect((await call(`/api/core/dataset/check/list?datasetId=${datasetId}`, undefined, 'GET', OTHER_KEY)).status).toBe(404);
    expect((await call('/api/core/dataset/check/run', { datasetId }, 'POST', OTHER_KEY)).status).toBe(404);
    expect((await call(`/api/core/dataset/check/run?datasetId=${datasetId}`, undefined, 'GET', OTHER_KEY)).status).toBe(404);
    expect((await call(`/api/core/dataset/check/detail?id=${id}`)).body.data.question).toBe('Which glacier is the largest in the Alps?');

    const list = (await call(`/api/core/dataset/check/list?datasetId=${datasetId}`)).body.data;
    expect(list.map((c: { id: string }) => c.id)).toEqual([id]);
    expect((await call(`/api/core/dataset/check/delete?id=${id}`, undefined, 'DELETE')).status).toBe(200);
    expect((await call(`/api/core/dataset/check/detail?id=${id}`)).status).toBe(404);
  });

  it('runs every check, then shows what a deleted chunk and a new one changed', async () => {
    const etna = (await create({ question: 'active volcano Sicily', expected: [{ text: 'mount  ETNA is an active volcano' }] })).body.data;
    const aletsch = (await create({ question: 'glacier Alps', expected: [{ text: 'Aletsch' }] })).body.data;
    const atacama = (await create({ question: 'driest desert', expected: [{ text: 'Atacama' }, { text: 'Sahara' }] })).body.data;

    const first = await run();
    expect(first.run).toMatchObject({
      status: 'done',
      total: 3,
      done: 3,
      passed: 2,
      vectorModel: 'sim-embed-384',
      chunking: { collections: 1, chunks: 3, pending: 0 },
    });
    const byId = (r: { results: { checkId: string }[] }, id: string) => r.results.find((x) => x.checkId === id) as any;
    expect(byId(first.run, etna)).toMatchObject({ passed: true, expectations: [{ rank: 1 }] });
    expect(byId(first.run, aletsch)).toMatchObject({ passed: true, expectations: [{ rank: 1 }] });
    expect(byId(first.run, atacama)).toMatchObject({ passed: false, expectations: [{ rank: 1 }, { rank: null }] });
    expect(byId(first.run, etna).top[0]).toMatchObject({ sourceName: 'geo.md', scoreType: 'fullText' });
    expect(first.diff).toMatchObject({ previousRunId: null, chunkingChanged: false, counts: { new: 3 } });

    // The list shows each check's last result.
    const listed = (await call(`/api/core/dataset/check/list?datasetId=${datasetId}`)).body.data;
    expect(listed.find((c: { id: string }) => c.id === etna).last).toMatchObject({ runId: first.runId, passed: true, stale: false });

    // Change the data: Etna's chunk deleted, a chunk about glaciers in the Alps that outranks Aletsch's.
    const etnaData = byId(first.run, etna).expectations[0].dataId;
    expect((await call(`/api/core/dataset/data/delete?id=${etnaData}`, undefined, 'DELETE')).status).toBe(200);
    const pushed = await call('/api/core/dataset/data/pushData', {
      collectionId,
      data: [{ q: 'Glacier glacier: the Alps have many a glacier, glacier after glacier in the Alps.' }],
    });
    expect(pushed.status).toBe(200);
    await waitIndexed(datasetId);

    const second = await run();
    expect(second.run.passed).toBe(1);
    expect(second.run.chunking).toMatchObject({ chunks: 3 });
    expect(second.run.chunking.fingerprint).not.toBe(first.run.chunking.fingerprint);
    expect(second.diff).toMatchObject({
      previousRunId: first.runId,
      previousStartedAt: first.run.startedAt,
      chunkingChanged: true,
      vectorModelChanged: null,
      counts: { newlyFailing: 1, stillFailing: 1, stillPassing: 1, newlyPassing: 0 },
    });
    // Newly failing first; the check that lost its source says so, the one that moved says from where to where.
    expect(second.diff.checks.map((c: { checkId: string }) => c.checkId)).toEqual([etna, atacama, aletsch]);
    expect(second.diff.checks[0].rankChanges).toEqual([
      { index: 0, expectation: { text: 'mount  ETNA is an active volcano' }, before: 1, after: null, lost: true },
    ]);
    expect(second.diff.checks[2]).toMatchObject({ change: 'stillPassing', rankChanges: [{ index: 0, before: 1, after: 2, lost: false }] });

    // The run can be read again by id and as the latest; an edited check is not compared by rank.
    expect((await call(`/api/core/dataset/check/run?id=${second.runId}`)).body.data.diff.counts.newlyFailing).toBe(1);
    expect((await call(`/api/core/dataset/check/run?datasetId=${datasetId}`)).body.data.run.id).toBe(second.runId);
    await call('/api/core/dataset/check/update', { id: etna, expected: [{ text: 'Aletsch' }], question: 'glacier' }, 'PUT');
    expect((await call(`/api/core/dataset/check/list?datasetId=${datasetId}`)).body.data.find((c: { id: string }) => c.id === etna).last.stale).toBe(true);
    const third = await run();
    expect(third.diff.checks[0]).toMatchObject({ checkId: etna, change: 'newlyPassing', edited: true, rankChanges: [] });
  });

  it('starts a run that goes on after the call, with its progress, and keeps only the last runs', async () => {
    const started = await call('/api/core/dataset/check/run', { datasetId });
    expect(started.status).toBe(200);
    const runId = started.body.data.runId;
    const until = Date.now() + 20_000;
    let latest: any;
    do {
      latest = (await call(`/api/core/dataset/check/run?id=${runId}`)).body.data;
      expect(latest.run.done).toBeLessThanOrEqual(latest.run.total);
      if (latest.run.status === 'done') break;
      await new Promise((r) => setTimeout(r, 50));
    } while (Date.now() < until);
    expect(latest.run.status).toBe('done');
    expect(latest.diff.counts.stillPassing + latest.diff.counts.stillFailing).toBe(3);

    // A run under way (here, one another process holds) refuses a second; once it stops moving it is interrupted.
    const db = p.services.store.db as any;
    const now = Date.now();
    const held = {
      id: 'heldrun0000000000000000',
      team_id: p.services.rootTeamId,
      dataset_id: datasetId,
      status: 'running',
      total: 3,
      done: 1,
      passed: 0,
      vector_model: 'sim-embed-384',
      chunking: '{"fingerprint":"x","collections":1,"chunks":3,"pending":0}',
      results: '[]',
      started_at: now,
      updated_at: now,
      finished_at: null,
    };
    await db.insertInto('retrieval_check_runs').values(held).execute();
    const refused = await call('/api/core/dataset/check/run', { datasetId });
    expect(refused.status).toBe(409);
    expect(refused.body.message).toMatch(/under way \(run heldrun0+, 1 of 3 done\)/);
    await db
      .updateTable('retrieval_check_runs')
      .set({ updated_at: now - 10 * 60_000 })
      .where('id', '=', held.id)
      .execute();
    const after = await run();
    expect(after.diff.previousRunId).toBe(runId);
    expect((await call(`/api/core/dataset/check/run?id=${held.id}`)).body.data).toMatchObject({ run: { status: 'interrupted', done: 1 }, diff: null });

    for (let i = 0; i < RUNS_KEPT; i++) await run();
    const runs = (await call(`/api/core/dataset/check/runs?datasetId=${datasetId}`)).body.data;
    expect(runs).toHaveLength(RUNS_KEPT);
    expect(runs.some((r: { id: string }) => r.id === runId)).toBe(false);
    expect(runs[0]).not.toHaveProperty('results');
    expect((await call(`/api/core/dataset/check/run?id=${runId}`)).status).toBe(404);
  }, 60_000);

  it('a deleted dataset takes its checks and runs with it', async () => {
    expect((await call(`/api/core/dataset/delete?id=${datasetId}`, undefined, 'DELETE')).status).toBe(200);
    expect((await call(`/api/core/dataset/check/list?datasetId=${datasetId}`)).status).toBe(404);
    const left = await p.services.store.db
      .selectFrom('retrieval_check_runs' as any)
      .select('id')
      .execute();
    expect(left).toEqual([]);
  });
});

describe('diffRuns', () => {
  const result = (checkId: string, ranks: (number | null)[], expected = ranks.map((_, i) => ({ text: `t${i}` }))) => ({
    checkId,
    question: checkId,
    passed: ranks.every((r) => r !== null),
    expectations: ranks.map((rank) => ({ rank })),
    expected,
    top: [],
    found: 0,
  });
  const snap = (id: string, results: ReturnType<typeof result>[], vectorModel = 'm1', fingerprint = 'f1') => ({
    id,
    vectorModel,
    chunking: { fingerprint },
    results,
  });

  it('orders newly failing, newly passing, still failing, new, still passing, and names a changed model', () => {
    const before = snap('a', [result('ok', [1]), result('breaks', [2]), result('heals', [null]), result('bad', [null]), result('gone', [1])]);
    const after = snap('b', [result('ok', [1]), result('new', [3]), result('bad', [null]), result('heals', [4]), result('breaks', [null])], 'm2');
    const d = diffRuns(after, before);
    expect(d.checks.map((c) => [c.checkId, c.change])).toEqual([
      ['breaks', 'newlyFailing'],
      ['heals', 'newlyPassing'],
      ['bad', 'stillFailing'],
      ['new', 'new'],
      ['ok', 'stillPassing'],
    ]);
    expect(d.vectorModelChanged).toEqual({ before: 'm1', after: 'm2' });
    expect(d.chunkingChanged).toBe(false);
    expect(d.removed).toEqual([{ checkId: 'gone', question: 'gone' }]);
    expect(d.checks[0]!.rankChanges).toEqual([{ index: 0, expectation: { text: 't0' }, before: 2, after: null, lost: true }]);
  });
});
