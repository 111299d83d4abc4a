// Chat answer latency while an upload is being embedded, on the embedded
// default as `kbchat start` runs it (issue 16: 10.8 s an answer during an
// upload instead of about 1 s), with local-embed's priority lane on and off in
// the same run (LOCAL_EMBED_PRIORITY=off is the behaviour before the lane).
//
// For each mode, a fresh `kbchat start` (a child process, its own data dir, no
// provider key: local-extractive and local-embed on PGlite) and:
//   1. a knowledge dataset with the repository's own docs/*.md uploaded as
//      files, and an app on local-extractive bound to it (its default search);
//   2. idle: BENCH_CHATS sequential chats (POST /api/v1/chat/completions with
//      the app key, stream=false, detail=true), BENCH_THINK_MS between them;
//   3. during indexing: a generated Markdown file of BENCH_UPLOAD_SECTIONS
//      sections (about one chunk each: 3,000) uploaded into a second dataset;
//      the same chats, one after another with the same think time, until
//      every chunk is embedded; indexing time with chats going on;
//   4. idle indexing: BENCH_IDLE_SECTIONS more sections uploaded with no chat,
//      chunks/s until embedded (the lane must keep throughput when nobody chats).
// Latency is from sending the request to the end of the answer; the search's
// and the answer's own runningTime (responseData) say where it went.
//
// Knobs: BENCH_MODES (default "off,on"; a mode may repeat), BENCH_CHATS (idle chats, default 20),
// BENCH_THINK_MS (default 1000), BENCH_UPLOAD_SECTIONS (3000), BENCH_IDLE_SECTIONS (1000).
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { REPO, startKbchat } from './kbchat-process.mjs';
import { percentile } from './sim-stack.mjs';
import { generatedMarkdown } from './generated-markdown.mjs';
import { client, trainingProgress, uploadFile, waitIndexed } from './platform-api.mjs';

const MODES = (process.env.BENCH_MODES ?? 'off,on')
  .split(',')
  .map((m) => m.trim())
  .filter(Boolean);
const CHATS = Number(process.env.BENCH_CHATS ?? 20);
const THINK_MS = Number(process.env.BENCH_THINK_MS ?? 1000);
const UPLOAD_SECTIONS = Number(process.env.BENCH_UPLOAD_SECTIONS ?? 3000);
const IDLE_SECTIONS = Number(process.env.BENCH_IDLE_SECTIONS ?? 1000);
const KEY = 'kbchat-bench-chat-during-indexing-key';
// Only step 4 (indexing throughput, nobody chatting): with BENCH_MODES=on,off,off,on,... it compares throughput alone.
const QUIET_ONLY = process.env.BENCH_QUIET_ONLY === '1';

const QUESTIONS = [
  'How many dimensions do local-embed vectors have?',
  'What does kbchat start run?',
  'How are upstream keys sealed?',
  'Where is the request log written?',
  'What does the indexing worker do?',
  'Which store does the embedded default use?',
  'How does the gateway pick a channel?',
  'What is a share link?',
  'How are streams retried?',
  'What does local-extractive answer when nothing fits?',
];

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** One chat turn: total ms, and the search's and the answer's own running times (ms). */
async function chat(url, appKey, question) {
  const t0 = performance.now();
  const res = await fetch(`${url}/api/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${appKey}`, 'content-type': 'application/json' },
    body: JSON.stringify({ stream: false, detail: true, messages: [{ role: 'user', content: question }] }),
  });
  const body = await res.json();
  const ms = performance.now() - t0;
  if (res.status !== 200) throw new Error(`chat: ${res.status} ${JSON.stringify(body)}`);
  const step = (type) => (body.responseData.find((r) => r.moduleType === type)?.runningTime ?? 0) * 1000;
  return { ms, search: step('datasetSearchNode'), answer: step('chatNode') };
}

async function quietUpload(api, url) {
  const quiet = await api('/api/core/dataset/create', { name: 'quiet upload', vectorModel: 'local-embed' });
  const started = performance.now();
  await uploadFile(url, KEY, quiet, 'quiet.md', generatedMarkdown(IDLE_SECTIONS, 2));
  const indexed = await waitIndexed(api, quiet);
  return { quietChunks: indexed.total, quietS: (performance.now() - started) / 1000 };
}

