// A config.json without the vector model a dataset needs: the chat still
// answers, searching by full text, and says so (in responseData, at app
// creation, at start) instead of failing on a searchMode the user never sent.
// A dataset indexed while its model was configured is still found by its words.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROOT_TOKEN, startTestGateway, type TestGateway } from '../../gateway/test/helpers.js';
import { loadPlatformConfig, startPlatform, type RunningPlatform } from '../src/index.js';

const KEY = 'kbchat-test-no-vector-key-0123456789';

describe('chat without a configured vector model', () => {
  let gw: TestGateway;
  let dir: string;
  let p: RunningPlatform | undefined;
  let indexedId: string;

  const start = (config: object) => {
    const configPath = join(dir, `config-${Date.now()}.json`);
    writeFileSync(configPath, JSON.stringify(config));
    // The same data dir each time: the store outlives a change of config.json.
    return startPlatform(
      loadPlatformConfig({ INITIAL_API_KEY: KEY }, { host: '127.0.0.1', port: 0, dataDir: dir, configPath, gatewayUrl: gw.url, gatewayToken: ROOT_TOKEN }),
    );
  };
  const call = async (path: string, json?: unknown) => {
    const res = await fetch(`${p!.url}${path}`, {
      method: json === undefined ? 'GET' : 'POST',
      headers: { authorization: `Bearer ${KEY}`, ...(json === undefined ? {} : { 'content-type': 'application/json' }) },
      body: json === undefined ? undefined : JSON.stringify(json),
    });
    return { status: res.status, body: (await res.json()) as any };
  };
  const chat = async (key: string, question: string) => {
    const res = await fetch(`${p!.url}/api/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ detail: true, messages: [{ role: 'user', content: question }] }),
    });
    return { status: res.status, body: (await res.json()) as any };
  };

  beforeAll(async () => {
    gw = await startTestGateway();
    dir = mkdtempSync(join(tmpdir(), 'kbchat-no-vector-'));
    // First with the vector model: a dataset is indexed (vectors and full-text postings).
    p = await start({ llmModels: [{ model: 'sim-echo-prompt' }], vectorModels: [{ model: 'sim-embed-384' }] });
    indexedId = (await call('/api/core/dataset/create', { name: 'geo', vectorModel: 'sim-embed-384' })).body.data;
    const made = await call('/api/core/dataset/collection/create/text', {
      datasetId: indexedId,
      name: 'geo.md',
      text: '# Volcanoes\n\nMount Etna is an active volcano on the east coast of Sicily.',
      chunkSize: 40,
    });
    for (const until = Date.now() + 30_000; ;) {
      const d = (await call(`/api/core/dataset/collection/trainingDetail?collectionId=${made.body.data.collectionId}`)).body.data;
      if (d.total > 0 && d.done === d.total) break;
      if (Date.now() > until) throw new Error(`indexing did not finish: ${JSON.stringify(d)}`);
      await new Promise((r) => setTimeout(r, 100));
    }
    await p.close();
    // Then the operator's config.json without vectorModels.
    p = await start({ llmModels: [{ model: 'sim-echo-prompt' }] });
  }, 120_000);
  afterAll(async () => {
    await p?.close();
    await gw?.close();
  });

  it('says at start that chat searches by full text only', () => {
    expect(p!.services.startupNotes.join('\n')).toMatch(/no vector model configured \(config\.json has no vectorModels\): .*chat searches by full text only/);
  });

  it('answers from a dataset whose vector model is gone, by full text, with a note in responseData and a warning at creation', async () => {
    const made = await call('/api/core/app/create', { name: 'helpdesk', model: 'sim-echo-prompt', datasets: [indexedId] });
    expect(made.status).toBe(200);
    expect(made.body.message).toBe(
      "datasets: their vector model sim-embed-384 is not in config.json's vectorModels, so chat searches them by full text only (search.searchMode is mixedRecall); their items that are not indexed yet wait for that vector model and cannot be found.",
    );
    const key = (await call('/api/support/openapi/create', { appId: made.body.data })).body.data as string;
    const res = await chat(key, 'Which volcano is on Sicily?');
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    const search = res.body.responseData.find((r: any) => r.moduleType === 'datasetSearchNode');
    expect(search.searchMode).toBe('fullTextRecall');
    expect(search.note).toBe(
      "the datasets' vector model sim-embed-384 is not in config.json's vectorModels: searched by full text only instead of mixedRecall",
    );
    expect(search.quoteList.map((q: any) => q.q).join(' ')).toContain('Mount Etna');
    // sim-echo-prompt repeats its prompt: the quote reached the answering model.
    expect(res.body.choices[0].message.content).toContain('Mount Etna');
  });

  it('chats over a dataset made without a vector model, saying why nothing is found', async () => {
    const datasetId = (await call('/api/core/dataset/create', { name: 'new' })).body.data;
    await call('/api/core/dataset/collection/create/text', { datasetId, name: 'a.md', text: 'The Aletsch glacier is in the Alps.' });
    const made = await call('/api/core/app/create', { name: 'new', model: 'sim-echo-prompt', datasets: [datasetId], search: { searchMode: 'embedding' } });
    expect(made.body.message).toMatch(
      /^datasets: they were made without a vector model, so chat searches them by full text only \(search\.searchMode is embedding\)/,
    );
    const key = (await call('/api/support/openapi/create', { appId: made.body.data })).body.data as string;
    const res = await chat(key, 'Where is the Aletsch glacier?');
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    const search = res.body.responseData.find((r: any) => r.moduleType === 'datasetSearchNode');
    expect(search).toMatchObject({ searchMode: 'fullTextRecall', quoteList: [] });
    expect(search.note).toMatch(/made without a vector model .*: searched by full text only instead of embedding/);
    // searchTest names its own searchMode, which its caller chose: still a 400 there.
    const tested = await call('/api/core/dataset/searchTest', { datasetId: indexedId, text: 'volcano' });
    expect(tested.status).toBe(400);
    expect(tested.body.message).toMatch(/^Invalid 'searchMode': .*sim-embed-384.*use fullTextRecall/);
  });
});
