// Resident memory of `kbchat start` on the embedded default (issue 16: under
// 600 MB after indexing 10,000 chunks and answering 200 chats), the way a user
// runs it: a real process (kbchat-process.mjs), a fresh data dir, no provider
// key (local-embed and local-extractive on PGlite). Stages:
//   start      ready (the platform listens), then BENCH_SETTLE_MS idle;
//   indexed    the repository's docs/*.md and generated Markdown files
//              (about one chunk a section) uploaded into one dataset until it
//              holds >= BENCH_CHUNKS chunks, all indexed (trainingDetail);
//   chats      BENCH_CHATS chats through POST /api/v1/chat/completions on an
//              app on local-extractive bound to that dataset (default search:
//              mixed recall), one after another.
// At each stage: VmRSS and the peak VmHWM of the process (/proc/<pid>/status),
// the sum over its child processes if any, the peak RSS sampled during the
// stage, the stage's time, and where the memory is: /proc/<pid>/smaps grouped
// (WASM memories are the anonymous mappings V8 reserves by the GiB: PGlite's
// two stores and the embedding model's tfjs backend), plus the main thread's V8
// heap as the process itself reports it (KBCHAT_MEMORY_DIAG=1, SIGUSR2).
//
// Knobs: BENCH_CHUNKS (10000), BENCH_CHATS (200), BENCH_SETTLE_MS (5000),
// BENCH_ENV (extra env for kbchat start, e.g. "LOCAL_EMBED_WORKERS=1 X=y"),
// BENCH_KEEP_DIR=1 keeps the data dir, BENCH_ONLY=start measures the start alone.
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { REPO, startKbchat } from './kbchat-process.mjs';
import { generatedMarkdown } from './generated-markdown.mjs';
import { client, uploadFile, waitIndexed } from './platform-api.mjs';
import { childrenRss, descendants, f1, mb, parentPid, selfReport, sleep, smapsGroups, status } from './proc-memory.mjs';

const CHUNKS = Number(process.env.BENCH_CHUNKS ?? 10_000);
const CHATS = Number(process.env.BENCH_CHATS ?? 200);
const SETTLE_MS = Number(process.env.BENCH_SETTLE_MS ?? 5000);
const EXTRA_ENV = Object.fromEntries(
  (process.env.BENCH_ENV ?? '')
    .split(/\s+/)
    .filter(Boolean)
    .map((kv) => [kv.slice(0, kv.indexOf('=')), kv.slice(kv.indexOf('=') + 1)]),
);
const KEY = 'kbchat-memory-bench-key-0123456789';
const SECTIONS_PER_FILE = 1000;
const LIMIT_MB = 600;
const START_ONLY = process.env.BENCH_ONLY === 'start';

const QUESTIONS = [
  'How many dimensions do local-embed vectors have?',
  'What does kbchat start run?',
  'How are upstream keys sealed?',
  'Where is the request log written?',
  'What does the indexing worker do?',
  'Which store does the embedded default use?',
  'How does the gateway pick a channel?',
  'What is a share link?',
  'What is the refund policy for a battery?',
  'When is the warehouse inspection scheduled?',
  'Which supplier handles the printer labels?',
  'What does local-extractive answer when nothing fits?',
];

/** Samples the process's RSS every second while `work` runs: the stage's peak, with its children. */
async function sampled(pid, work) {
  let peak = 0;
  let stop = false;
  const loop = (async () => {
    while (!stop) {
      const s = status(pid);
      if (s) peak = Math.max(peak, s.rss + childrenRss(pid).rss);
      await sleep(1000);
    }
  })();
  const t0 = performance.now();
  try {
    const result = await work();
    return { result, s: (performance.now() - t0) / 1000, peak };
  } finally {
    stop = true;
    await loop;
  }
}

// ---- the platform API ----

/** Uploads the docs, then generated files until the dataset holds >= CHUNKS chunks, all indexed. */
async function indexChunks(api, url) {
  const datasetId = await api('/api/core/dataset/create', { name: 'memory bench', vectorModel: 'local-embed' });
  const docsDir = join(REPO, 'docs');
  for (const f of readdirSync(docsDir).filter((n) => n.endsWith('.md'))) await uploadFile(url, KEY, datasetId, f, readFileSync(join(docsDir, f), 'utf8'));
  let p = await waitIndexed(api, datasetId, 1000);
  for (let file = 1; p.total < CHUNKS; file++) {
    const sections = Math.min(SECTIONS_PER_FILE, CHUNKS - p.total);
    await uploadFile(url, KEY, datasetId, `generated-${file}.md`, generatedMarkdown(sections, file));
    // Two files queued at a time keeps the worker fed without holding every upload at once.
    const next = await api(`/api/core/dataset/trainingDetail?datasetId=${datasetId}`);
    if (next.total - next.done > SECTIONS_PER_FILE) p = await waitBelow(api, datasetId, SECTIONS_PER_FILE);
    else p = next;
    if (p.total >= CHUNKS) break;
  }
  p = await waitIndexed(api, datasetId, 1000);
  return { datasetId, chunks: p.total };
}