async function runMode(mode) {
  const dataDir = mkdtempSync(join(tmpdir(), `kbchat-chat-indexing-${mode}-`));
  const kb = await startKbchat({ dataDir, key: KEY, env: { LOCAL_EMBED_PRIORITY: mode } });
  const api = client(kb.url, KEY);
  try {
    if (QUIET_ONLY) return { mode, ...(await quietUpload(api, kb.url)), idle: [], during: [], chunks: 0, withChatsS: 0 };
    const docsDir = join(REPO, 'docs');
    const docs = readdirSync(docsDir).filter((f) => f.endsWith('.md') && f !== 'benchmarks.md');
    const knowledge = await api('/api/core/dataset/create', { name: 'docs', vectorModel: 'local-embed' });
    for (const f of docs) await uploadFile(kb.url, KEY, knowledge, f, readFileSync(join(docsDir, f), 'utf8'));
    const kbProgress = await waitIndexed(api, knowledge);
    const appId = await api('/api/core/app/create', { name: 'docs helper', model: 'local-extractive', datasets: [knowledge] });
    const appKey = await api('/api/support/openapi/create', { name: 'bench', appId });
    const app = await api(`/api/core/app/detail?appId=${appId}`);
    for (let i = 0; i < 3; i++) await chat(kb.url, appKey, QUESTIONS[i]); // warm-up

    const idle = [];
    for (let i = 0; i < CHATS; i++) {
      idle.push(await chat(kb.url, appKey, QUESTIONS[i % QUESTIONS.length]));
      await sleep(THINK_MS);
    }

    const upload = await api('/api/core/dataset/create', { name: 'upload', vectorModel: 'local-embed' });
    const started = performance.now();
    await uploadFile(kb.url, KEY, upload, 'handbook.md', generatedMarkdown(UPLOAD_SECTIONS, 1));
    const during = [];
    let indexed;
    for (let i = 0; ; i++) {
      const p = await trainingProgress(api, upload);
      if (p.total > 0 && p.done === p.total) {
        indexed = p;
        break;
      }
      during.push(await chat(kb.url, appKey, QUESTIONS[i % QUESTIONS.length]));
      await sleep(THINK_MS);
    }
    const withChatsS = (performance.now() - started) / 1000;

    return { mode, app, docs: docs.length, kbChunks: kbProgress.total, idle, during, chunks: indexed.total, withChatsS, ...(await quietUpload(api, kb.url)) };
  } finally {
    await kb.stop();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

const ms = (v) => `${(v / 1000).toFixed(2)} s`;
const stats = (rows, key = 'ms') => {
  const v = rows.map((r) => r[key]);
  return { p50: percentile(v, 50), p95: percentile(v, 95), n: v.length };
};

console.log(
  `chat during indexing: kbchat start (embedded default: local-extractive, local-embed, PGlite), modes ${MODES.join(', ')}; ` +
    `${CHATS} idle chats, think time ${THINK_MS} ms, upload of ${UPLOAD_SECTIONS} sections, quiet upload of ${IDLE_SECTIONS}`,
);
const results = [];
for (const mode of MODES) {
  const r = await runMode(mode);
  results.push(r);
  if (QUIET_ONLY) {
    console.log(
      `LOCAL_EMBED_PRIORITY=${mode}: quiet upload of ${r.quietChunks} chunks embedded in ${r.quietS.toFixed(1)} s (${(r.quietChunks / r.quietS).toFixed(1)} chunks/s)`,
    );
    continue;
  }
  const i = stats(r.idle);
  const d = stats(r.during);
  console.log(`\nLOCAL_EMBED_PRIORITY=${mode} (knowledge: ${r.docs} docs, ${r.kbChunks} chunks; app search ${r.app.search?.searchMode})`);
  console.log(
    `  idle chats:            p50 ${ms(i.p50)}, p95 ${ms(i.p95)} (n ${i.n}; search p50 ${ms(stats(r.idle, 'search').p50)}, answer p50 ${ms(stats(r.idle, 'answer').p50)})`,
  );
  console.log(
    `  chats during indexing: p50 ${ms(d.p50)}, p95 ${ms(d.p95)} (n ${d.n}; search p50 ${ms(stats(r.during, 'search').p50)} p95 ${ms(stats(r.during, 'search').p95)}, answer p50 ${ms(stats(r.during, 'answer').p50)} p95 ${ms(stats(r.during, 'answer').p95)})`,
  );
  console.log(`  upload of ${r.chunks} chunks embedded in ${r.withChatsS.toFixed(1)} s with chats (${(r.chunks / r.withChatsS).toFixed(1)} chunks/s)`);
  console.log(
    `  quiet upload of ${r.quietChunks} chunks embedded in ${r.quietS.toFixed(1)} s, nobody chatting (${(r.quietChunks / r.quietS).toFixed(1)} chunks/s)`,
  );
}
// A mode run more than once (BENCH_MODES=off,on,on,off evens out a machine whose load drifts) counts all its runs.
const merged = (mode) => {
  const runs = results.filter((r) => r.mode === mode);
  if (!runs.length) return undefined;
  const sum = (k) => runs.reduce((n, r) => n + r[k], 0);
  return {
    idle: runs.flatMap((r) => r.idle),
    during: runs.flatMap((r) => r.during),
    chunks: sum('chunks'),
    withChatsS: sum('withChatsS'),
    quietChunks: sum('quietChunks'),
    quietS: sum('quietS'),
    runs: runs.length,
  };
};
const off = merged('off');
const on = merged('on');
if (off && on && QUIET_ONLY) {
  const rate = (r) => r.quietChunks / r.quietS;
  console.log(
    `quiet indexing ${rate(on).toFixed(1)} vs ${rate(off).toFixed(1)} chunks/s (on/off ${(rate(on) / rate(off)).toFixed(2)}; ${on.runs} and ${off.runs} runs)`,
  );
} else if (off && on) {
  const [dOff, dOn] = [stats(off.during), stats(on.during)];
  console.log(`\nlane on vs off (same run; ${on.runs} and ${off.runs} runs):`);
  console.log(
    `  chats during indexing p50 ${ms(dOn.p50)} vs ${ms(dOff.p50)} (x${(dOff.p50 / dOn.p50).toFixed(1)} faster), p95 ${ms(dOn.p95)} vs ${ms(dOff.p95)} (x${(dOff.p95 / dOn.p95).toFixed(1)})`,
  );
  console.log(
    `  idle chats p50 ${ms(stats(on.idle).p50)} vs ${ms(stats(off.idle).p50)}; during / idle p50: on x${(dOn.p50 / stats(on.idle).p50).toFixed(2)}, off x${(dOff.p50 / stats(off.idle).p50).toFixed(2)}`,
  );
  const rate = (r) => r.quietChunks / r.quietS;
  console.log(
    `  quiet indexing ${rate(on).toFixed(1)} vs ${rate(off).toFixed(1)} chunks/s (on/off ${(rate(on) / rate(off)).toFixed(2)}); with chats ${(on.chunks / on.withChatsS).toFixed(1)} vs ${(off.chunks / off.withChatsS).toFixed(1)} chunks/s (with the lane the chats are served: ${dOn.n} vs ${dOff.n} of them)`,
  );
}
