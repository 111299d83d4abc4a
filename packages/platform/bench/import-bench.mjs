// A large text import through `kbchat start` as the web app makes it (issue 34):
// a generated plain-text file of BENCH_MB MB sent over tus, imported, indexed
// for BENCH_INDEX_S seconds (the whole file would take hours on local-embed),
// then its collection deleted. The process's resident memory is sampled every
// 250 ms throughout; the platform store's size on disk (<data-dir>/platform-db,
// and its pg_wal) is read before the import, before the delete and after it.
//
// Prints, per phase: its time, RSS at its end and the peak during it, both
// also as MB above the idle RSS measured after the start. The targets
// (issue 34): the peak while importing and indexing under 300 MB above idle,
// and RSS back near idle once the collection is deleted.
//
// Knobs: BENCH_FILE (a file to import instead of the generated text: its name
// decides the reader, e.g. a .md of real READMEs), BENCH_MB (30), BENCH_INDEX_S (120), BENCH_SETTLE_MS (5000),
// BENCH_ENV (extra env for kbchat start), BENCH_KEEP_DIR=1, BENCH_SHOW_OUTPUT=1
// (what kbchat printed, at the end).
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { startKbchat } from './kbchat-process.mjs';
import { client } from './platform-api.mjs';
import { mb, selfReport, sleep, smapsGroups, status } from './proc-memory.mjs';

const MB = Number(process.env.BENCH_MB ?? 30);
const INDEX_S = Number(process.env.BENCH_INDEX_S ?? 120);
const SETTLE_MS = Number(process.env.BENCH_SETTLE_MS ?? 5000);
const EXTRA_ENV = Object.fromEntries(
  (process.env.BENCH_ENV ?? '')
    .split(/\s+/)
    .filter(Boolean)
    .map((kv) => [kv.slice(0, kv.indexOf('=')), kv.slice(kv.indexOf('=') + 1)]),
);
const KEY = 'kbchat-import-bench-key-0123456789';
const TUS = '/api/core/dataset/collection/upload/tus';
const TARGET_ABOVE_IDLE_MB = 300;

const rssKb = (pid) => status(pid)?.rss ?? 0;

/** Bytes under `dir`, all files. */
function duBytes(dir) {
  let n = 0;
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    if (e.isDirectory()) n += duBytes(p);
    else if (e.isFile()) n += statSync(p).size;
  }
  return n;
}

/**
 * Plain text of about `mb` MB: paragraphs of three short sentences, about 270
 * bytes each, so that local-embed's 100-token chunks come out near the issue's
 * 120,000 for 30 MB (110,000).
 */
function generatedText(mb) {
  const WORDS = (
    'the report office customer refund policy battery laptop meeting friday hospital recipe river mountain weather spring warehouse printer label ' +
    'invoice shipment supplier contract budget schedule engineer network server backup storage quarter revenue market product release feature request'
  ).split(' ');
  let s = 7;
  const rand = () => (s = (s * 1103515245 + 12345) >>> 0) / 2 ** 32;
  const sentence = () => {
    const w = Array.from({ length: 8 + Math.floor(rand() * 6) }, () => WORDS[Math.floor(rand() * WORDS.length)]);
    w[0] = w[0][0].toUpperCase() + w[0].slice(1);
    return `${w.join(' ')} ${Math.floor(rand() * 100_000)}.`;
  };
  const parts = [];
  let size = 0;
  for (let i = 0; size < mb * 1048576; i++) {
    const p = `${i + 1}. ${Array.from({ length: 3 }, sentence).join(' ')}`;
    parts.push(p);
    size += p.length + 2;
  }
  return Buffer.from(parts.join('\n\n'));
}

async function tusUpload(url, datasetId, name, bytes) {
  const meta = Object.entries({ datasetId, filename: name, filetype: 'text/plain' })
    .map(([k, v]) => `${k} ${Buffer.from(v).toString('base64')}`)
    .join(',');
  const headers = { authorization: `Bearer ${KEY}`, 'tus-resumable': '1.0.0' };
  const made = await fetch(`${url}${TUS}`, { method: 'POST', headers: { ...headers, 'upload-length': String(bytes.length), 'upload-metadata': meta } });
  if (made.status !== 201) throw new Error(`tus creation: ${made.status} ${await made.text()}`);
  const location = made.headers.get('location');
  const sent = await fetch(`${url}${location}`, {
    method: 'PATCH',
    headers: { ...headers, 'upload-offset': '0', 'content-type': 'application/offset+octet-stream' },
    body: bytes,
  });
  if (sent.status !== 204) throw new Error(`tus PATCH: ${sent.status} ${await sent.text()}`);
  return location.split('/').pop();
}

