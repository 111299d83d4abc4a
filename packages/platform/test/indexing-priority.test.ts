// The platform's indexing marks its embeddings calls bulk (X-Kbchat-Priority),
// so that kbchat's local models queue a small indexing batch behind a
// question instead of taking it by its size for one. Seen where it arrives:
// the upstream simulator stands in for the gateway (same wire) and records the
// header of each request.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startUpstreamSim, type UpstreamSim } from '@kbchat/upstream-sim';
import { DatasetsStore } from '../src/datasets/store.js';
import { GatewayClient } from '../src/gateway-client/index.js';
import { enqueue } from '../src/indexing/index.js';
import { createIndexingWorker } from '../src/indexing/wiring.js';
import type { ModelConfig } from '../src/models/config-file.js';
import { eventually, pgliteKind, seed, type TestDb } from './fixtures/indexing-stores.js';

let store: TestDb;
let sim: UpstreamSim;
beforeAll(async () => {
  store = await pgliteKind().open();
  sim = await startUpstreamSim({ port: 0, key: 'sk-sim-priority' });
});
afterAll(async () => {
  await store?.close();
  await sim?.close();
});

it('sends its embeddings calls as bulk, small batches too; a search-size call from elsewhere is unmarked', async () => {
  const gateway = new GatewayClient({ url: sim.url, token: 'sk-sim-priority' });
  const models: ModelConfig = {
    llmModels: [],
    vectorModels: [{ model: 'sim-embed-384', name: 'sim', defaultToken: 100, maxToken: 512 }],
    reRankModels: [],
    systemEnv: { vectorMaxProcess: 1, qaMaxProcess: 1, hnswEfSearch: 100 },
  };
  const s = await seed(store.db, { n: 2, vectorModel: 'sim-embed-384' }); // 2 chunks: a batch the size of a question's
  await enqueue(store.db, s.items);
  const worker = createIndexingWorker(store.db, new DatasetsStore(store.db), gateway, models, () => {}).start();
  try {
    await eventually(async () => expect(sim.stats().byPath['/v1/embeddings']).toBeGreaterThanOrEqual(1), 10_000);
    expect(sim.stats().lastRequest).toMatchObject({ path: '/v1/embeddings', kbchatPriority: 'bulk' });
  } finally {
    await worker.stop();
  }
  await gateway.embeddings('sim-embed-384', ['a question?']);
  expect(sim.stats().lastRequest).toMatchObject({ path: '/v1/embeddings', kbchatPriority: null });
  await gateway.close();
});
