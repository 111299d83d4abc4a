// The indexing worker of a platform process, wired to the gateway (embeddings,
// QA chat) and to the retrieval tables (vectors, full-text postings).
import type { DatasetsStore } from '../datasets/store.js';
import type { GatewayClient } from '../gateway-client/index.js';
import type { IndexingRecorder } from '../metrics/index.js';
import type { ModelConfig } from '../models/config-file.js';
import { buildVectorIndexes, indexForSearch, storeVectors, vacuumSearchTables } from '../retrieval/index.js';
import type { PlatformDb, PlatformTx } from '../store/database.js';
import { newId } from '../keys/auth.js';
import { EMBED_INPUTS_PER_CALL, indexChunks } from './chunk-processor.js';
import { indexQa } from './qa-processor.js';
import { saveRate } from './rate-store.js';
import { RateRecorder } from './rates.js';
import { IndexingWorker } from './worker.js';

/**
 * `embeddedStore`: the store is PGlite, which one process opens, so this worker is its only one.
 * `retryBaseMs`: the wait before a failed item's second attempt (doubled at each failure).
 */
export function createIndexingWorker(
  db: PlatformDb,
  datasets: DatasetsStore,
  gateway: GatewayClient,
  models: ModelConfig,
  onError: (err: unknown) => void,
  opts: { embeddedStore?: boolean; metrics?: IndexingRecorder; retryBaseMs?: number } = {},
): IndexingWorker {
  const vectorModels = new Set(models.vectorModels.map((m) => m.model));
  const llms = new Set(models.llmModels.map((m) => m.model));
  const datasetModels = new Map<string, { vector: string; agent: string | null }>();
  const modelsOf = async (datasetId: string) => {
    let hit = datasetModels.get(datasetId);
    if (!hit) {
      const row = await datasets.models(datasetId);
      if (!row) return undefined;
      // A dataset's vector model never changes: safe to keep.
      hit = { vector: row.vector_model, agent: row.agent_model };
      datasetModels.set(datasetId, hit);
    }
    return hit;
  };
  // The worker's id is known once it exists; rates are saved under it.
  let workerId = '';
  const rates = new RateRecorder((r) => void saveRate(db, { ...r, workerId }).catch(onError));
  const chunk = indexChunks({
    indexed: (model, items, startedAt) => rates.record('chunk', model, items, startedAt, Date.now()),
    // Marked bulk: a small indexing batch (a short upload's last chunks) must not pass for a question on the local model.
    embed: vectorModels.size ? (model, texts) => gateway.embeddings(model, texts, { priority: 'bulk' }) : undefined,
    vectorModelOf: async (datasetId) => {
      const m = (await modelsOf(datasetId))?.vector;
      return m && vectorModels.has(m) ? m : undefined;
    },
    // Vectors are keyed by their data_indexes row: storing replaces, and index
    // rows an update removed take their vectors with them (foreign key cascade).
    async writeVectors(tx: PlatformTx, rows) {
      if (rows.length === 0) return;
      const dims = rows[0]!.vector.length;
      await datasets.setDimensions(rows[0]!.datasetId, dims, tx);
      await storeVectors(tx, dims, rows);
    },
    async writePostings(tx: PlatformTx, items) {
      await indexForSearch(
        tx,
        items.map((i) => ({ dataId: i.dataId, datasetId: i.datasetId, text: [i.q, i.a].filter(Boolean).join('\n') })),
      );
    },
  });
  const qa = indexQa({
    chat: llms.size ? (body) => gateway.chat(body) : undefined,
    qaModelOf: async (datasetId) => {
      const m = (await modelsOf(datasetId))?.agent;
      return m && llms.has(m) ? m : undefined;
    },
    newId,
  });
  const worker = new IndexingWorker({
    db,
    concurrency: models.systemEnv.vectorMaxProcess,
    // A chunk batch is one embeddings call and one transaction; uploads arriving
    // one by one gather for a moment instead of going in as batches of a few.
    batchSizes: { chunk: EMBED_INPUTS_PER_CALL },
    lingerMs: 250,
    // After a restart on the embedded store, what the dead process had claimed
    // is indexed at once instead of showing "indexing" until its leases lapse.
    soleWorker: opts.embeddedStore === true,
    processors: { chunk, qa },
    backoffBaseMs: opts.retryBaseMs,
    onError,
    metrics: opts.metrics,
    // A bulk load goes in without the HNSW graph, which is built once the queue
    // is quiet; then statistics and visibility maps (retrieval/store.ts).
    onQuiet: async () => {
      rates.flush();
      await buildVectorIndexes(db);
      await vacuumSearchTables(db);
    },
  });
  workerId = worker.workerId;
  return worker;
}