/** POST/DELETE with the key; resolves to the whole answer (status and body). */
async function call(url, path, init = {}) {
  const res = await fetch(`${url}${path}`, {
    method: init.method ?? 'POST',
    headers: { authorization: `Bearer ${KEY}`, ...(init.json === undefined ? {} : { 'content-type': 'application/json' }) },
    body: init.json === undefined ? undefined : JSON.stringify(init.json),
  });
  return { status: res.status, body: await res.json() };
}

const dataDir = mkdtempSync(join(tmpdir(), 'kbchat-import-bench-'));
const storeDir = join(dataDir, 'platform-db');
const storeSize = () => ({ all: duBytes(storeDir), wal: duBytes(join(storeDir, 'pg_wal')) });
const fmtStore = (s) => `${(s.all / 1048576).toFixed(0)} MB (pg_wal ${(s.wal / 1048576).toFixed(0)} MB)`;
console.log(`import bench: kbchat start (embedded default) on ${dataDir}; ${MB} MB of text, ${INDEX_S} s of indexing`);
const kb = await startKbchat({ dataDir, key: KEY, env: { KBCHAT_MEMORY_DIAG: '1', ...EXTRA_ENV } });
const phases = [];
let current = null;
const sampler = setInterval(() => {
  if (current) current.peak = Math.max(current.peak, rssKb(kb.pid));
}, 250);
/** Where the resident memory is now: WASM memories (PGlite's store, local-embed's tfjs), malloc, other anonymous, and the main thread's V8 heap. */
async function where() {
  const { groups: g, wasm } = smapsGroups(kb.pid);
  const self = await selfReport(kb);
  return (
    `WASM ${mb(g.wasm).toFixed(0)} MB (${wasm.map((w) => mb(w.rss).toFixed(0)).join(' + ')}), malloc ${mb(g.heap + g.arenas).toFixed(0)} MB, other anon ${mb(g.anon).toFixed(0)} MB` +
    (self ? `, main V8 heap ${self.mainHeapUsedMB} of ${self.mainHeapTotalMB} MB, external ${self.mainExternalMB} MB` : '')
  );
}

/**
 * While `work` runs, a small request (a dataset's detail: authentication and a
 * lookup, as every chat turn begins) is made one after another, at most 20 a
 * second (a few people's pages at work; as fast as it answers, the load
 * itself, 600 a second, was what the memory measured): how long the platform
 * keeps other requests waiting. Its slowest and median answer.
 */
async function withLatency(url, path, work) {
  const ms = [];
  let running = true;
  const loop = (async () => {
    while (running) {
      const t0 = performance.now();
      await fetch(`${url}${path}`, { headers: { authorization: `Bearer ${KEY}` } }).then((r) => r.arrayBuffer());
      ms.push(performance.now() - t0);
      await sleep(Math.max(0, 50 - (performance.now() - t0)));
    }
  })();
  try {
    return await work();
  } finally {
    running = false;
    await loop;
    ms.sort((a, b) => a - b);
    latency.push({ path, n: ms.length, p50: ms[Math.floor(ms.length / 2)] ?? 0, max: ms.at(-1) ?? 0 });
  }
}
const latency = [];

async function phase(name, work) {
  current = { name, peak: rssKb(kb.pid), t0: performance.now() };
  const result = await work();
  current.s = (performance.now() - current.t0) / 1000;
  current.end = rssKb(kb.pid);
  current.peak = Math.max(current.peak, current.end);
  current.where = await where();
  phases.push(current);
  current = null;
  return result;
}

