// Embedding throughput of local-embed through its HTTP server, from the built
// dist/ (run `npx tsc -b packages/local-models` first):
//   node packages/local-models/bench/embed-bench.mjs [workers] [maxBatch]
// Prints embeddings per second one sentence per request (sequential) and in
// batched requests, and the process RSS after loading the model. Then the
// priority lane's cost when nobody chats: indexing-like load (chunks of ~70
// words, two requests of 64 at a time, as the platform's worker sends them) on
// a server with the lane and one without (LOCAL_EMBED_PRIORITY=off, the
// behaviour before it), rounds interleaved (BENCH_LANE_ROUNDS, default 2 each).
import { startLocalModels } from '../dist/index.js';

const workers = Number(process.argv[2] ?? 1);
const maxBatch = Number(process.argv[3] ?? 32);
const WORDS =
  'the a river mountain small large quickly report customer refund policy office open weather spring battery laptop meeting friday hospital recipe'.split(' ');

// Deterministic sentences of 10 to 20 words.
function sentence(i) {
  const n = 10 + (i % 11);
  return Array.from({ length: n }, (_, k) => WORDS[(i * 31 + k * 7) % WORDS.length]).join(' ') + ` ${i}.`;
}

const rssBefore = process.memoryUsage().rss;
const t0 = performance.now();
const lm = await startLocalModels({ warmup: true, embedWorkers: workers, embedMaxBatch: maxBatch });
const loadMs = performance.now() - t0;
const mb = (b) => (b / 1024 / 1024).toFixed(0);
console.log(`workers ${workers}, max batch ${maxBatch}`);
console.log(`load ${loadMs.toFixed(0)} ms; rss before ${mb(rssBefore)} MB, after loading ${mb(process.memoryUsage().rss)} MB`);

async function embed(input) {
  const res = await fetch(`${lm.baseUrl}/embeddings`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'local-embed', input, encoding_format: 'base64' }),
  });
  if (res.status !== 200) throw new Error(await res.text());
  return res.json();
}

await embed([sentence(0), sentence(1)]); // warm the graph

let start = performance.now();
const SINGLE = 60;
for (let i = 0; i < SINGLE; i++) await embed(sentence(i));
console.log(`single: ${((SINGLE / (performance.now() - start)) * 1000).toFixed(1)} embeddings/s (one per request, sequential)`);

start = performance.now();
const CONCURRENT = 128;
await Promise.all(Array.from({ length: CONCURRENT }, (_, i) => embed(sentence(1000 + i))));
console.log(
  `concurrent singles: ${((CONCURRENT / (performance.now() - start)) * 1000).toFixed(1)} embeddings/s (${CONCURRENT} one-sentence requests at once, coalesced)`,
);

start = performance.now();
const BATCHED = 256;
await embed(Array.from({ length: BATCHED }, (_, i) => sentence(2000 + i)));
console.log(`batched: ${((BATCHED / (performance.now() - start)) * 1000).toFixed(1)} embeddings/s (${BATCHED} in one request)`);
console.log(`rss at end ${mb(process.memoryUsage().rss)} MB`);
await lm.close();

// Chunk-like texts: ~70 words, as the embedded default's 100-token chunks.
const chunk = (i) => Array.from({ length: 5 }, (_, k) => sentence(i * 5 + k)).join(' ');
const servers = {
  on: await startLocalModels({ warmup: true, embedWorkers: workers, embedMaxBatch: maxBatch, embedPriority: true }),
  off: await startLocalModels({ warmup: true, embedWorkers: workers, embedMaxBatch: maxBatch, embedPriority: false }),
};
async function indexingRound(server, first) {
  const post = (input) =>
    fetch(`${server.baseUrl}/embeddings`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'local-embed', input, encoding_format: 'base64' }),
    }).then((r) => r.json());
  const CALLS = 6;
  const t = performance.now();
  let next = 0;
  await Promise.all(
    [0, 1].map(async () => {
      while (next < CALLS) {
        const c = next++;
        await post(Array.from({ length: 64 }, (_, i) => chunk(first + c * 64 + i)));
      }
    }),
  );
  return (CALLS * 64) / ((performance.now() - t) / 1000);
}
await indexingRound(servers.on, 90_000); // warm both graphs
await indexingRound(servers.off, 90_000);
const rates = { on: [], off: [] };
const ROUNDS = Number(process.env.BENCH_LANE_ROUNDS ?? 2);
for (let r = 0; r < ROUNDS; r++) {
  for (const mode of r % 2 ? ['off', 'on'] : ['on', 'off']) rates[mode].push(await indexingRound(servers[mode], 100_000 + r * 1000));
}
const mean = (v) => v.reduce((a, b) => a + b, 0) / v.length;
console.log(`indexing-like load, nobody chatting (384 chunks of ~70 words a round, 2 x 64 at a time, ${ROUNDS} rounds each, interleaved):`);
console.log(`  lane on  ${rates.on.map((v) => v.toFixed(1)).join(', ')} embeddings/s (mean ${mean(rates.on).toFixed(1)})`);
console.log(
  `  lane off ${rates.off.map((v) => v.toFixed(1)).join(', ')} embeddings/s (mean ${mean(rates.off).toFixed(1)}); on/off ${(mean(rates.on) / mean(rates.off)).toFixed(2)}`,
);
await Promise.all([servers.on.close(), servers.off.close()]);