async function waitBelow(api, datasetId, pending) {
  for (;;) {
    const p = await api(`/api/core/dataset/trainingDetail?datasetId=${datasetId}`);
    if (p.failed) throw new Error(`indexing failed: ${p.lastError}`);
    if (p.total - p.done <= pending) return p;
    await sleep(1000);
  }
}

async function chats(api, url, datasetId) {
  const appId = await api('/api/core/app/create', { name: 'memory bench', model: 'local-extractive', datasets: [datasetId] });
  const appKey = await api('/api/support/openapi/create', { name: 'bench', appId });
  const ms = [];
  for (let i = 0; i < CHATS; i++) {
    const t0 = performance.now();
    const res = await fetch(`${url}/api/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${appKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ stream: false, messages: [{ role: 'user', content: QUESTIONS[i % QUESTIONS.length] }] }),
    });
    const body = await res.json();
    if (res.status !== 200) throw new Error(`chat ${i}: ${res.status} ${JSON.stringify(body)}`);
    ms.push(performance.now() - t0);
  }
  ms.sort((a, b) => a - b);
  return { p50: ms[Math.floor(ms.length / 2)], p95: ms[Math.floor(ms.length * 0.95)] };
}

// ---- the run ----

async function measure(kb, stage, took, peakKb, note) {
  await sleep(SETTLE_MS);
  const s = status(kb.pid);
  const kids = childrenRss(kb.pid);
  const { groups: g, wasm } = smapsGroups(kb.pid);
  const self = await selfReport(kb);
  const total = s.rss + kids.rss;
  const row = { stage, took, rss: s.rss, hwm: s.hwm, kids: kids.rss, total, peakKb, g, wasm, self };
  console.log(`\n== ${stage}${note ? ` (${note})` : ''}: ${took.toFixed(1)} s`);
  console.log(
    `  VmRSS ${f1(s.rss)} (anon ${f1(s.anon)}, file ${f1(s.file)}, shmem ${f1(s.shmem)}; ${s.threads} threads), VmHWM ${f1(s.hwm)}; children ${kids.names.length ? `${f1(kids.rss)} (${kids.names.join(', ')})` : 'none'}; ` +
      `total ${f1(total)} ${mb(total) < LIMIT_MB ? '<' : '>='} ${LIMIT_MB} MB${peakKb ? `; peak sampled during the stage ${f1(peakKb)}` : ''}`,
  );
  console.log(
    `  smaps: WASM memories ${f1(g.wasm)} (resident of committed: ${wasm.map((w) => `${mb(w.rss).toFixed(0)}/${mb(w.committed).toFixed(0)}`).join(', ')} MB), ` +
      `malloc ${f1(g.heap + g.arenas)} ([heap] ${f1(g.heap)}, thread arenas ${f1(g.arenas)}), other anonymous (V8 heaps, large allocations, thread stacks) ${f1(g.anon)}, ` +
      `node binary ${f1(g.node)}, shared libraries ${f1(g.libs)}, other files ${f1(g.files)}, stacks ${f1(g.stack)}`,
  );
  if (self) {
    const sp = self.mainSpacesUsedMB;
    console.log(
      `  main thread (self-report): V8 heap ${self.mainHeapUsedMB} MB used of ${self.mainHeapTotalMB} MB (old ${sp.old_space}, large objects ${sp.large_object_space}, code ${sp.code_space}, new ${sp.new_space}), ` +
        `ArrayBuffers ${self.mainArrayBuffersMB} MB, external ${self.mainExternalMB} MB (PGlite's WASM memory counts here), V8 malloced ${self.mainMallocedMB} MB`,
    );
    for (const t of self.threads ?? [])
      console.log(
        `  ${t.thread} (self-report): V8 heap ${t.heapUsedMB} MB used of ${t.heapTotalMB} MB, ArrayBuffers ${t.arrayBuffersMB} MB, external ${t.externalMB} MB`,
      );
  } else console.log('  main thread (self-report): none (KBCHAT_MEMORY_DIAG not honoured by this checkout)');
  return row;
}

/** The V8 heaps (total) of the main thread and every thread that reported. */
const v8Total = (self) => self.mainHeapTotalMB + (self.threads ?? []).reduce((n, t) => n + t.heapTotalMB, 0);

const dataDir = mkdtempSync(join(tmpdir(), 'kbchat-memory-bench-'));
console.log(
  `memory bench: kbchat start (embedded default, no provider key) on ${dataDir}; ${CHUNKS} chunks, ${CHATS} chats${Object.keys(EXTRA_ENV).length ? `; env ${JSON.stringify(EXTRA_ENV)}` : ''}`,
);
const rows = [];
const t0 = performance.now();
// The start's peak: kbchat's own process (this script's child: the launcher
// execs node), and with what it runs (a new data dir is created by a
// short-lived initdb child, once per data dir: reported, not judged).
let startPeak = 0;
let startPeakWithChildren = 0;
const startSampler = setInterval(() => {
  let own = 0;
  let withChildren = 0;
  const all = descendants(process.pid);
  const direct = new Set(all.filter((p) => parentPid(p) === process.pid));
  for (const p of all) {
    const rss = status(p)?.rss ?? 0;
    withChildren += rss;
    if (direct.has(p)) own += rss;
  }
  startPeak = Math.max(startPeak, own);
  startPeakWithChildren = Math.max(startPeakWithChildren, withChildren);
}, 250);
const kb = await startKbchat({ dataDir, key: KEY, env: { KBCHAT_MEMORY_DIAG: '1', ...EXTRA_ENV } }).finally(() => clearInterval(startSampler));
const startS = (performance.now() - t0) / 1000;
class Done extends Error {}
try {
  const api = client(kb.url, KEY);
  rows.push(
    await measure(
      kb,
      'start',
      startS,
      startPeak,
      `ready, then ${SETTLE_MS} ms idle; peak with the initdb child of a new data dir ${f1(startPeakWithChildren)}`,
    ),
  );
  if (START_ONLY) throw new Done();
  const idx = await sampled(kb.pid, () => indexChunks(api, kb.url));
  rows.push(await measure(kb, 'indexed', idx.s, idx.peak, `${idx.result.chunks} chunks, ${(idx.result.chunks / idx.s).toFixed(1)} chunks/s`));
  const ch = await sampled(kb.pid, () => chats(api, kb.url, idx.result.datasetId));
  rows.push(
    await measure(kb, 'chats', ch.s, ch.peak, `${CHATS} chats, p50 ${(ch.result.p50 / 1000).toFixed(2)} s, p95 ${(ch.result.p95 / 1000).toFixed(2)} s`),
  );
} catch (err) {
  if (!(err instanceof Done)) throw err;
} finally {
  await kb.stop();
  if (process.env.BENCH_KEEP_DIR !== '1') rmSync(dataDir, { recursive: true, force: true });
}

console.log(`\n| stage | time | VmRSS | VmHWM | children | WASM memories | malloc | other anon | files (node, libs, other) | V8 heaps, all threads (main) |`);
console.log('|---|---|---|---|---|---|---|---|---|---|');
for (const r of rows) {
  console.log(
    `| ${r.stage} | ${r.took.toFixed(0)} s | ${mb(r.rss).toFixed(0)} MB | ${mb(r.hwm).toFixed(0)} MB | ${mb(r.kids).toFixed(0)} MB | ${mb(r.g.wasm).toFixed(0)} MB (${r.wasm.map((w) => mb(w.rss).toFixed(0)).join(' + ')}) | ` +
      `${mb(r.g.heap + r.g.arenas).toFixed(0)} MB | ${mb(r.g.anon).toFixed(0)} MB | ${mb(r.g.node + r.g.libs + r.g.files).toFixed(0)} MB | ${r.self ? `${v8Total(r.self).toFixed(0)} MB (${r.self.mainHeapTotalMB.toFixed(0)})` : '-'} |`,
  );
}
// Judged twice against the limit: where it settles after each stage, and the
// highest it went (the lifetime VmHWM, and the peak sampled every second with
// children after the start); a promise of "under
// 600 MB" that holds only between stages is not kept.
const verdict = (kb) => (mb(kb) < LIMIT_MB ? 'MET' : 'NOT MET');
const settled = Math.max(...rows.map((r) => r.total));
const hwm = Math.max(...rows.map((r) => r.hwm));
const sampledPeak = Math.max(...rows.map((r) => r.peakKb ?? 0));
console.log(`\nsettled: highest resident total at a stage ${f1(settled)}: target < ${LIMIT_MB} MB ${verdict(settled)}`);
console.log(
  `peak: VmHWM ${f1(hwm)} ${verdict(hwm)}; peak sampled during the stages (with children) ${f1(sampledPeak)} ${verdict(sampledPeak)} (the start's initdb child, once per data dir, not counted: ${f1(startPeakWithChildren)} with it)`,
);