try {
  const api = client(kb.url, KEY);
  await sleep(SETTLE_MS);
  const idle = rssKb(kb.pid);
  console.log(`idle: RSS ${mb(idle).toFixed(0)} MB (${await where()}); store ${fmtStore(storeSize())}`);
  const datasetId = await api('/api/core/dataset/create', { name: 'import bench', vectorModel: 'local-embed' });
  const file = process.env.BENCH_FILE;
  const text = file ? readFileSync(file) : generatedText(MB);
  const uploadId = await phase('upload (tus)', () => tusUpload(kb.url, datasetId, file ? basename(file) : 'big.txt', text));
  // The web app asks for the estimate first when the platform offers one (issue 34); older builds have none.
  const estimate = await phase('estimate', async () => {
    const r = await call(kb.url, '/api/core/dataset/collection/upload/estimate', { json: { uploadId } });
    return r.status === 200 ? r.body.data : null;
  });
  if (estimate) console.log(`estimate: ${JSON.stringify(estimate)}`);
  const detail = `/api/core/dataset/detail?id=${datasetId}`;
  const imported = await phase('import (parse, chunk, queue)', () =>
    withLatency(kb.url, detail, async () => {
      const r = await call(kb.url, '/api/core/dataset/collection/create/upload', { json: { uploadId } });
      if (r.status !== 200) throw new Error(`import: ${r.status} ${JSON.stringify(r.body)}`);
      return r.body.data;
    }),
  );
  console.log(`imported: ${imported.results.insertLen} chunks; store ${fmtStore(storeSize())}`);
  const indexed = await phase(`indexing (${INDEX_S} s)`, async () => {
    const first = await api(`/api/core/dataset/trainingDetail?datasetId=${datasetId}`);
    const t0 = performance.now();
    let last;
    // Every 15 s: how far it got, and what the time left it shows implies (the rate it divides by).
    for (let t = 15; t <= INDEX_S; t += 15) {
      await sleep(Math.max(0, t * 1000 - (performance.now() - t0)));
      last = await api(`/api/core/dataset/trainingDetail?datasetId=${datasetId}`);
      const left = last.total - last.done;
      console.log(
        `  ${t} s: ${last.done - first.done} chunks indexed (${((last.done - first.done) / t).toFixed(2)} a second)` +
          (last.timeLeftSeconds
            ? `; time left shown ${last.timeLeftSeconds} s (${(left / last.timeLeftSeconds).toFixed(2)} chunks a second)`
            : '; no time left shown'),
      );
    }
    await sleep(Math.max(0, INDEX_S * 1000 - (performance.now() - t0)));
    last = await api(`/api/core/dataset/trainingDetail?datasetId=${datasetId}`);
    return { done: last.done - first.done, last };
  });
  console.log(
    `indexed ${indexed.done} chunks in ${INDEX_S} s (${(indexed.done / INDEX_S).toFixed(2)} chunks/s)${indexed.last.timeLeftSeconds !== undefined ? `; time left shown at the end ${indexed.last.timeLeftSeconds} s` : ''}`,
  );
  const before = storeSize();
  const deleted = await phase('delete', () =>
    withLatency(kb.url, detail, async () => {
      const r = await call(kb.url, `/api/core/dataset/collection/delete?id=${imported.collectionId}`, { method: 'DELETE' });
      if (r.status !== 200) throw new Error(`delete: ${r.status} ${JSON.stringify(r.body)}`);
      // Deletion may go on after the answer: wait until the collection is gone from the list.
      for (;;) {
        const list = await api('/api/core/dataset/collection/listV2', { datasetId });
        if (!list.list.length) return r.body.data;
        await sleep(250);
      }
    }),
  );
  await phase(`settle (${SETTLE_MS * 2} ms)`, () => sleep(SETTLE_MS * 2));
  const after = storeSize();
  console.log(`delete: store ${fmtStore(before)} before, ${fmtStore(after)} after${deleted ? `; answer ${JSON.stringify(deleted)}` : ''}`);

  console.log('\n| phase | time | RSS at its end | peak during it | peak above idle |');
  console.log('|---|---|---|---|---|');
  for (const p of phases)
    console.log(`| ${p.name} | ${p.s.toFixed(1)} s | ${mb(p.end).toFixed(0)} MB | ${mb(p.peak).toFixed(0)} MB | ${mb(p.peak - idle).toFixed(0)} MB |`);
  console.log('\nat the end of each phase:');
  for (const p of phases) console.log(`  ${p.name}: ${p.where}`);
  const work = phases.filter((p) => !p.name.startsWith('settle') && p.name !== 'delete');
  const peakAbove = mb(Math.max(...work.map((p) => p.peak)) - idle);
  const endAbove = mb(phases.at(-1).end - idle);
  console.log(
    `\nidle ${mb(idle).toFixed(0)} MB; peak while importing and indexing ${peakAbove.toFixed(0)} MB above idle: target < ${TARGET_ABOVE_IDLE_MB} MB ${peakAbove < TARGET_ABOVE_IDLE_MB ? 'MET' : 'NOT MET'}`,
  );
  console.log(`after the delete: ${endAbove.toFixed(0)} MB above idle; store ${fmtStore(before)} -> ${fmtStore(after)}`);
  const [imp, del] = latency;
  console.log(
    `a dataset's detail, asked again and again meanwhile: while importing ${imp.n} answers, median ${imp.p50.toFixed(0)} ms, slowest ${imp.max.toFixed(0)} ms; ` +
      `while deleting ${del.n} answers, median ${del.p50.toFixed(0)} ms, slowest ${del.max.toFixed(0)} ms`,
  );
} finally {
  clearInterval(sampler);
  if (process.env.BENCH_SHOW_OUTPUT === '1') console.log(`\nkbchat's output:\n${kb.output()}`);
  await kb.stop();
  if (process.env.BENCH_KEEP_DIR !== '1') rmSync(dataDir, { recursive: true, force: true });
}
