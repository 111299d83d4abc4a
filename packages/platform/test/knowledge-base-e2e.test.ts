// A knowledge base end to end over HTTP: a real gateway in front of the
// upstream simulator, the platform with its indexing worker; text in,
// trainingDetail until done, searchTest in every mode with its score lists,
// a model with unnormalised vectors refused by name, deletion removing vectors,
// a chat answered from the quotes. On PGlite, and on PostgreSQL with pgvector
// (a fresh database) where the server has the extension; skipped there, with
// the reason printed, where it has not.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it as itRun } from 'vitest';

const itSkip = itRun.skip;
import { ROOT_TOKEN, startTestGateway, type TestGateway } from '../../gateway/test/helpers.js';
import { loadPlatformConfig, startPlatform, type RunningPlatform } from '../src/index.js';
import { pgvectorDatabase, type PlatformTestDatabase } from './fixtures/pgvector-database.js';

const KEY = 'kbchat-test-e2e-key-0123456789';

const databases: PlatformTestDatabase[] = [{ name: 'PGlite', url: 'pglite:memory', drop: async () => {} }, await pgvectorDatabase()];
afterAll(() => Promise.all(databases.map((d) => d.drop())));

describe.each(databases)('knowledge base end to end on $name', (database) => {
  if (database.skipReason) console.warn(`[skip] knowledge base end to end on ${database.name}: ${database.skipReason}`);
  const it = database.skipReason ? itSkip : itRun;
  let gw: TestGateway;
  let p: RunningPlatform;
  const call = async (path: string, json?: unknown, method = json === undefined ? 'GET' : 'POST') => {
    const res = await fetch(`${p.url}${path}`, {
      method,
      headers: { authorization: `Bearer ${KEY}`, ...(json === undefined ? {} : { 'content-type': 'application/json' }) },
      body: json === undefined ? undefined : JSON.stringify(json),
    });
    return { status: res.status, body: (await res.json()) as any };
  };
  const waitIndexed = async (collectionId: string) => {
    const until = Date.now() + 30_000;
    for (;;) {
      const d = (await call(`/api/core/dataset/collection/trainingDetail?collectionId=${collectionId}`)).body.data;
      if (d.total > 0 && d.done === d.total) return d;
      if (d.failed > 0 || Date.now() > until) return d;
      if (process.env.DEBUG_E2E) console.log(JSON.stringify(d));
      await new Promise((r) => setTimeout(r, 100));
    }
  };

  beforeAll(async () => {
    if (database.skipReason) return;
    gw = await startTestGateway();
    const dir = mkdtempSync(join(tmpdir(), 'kbchat-kb-e2e-'));
    const configPath = join(dir, 'config.json');
    writeFileSync(
      configPath,
      JSON.stringify({
        llmModels: [{ model: 'sim-chat', toolChoice: false, functionCall: false }, { model: 'sim-echo-prompt' }],
        vectorModels: [
          { model: 'sim-embed-384', defaultToken: 200, maxToken: 512 },
          { model: 'sim-embed-raw-384', defaultToken: 200, maxToken: 512 },
        ],
        reRankModels: [{ model: 'sim-rerank' }],
        systemEnv: { vectorMaxProcess: 2 },
      }),
    );
    p = await startPlatform(
      loadPlatformConfig(
        { INITIAL_API_KEY: KEY },
        { host: '127.0.0.1', port: 0, dataDir: dir, databaseUrl: database.url, configPath, gatewayUrl: gw.url, gatewayToken: ROOT_TOKEN },
      ),
    );
  }, 90_000);
  afterAll(async () => {
    await p?.close();
    await gw?.close();
  });

  it('checks at start that the gateway serves every configured model, naming the missing ones', async () => {
    expect(p.services.startupNotes.join('\n')).toMatch(/all 5 configured models are served/);
    const dir = mkdtempSync(join(tmpdir(), 'kbchat-kb-e2e-bad-'));
    writeFileSync(join(dir, 'config.json'), JSON.stringify({ llmModels: [{ model: 'sim-chat' }, { model: 'gpt-nowhere' }], vectorModels: [] }));
    await expect(
      startPlatform(
        loadPlatformConfig(
          {},
          {
            host: '127.0.0.1',
            port: 0,
            dataDir: dir,
            databaseUrl: 'pglite:memory',
            configPath: join(dir, 'config.json'),
            gatewayUrl: gw.url,
            gatewayToken: ROOT_TOKEN,
          },
        ),
      ),
    ).rejects.toThrow(/gpt-nowhere/);
  });

  it('indexes a text collection and finds it in every search mode, each result with its scores', async () => {
    const datasetId = (await call('/api/core/dataset/create', { name: 'facts', vectorModel: 'sim-embed-384' })).body.data;
    const text = [
      '# Volcanoes\n\nMount Etna is an active volcano on the east coast of Sicily.',
      '# Glaciers\n\nThe Aletsch glacier is the largest glacier in the Alps.',
      '# Deserts\n\nThe Atacama desert in Chile is one of the driest places on Earth.',
    ].join('\n\n');
    const made = await call('/api/core/dataset/collection/create/text', { datasetId, name: 'geo.md', text, chunkSize: 40 });
    expect(made.status).toBe(200);
    const detail = await waitIndexed(made.body.data.collectionId);
    expect(detail).toMatchObject({ failed: 0, queued: 0, indexing: 0 });
    expect(detail.done).toBe(made.body.data.results.insertLen);
    expect((await call(`/api/core/dataset/detail?id=${datasetId}`)).body.data.vectorDimensions).toBe(384);
    const listed = (await call('/api/core/dataset/collection/listV2', { datasetId })).body.data.list[0];
    expect(listed).toMatchObject({ dataAmount: detail.total, trainingAmount: 0, errorAmount: 0 });

    for (const searchMode of ['fullTextRecall', 'embedding', 'mixedRecall'] as const) {
      const r = await call('/api/core/dataset/searchTest', { datasetId, text: 'largest glacier in the Alps', searchMode, limit: 5000 });
      expect(r.status, JSON.stringify(r.body)).toBe(200);
      expect(r.body.data.searchMode).toBe(searchMode);
      const list = r.body.data.list as any[];
      expect(list.length).toBeGreaterThan(0);
      for (const item of list) {
        expect(item).toMatchObject({ datasetId, sourceName: 'geo.md', sourceId: made.body.data.collectionId });
        expect(Array.isArray(item.score)).toBe(true);
      }
      const types = list[0].score.map((s: any) => s.type);
      if (searchMode === 'fullTextRecall') {
        expect(list[0].q).toMatch(/Aletsch/);
        expect(types).toContain('fullText');
      }
      if (searchMode === 'embedding') expect(types).toContain('embedding');
      if (searchMode === 'mixedRecall') expect(list[0].q).toMatch(/Aletsch/);
    }
    const reranked = await call('/api/core/dataset/searchTest', { datasetId, text: 'driest desert', searchMode: 'mixedRecall', usingReRank: true });
    expect(reranked.status, JSON.stringify(reranked.body)).toBe(200);
    expect(reranked.body.data.usingReRank).toBe(true);
    expect(reranked.body.data.list[0].score.map((s: any) => s.type)).toContain('reRank');
  });

  it('answers a chat from the knowledge base through an app key, quoting what it found', async () => {
    const datasetId = (await call('/api/core/dataset/create', { name: 'chat', vectorModel: 'sim-embed-384' })).body.data;
    const made = await call('/api/core/dataset/collection/create/text', {
      datasetId,
      name: 'lakes.md',
      text: 'Lake Baikal in Siberia is the deepest lake in the world.\n\nLake Titicaca lies on the border of Peru and Bolivia.',
    });
    expect((await waitIndexed(made.body.data.collectionId)).failed).toBe(0);
    const appId = (
      await call('/api/core/app/create', { name: 'lakes', model: 'sim-echo-prompt', datasets: [datasetId], search: { searchMode: 'mixedRecall' } })
    ).body.data;
    const key = (await call('/api/support/openapi/create', { name: 'k', appId })).body.data as string;
    const res = await fetch(`${p.url}/api/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ messages: [{ role: 'user', content: 'Which lake is the deepest?' }], detail: true }),
    });
    const body = (await res.json()) as any;
    expect(res.status, JSON.stringify(body)).toBe(200);
    // sim-echo-prompt answers with its prompt: the quote the search found is in it.
    expect(body.choices[0].message.content).toMatch(/Baikal in Siberia is the deepest lake/);
  });

  it("QA mode: the dataset's LLM turns each chunk into question/answer pairs, which become the indexed items", async () => {
    const datasetId = (await call('/api/core/dataset/create', { name: 'qa', vectorModel: 'sim-embed-384', agentModel: 'sim-echo-prompt' })).body.data;
    // sim-echo-prompt answers with the prompt itself, so the pairs written in the text come back as its answer.
    const text = 'Q1: When was the bridge built?\nA1: The bridge was built in 1890.\n\nQ2: How long is it?\nA2: It is 400 metres long.';
    const made = await call('/api/core/dataset/collection/create/text', { datasetId, name: 'bridge', text, trainingType: 'qa', chunkSize: 200 });
    expect(made.status, JSON.stringify(made.body)).toBe(200);
    const collectionId = made.body.data.collectionId;
    const until = Date.now() + 30_000;
    let list: any[];
    let d: any;
    do {
      await new Promise((r) => setTimeout(r, 150));
      d = (await call(`/api/core/dataset/collection/trainingDetail?collectionId=${collectionId}`)).body.data;
      list = (await call('/api/core/dataset/data/v2/list', { collectionId, pageSize: 50 })).body.data.list;
    } while (!(d.total > 0 && d.done === d.total && d.queued === 0) && Date.now() < until);
    expect(d.lastError).toBeNull();
    const pairs = list.map((x) => `${x.q} => ${x.a}`).join('\n');
    expect(pairs).toMatch(/When was the bridge built\? => The bridge was built in 1890\./);
    expect(pairs).toMatch(/How long is it\? => It is 400 metres long\./);
    const found = await call('/api/core/dataset/searchTest', { datasetId, text: 'bridge built 1890', searchMode: 'fullTextRecall' });
    expect(found.body.data.list[0].a).toMatch(/1890/);
  });

  it('a vector model whose vectors are not unit length is refused with the reason on the item', async () => {
    const datasetId = (await call('/api/core/dataset/create', { name: 'raw', vectorModel: 'sim-embed-raw-384' })).body.data;
    const made = await call('/api/core/dataset/collection/create/text', { datasetId, name: 'x', text: 'Some text to embed.' });
    const until = Date.now() + 30_000;
    let d: any;
    do {
      await new Promise((r) => setTimeout(r, 100));
      d = (await call(`/api/core/dataset/collection/trainingDetail?collectionId=${made.body.data.collectionId}`)).body.data;
    } while (!d.lastError && Date.now() < until);
    expect(d.lastError).toMatch(/normalised|normalized|unit length/i);
    expect(d.done).toBe(0);
  });

  it('bad searchTest input is a 400 naming the field; another dataset id is a 404', async () => {
    const datasetId = (await call('/api/core/dataset/create', { name: 'x' })).body.data;
    const bad = await call('/api/core/dataset/searchTest', { datasetId, text: 'q', searchMode: 'bogus' });
    expect(bad.status).toBe(400);
    expect(bad.body.message).toMatch(/searchMode/);
    expect((await call('/api/core/dataset/searchTest', { datasetId: 'nope', text: 'q' })).status).toBe(404);
  });

  it('deleting a collection removes its data, vectors and postings', async () => {
    const datasetId = (await call('/api/core/dataset/create', { name: 'gone', vectorModel: 'sim-embed-384' })).body.data;
    const made = await call('/api/core/dataset/collection/create/text', { datasetId, name: 'tmp', text: 'Penguins live in the southern hemisphere.' });
    await waitIndexed(made.body.data.collectionId);
    const db = p.services.store.db;
    const count = async (table: string) =>
      Number(
        (
          await sql<{
            n: number;
          }>`select count(*) as n from ${sql.table(table)} where data_id in (select id from data where collection_id = ${made.body.data.collectionId})`.execute(
            db,
          )
        ).rows[0]!.n,
      );
    expect(await count('vectors_384')).toBeGreaterThan(0);
    expect((await call(`/api/core/dataset/collection/delete?id=${made.body.data.collectionId}`, undefined, 'DELETE')).status).toBe(200);
    const left = await sql<{ n: number }>`select count(*) as n from vectors_384 where dataset_id = ${datasetId}`.execute(db);
    expect(Number(left.rows[0]!.n)).toBe(0);
    const r = await call('/api/core/dataset/searchTest', { datasetId, text: 'penguins', searchMode: 'fullTextRecall' });
    expect(r.body.data.list).toEqual([]);
  });
});

describe('a platform with no vector model configured', () => {
  itRun(
    'still takes data, and every waiting item says "no vector model configured"',
    async () => {
      const gw = await startTestGateway();
      const dir = mkdtempSync(join(tmpdir(), 'kbchat-kb-novector-'));
      writeFileSync(join(dir, 'config.json'), JSON.stringify({ llmModels: [{ model: 'sim-chat' }] }));
      const p = await startPlatform(
        loadPlatformConfig(
          { INITIAL_API_KEY: KEY },
          {
            host: '127.0.0.1',
            port: 0,
            dataDir: dir,
            databaseUrl: 'pglite:memory',
            configPath: join(dir, 'config.json'),
            gatewayUrl: gw.url,
            gatewayToken: ROOT_TOKEN,
          },
        ),
      );
      try {
        expect(p.services.startupNotes.join('\n')).toMatch(/no vector model configured/);
        const post = async (path: string, json: unknown) =>
          (await (
            await fetch(`${p.url}${path}`, {
              method: 'POST',
              headers: { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' },
              body: JSON.stringify(json),
            })
          ).json()) as any;
        const datasetId = (await post('/api/core/dataset/create', { name: 'waiting' })).data;
        const made = await post('/api/core/dataset/collection/create/text', { datasetId, name: 'a', text: 'One sentence.\n\nAnother one.' });
        const until = Date.now() + 20_000;
        let d: any;
        do {
          await new Promise((r) => setTimeout(r, 100));
          d = (
            (await (
              await fetch(`${p.url}/api/core/dataset/collection/trainingDetail?collectionId=${made.data.collectionId}`, {
                headers: { authorization: `Bearer ${KEY}` },
              })
            ).json()) as any
          ).data;
        } while (d.lastError !== 'no vector model configured' && Date.now() < until);
        expect(d).toMatchObject({ lastError: 'no vector model configured', failed: 0, done: 0 });
        expect(d.queued).toBe(d.total);
      } finally {
        await p.close();
        await gw.close();
      }
    },
    60_000,
  );
});
