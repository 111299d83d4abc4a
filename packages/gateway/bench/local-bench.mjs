// Local models under `kbchat start`: embeddings per second through the gateway
// (batched and single), the relay's latency to the simulator while local-embed
// is busy against the same figure idle, and the process's resident memory.
// Targets (issue: local models): busy p99 at most 2x idle p99; RSS under 600 MB.
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fixedRate, freePort, spawnReady, target, throughput } from './lib.mjs';

const SECONDS = Number(process.env.BENCH_LOCAL_SECONDS ?? 6);
const RATE = Number(process.env.BENCH_RATE ?? 200);
const TOKEN = 'sk-bench-local';
const here = new URL('.', import.meta.url).pathname;

const SENTENCES = [
  'The committee approved the new budget after a long debate on Tuesday.',
  'Regular exercise lowers the risk of heart disease in older adults.',
  'The river flooded the valley after three days of heavy rain.',
  'Engineers replaced the worn bearings before the turbine failed.',
  'Children learn languages faster when they hear them every day.',
  'The museum opened a new wing dedicated to modern sculpture.',
  'Vaccination reduced hospital admissions during the winter season.',
  'A small bakery on the corner sells bread made with local flour.',
];
const sentence = (i) => `${SENTENCES[i % SENTENCES.length]} (${i})`;

function memoryMb(pid) {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = (name) => Number(new RegExp(`^${name}:\\s+(\\d+)`, 'm').exec(status)?.[1] ?? NaN);
  return { rss: kb('VmRSS') / 1024, peak: kb('VmHWM') / 1024 };
}

/** Embeds for `ms` with `concurrency` loops of `batch` inputs; returns inputs per second. */
async function embedRate(url, batch, concurrency, ms) {
  let n = 0;
  let errors = 0;
  const end = performance.now() + ms;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async (_, w) => {
      while (performance.now() < end) {
        const input = Array.from({ length: batch }, (_, i) => sentence(n + i + w * 1000));
        const res = await fetch(`${url}/v1/embeddings`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', authorization: `Bearer ${TOKEN}` },
          body: JSON.stringify({ model: 'local-embed', input: batch === 1 ? input[0] : input }),
        });
        const body = await res.json();
        if (res.status !== 200 || body.data?.length !== batch) errors++;
        else n += batch;
      }
    }),
  );
  return { perSecond: n / ((performance.now() - started) / 1000), errors };
}

const simPort = await freePort();
const sim = await spawnReady('node', [resolve(here, '../../upstream-sim/bin/upstream-sim.js'), '--port', String(simPort)], {}, /listening/);
const port = await freePort();
const startedAt = performance.now();
const kbchat = await spawnReady(
  'node',
  [resolve(here, '../../cli/bin/kbchat.js'), 'start', '--data-dir', mkdtempSync(join(tmpdir(), 'kbchat-local-bench-')), '--gateway-port', String(port)],
  {
    GATEWAY_HOST: '127.0.0.1',
    INITIAL_ROOT_TOKEN: TOKEN,
    ROOT_INITIAL_BALANCE: '1000000',
    SIM_API_KEY: 'sk-sim',
    SIM_BASE_URL: `http://127.0.0.1:${simPort}/v1`,
    SIM_MODELS: 'sim-chat',
    LOG_LEVEL: 'warn',
  },
  /\[platform\] listening on/,
  120_000,
);
const url = `http://127.0.0.1:${port}`;
try {
  console.log(`kbchat start (gateway and platform) ready in ${((performance.now() - startedAt) / 1000).toFixed(1)} s (local models loaded at start)`);
  const atStart = memoryMb(kbchat.pid);

  await embedRate(url, 8, 1, 1000); // warm-up
  const single = await embedRate(url, 1, 4, SECONDS * 1000);
  const batched = await embedRate(url, 32, 2, SECONDS * 1000);
  console.log(
    `local-embed through the gateway: ${single.perSecond.toFixed(1)} inputs/s single (1 input a request, 4 at a time), ${batched.perSecond.toFixed(1)} inputs/s batched (32 a request)${single.errors + batched.errors ? `, ${single.errors + batched.errors} failed requests` : ''}`,
  );

  const payload = { model: 'sim-chat', messages: [{ role: 'user', content: 'How fast is the gateway?' }], max_tokens: 64 };
  const relay = target(url, '/v1/chat/completions', TOKEN, payload, 32);
  await throughput(relay.send, 8, 1000); // warm-up
  const idle = await fixedRate(relay.send, RATE, SECONDS * 1000);

  // Keep local-embed busy for the whole measurement (two loops of 32-input
  // requests), from another process: parsing its answers here would delay the
  // measuring loop and be counted as relay latency.
  const busyMs = SECONDS * 1000 + 1500;
  const load = spawn('node', [resolve(here, 'embed-load.mjs'), url, TOKEN, '32', '2', String(busyMs)], { stdio: ['ignore', 'pipe', 'inherit'] });
  let loadOut = '';
  load.stdout.on('data', (d) => (loadOut += d));
  const loadDone = new Promise((r) => load.on('exit', r));
  await new Promise((r) => setTimeout(r, 700));
  const loaded = await fixedRate(relay.send, RATE, SECONDS * 1000);
  await loadDone;
  const busyEmbed = JSON.parse(loadOut);
  await relay.pool.close();

  const ratio = loaded.p99 / idle.p99;
  console.log(
    `relay to the simulator at ${RATE} req/s: idle p50 ${idle.p50.toFixed(2)} ms p99 ${idle.p99.toFixed(2)} ms; while local-embed is busy (${busyEmbed.perSecond.toFixed(0)} inputs/s) p50 ${loaded.p50.toFixed(2)} ms p99 ${loaded.p99.toFixed(2)} ms`,
  );
  console.log(
    `relay p99 busy / idle: ${ratio.toFixed(2)}x (target: at most 2x) ${ratio <= 2 ? 'MET' : 'MISSED'}${idle.errors + loaded.errors ? `; ${idle.errors + loaded.errors} failed requests` : ''}`,
  );
  const end = memoryMb(kbchat.pid);
  console.log(
    `kbchat start resident memory: ${atStart.rss.toFixed(0)} MB after start, ${end.rss.toFixed(0)} MB after the benchmark, peak ${end.peak.toFixed(0)} MB (target: under 600 MB) ${end.peak < 600 ? 'MET' : 'MISSED'}`,
  );
} finally {
  kbchat.kill();
  sim.kill();
}
