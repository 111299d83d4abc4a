// Indexing speed and search latency through the whole platform, with the
// simulator's sim-embed-384 behind a real gateway (so the model's own speed
// does not hide the platform's): SciFact in through the API (one text
// collection per abstract), time until every chunk has its vectors; then
// searchTest p50/p99 per mode once the dataset holds 100,000 chunks.
// Targets (issue: platform knowledge bases): SciFact in under 60 s; search p50
// under 20 ms on the embedded store.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadScifact, scifactPresent } from './scifact-corpus.mjs';

const SCIFACT_DIR = new URL('../../../../shared/datasets/scifact', import.meta.url).pathname;
const TARGET_CHUNKS = Number(process.env.BENCH_CHUNKS ?? 100_000);
const KEY = 'kbchat-bench-indexing-key';
const TOKEN = 'sk-bench-indexing';

if (!scifactPresent(SCIFACT_DIR)) {
  console.log(`SciFact not found at ${SCIFACT_DIR}: skipped`);
  process.exit(0);
}
const { startUpstreamSim } = await import('@kbchat/upstream-sim');
const { loadGatewayConfig, startGateway } = await import('@kbchat/gateway');
const { loadPlatformConfig, startPlatform } = await import('../dist/index.js');

const dir = mkdtempSync(join(tmpdir(), 'kbchat-indexing-bench-'));
const sim = await startUpstreamSim({ port: 0 });
const gw = await startGateway(
  loadGatewayConfig(
    { INITIAL_ROOT_TOKEN: TOKEN, ROOT_INITIAL_BALANCE: '1000000', SIM_API_KEY: 'sk-sim', SIM_BASE_URL: `${sim.url}/v1`, SIM_MODELS: 'sim-chat,sim-embed-384', LOCAL_MODELS: 'off', LOG_LEVEL: 'warn' },
    { host: '127.0.0.1', port: 0, dataDir: join(dir, 'gw') },
  ),
  () => {},
);
writeFileSync(join(dir, 'config.json'), JSON.stringify({ llmModels: [{ model: 'sim-chat' }], vectorModels: [{ model: 'sim-embed-384', defaultToken: 256, maxToken: 512 }], systemEnv: { vectorMaxProcess: 4 } }));
const platform = await startPlatform(
  loadPlatformConfig({ INITIAL_API_KEY: KEY }, { host: '127.0.0.1', port: 0, dataDir: join(dir, 'pf'), configPath: join(dir, 'config.json'), gatewayUrl: gw.url, gatewayToken: TOKEN, logLevel: 'warn' }),
);
const api = async (path, json) => {
  const res = await fetch(`${platform.url}${path}`, {
    method: json === undefined ? 'GET' : 'POST',
    headers: { authorization: `Bearer ${KEY}`, ...(json === undefined ? {} : { 'content-type': 'application/json' }) },
    body: json === undefined ? undefined : JSON.stringify(json),
  });
  const body = await res.json();
  if (res.status !== 200) throw new Error(`${path}: ${res.status} ${JSON.stringify(body)}`);
  return body.data;
};
const waitDone = async (datasetId) => {
  for (;;) {
    const p = await api(`/api/core/dataset/trainingDetail?datasetId=${datasetId}`);
    if (p.failed) throw new Error(`indexing failed: ${p.lastError}`);
    if (p.total > 0 && p.done === p.total) return p;
    await new Promise((r) => setTimeout(r, 200));
  }
};
const pct = (sorted, p) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];

try {
  const { corpus, queries } = loadScifact(SCIFACT_DIR);
  const datasetId = await api('/api/core/dataset/create', { name: 'scifact', vectorModel: 'sim-embed-384' });
  const started = performance.now();
  // Eight uploads at a time, as a client importing a folder would.
  let next = 0;
  await Promise.all(
    Array.from({ length: 8 }, async () => {
      while (next < corpus.length) {
        const doc = corpus[next++];
        await api('/api/core/dataset/collection/create/text', { datasetId, name: doc.id, text: `# ${doc.title}\n\n${doc.text}` });
      }
    }),
  );
  const uploaded = (performance.now() - started) / 1000;
  const progress = await waitDone(datasetId);
  const seconds = (performance.now() - started) / 1000;
  console.log(`SciFact through the API with sim-embed-384: ${corpus.length} abstracts -> ${progress.total} chunks indexed in ${seconds.toFixed(1)} s (uploads ${uploaded.toFixed(1)} s), ${(progress.total / seconds).toFixed(0)} chunks/s (target: under 60 s) ${seconds < 60 ? 'MET' : 'MISSED'}`);

  // Grow the dataset to TARGET_CHUNKS with pushData (200 items a call), then measure searches.
  const filler = await api('/api/core/dataset/collection/create/text', { datasetId, name: 'filler', text: 'Filler collection.' });
  const words = corpus.flatMap((d) => d.text.split(/\s+/)).filter((w) => w.length > 3);
  let total = progress.total + 1;
  const fillStarted = performance.now();
  let k = 0;
  while (total < TARGET_CHUNKS) {
    const batch = Array.from({ length: Math.min(200, TARGET_CHUNKS - total) }, () => ({ q: Array.from({ length: 40 }, () => words[(k++ * 7919) % words.length]).join(' ') }));
    await api('/api/core/dataset/data/pushData', { collectionId: filler.collectionId, data: batch });
    total += batch.length;
  }
  await waitDone(datasetId);
  console.log(`grown to ${total} chunks in ${((performance.now() - fillStarted) / 1000).toFixed(1)} s`);

  const texts = [...queries.values()].slice(0, 200);
  for (const searchMode of ['fullTextRecall', 'embedding', 'mixedRecall']) {
    const lat = [];
    for (const text of texts) {
      const t = performance.now();
      await api('/api/core/dataset/searchTest', { datasetId, text, searchMode, limit: 5000 });
      lat.push(performance.now() - t);
    }
    lat.sort((a, b) => a - b);
    const p50 = pct(lat, 50);
    console.log(`searchTest ${searchMode} over ${total} chunks: p50 ${p50.toFixed(1)} ms, p99 ${pct(lat, 99).toFixed(1)} ms (${texts.length} queries; target p50 < 20 ms) ${p50 < 20 ? 'MET' : 'MISSED'}`);
  }
} finally {
  await platform.close();
  await gw.close();
  await sim.close();
}
