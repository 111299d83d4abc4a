// npm run bench: the same load sent to the upstream simulator directly and
// through the gateway, in one run, so the ratio is fair on a noisy machine.
// Prints throughput (32 connections, stream and non-stream) and the latency
// the gateway adds at 200 requests/s (p50, p99). The gateway runs as `kbchat
// gateway` on its embedded store with billing and request logs on.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fixedRate, freePort, spawnReady, target, throughput } from './lib.mjs';

const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 32);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 12);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const RATE = Number(process.env.BENCH_RATE ?? 200);
const TOKEN = 'sk-bench-root-token';
const root = new URL('../../..', import.meta.url).pathname;

const simPort = await freePort();
const gwPort = await freePort();
const barePort = await freePort();
const rawPort = await freePort();
const dataDir = mkdtempSync(join(tmpdir(), 'kbchat-bench-'));
const sim = await spawnReady('node', [join(root, 'packages/upstream-sim/bin/upstream-sim.js'), '--port', String(simPort)], {}, /listening/);
const gateway = await spawnReady(
  'node',
  [join(root, 'packages/cli/bin/kbchat.js'), 'gateway', '--data-dir', dataDir, '--port', String(gwPort)],
  {
    GATEWAY_HOST: '127.0.0.1',
    INITIAL_ROOT_TOKEN: TOKEN,
    ROOT_INITIAL_BALANCE: '1000000',
    SIM_API_KEY: 'sk-sim',
    SIM_BASE_URL: `http://127.0.0.1:${simPort}/v1`,
    SIM_MODELS: 'sim-chat',
    LOG_LEVEL: 'warn',
    LOCAL_MODELS: 'off',
  },
  /listening on/,
);

const bare = await spawnReady('node', [join(root, 'packages/gateway/bench/bare-proxy.mjs'), `http://127.0.0.1:${simPort}`, String(barePort)], {}, /listening/);
const raw = await spawnReady(
  'node',
  [join(root, 'packages/gateway/bench/bare-proxy.mjs'), `http://127.0.0.1:${simPort}`, String(rawPort), 'raw'],
  {},
  /listening/,
);

/** CPU milliseconds a process has used so far (Linux /proc; NaN elsewhere). */
function cpuMs(pid) {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
    return (Number(fields[11]) + Number(fields[12])) * 10; // utime + stime, in 10 ms ticks
  } catch {
    return NaN;
  }
}
/** Throughput of one target, with the CPU microseconds per request its relay process spent (when it has one). */
async function measured(send, pid, ms) {
  const before = pid ? cpuMs(pid) : NaN;
  const r = await throughput(send, CONNECTIONS, ms);
  return { ...r, cpuUs: pid ? ((cpuMs(pid) - before) * 1000) / Math.max(1, r.ok) : NaN };
}

const chat = { model: 'sim-chat', messages: [{ role: 'user', content: 'How fast is the gateway?' }], max_tokens: 64 };
const direct = (payload) => target(`http://127.0.0.1:${simPort}`, '/v1/chat/completions', 'sk-sim', payload, CONNECTIONS);
const viaBare = (payload) => target(`http://127.0.0.1:${barePort}`, '/v1/chat/completions', 'none', payload, CONNECTIONS);
const viaRaw = (payload) => target(`http://127.0.0.1:${rawPort}`, '/v1/chat/completions', 'none', payload, CONNECTIONS);
const viaGateway = (payload) => target(`http://127.0.0.1:${gwPort}`, '/v1/chat/completions', TOKEN, payload, CONNECTIONS);
const fmt = (n) => (Number.isFinite(n) ? n.toFixed(2) : 'n/a');
const rows = [];

try {
  for (const stream of [false, true]) {
    const payload = { ...chat, stream };
    const d = direct(payload);
    const g = viaGateway(payload);
    const b = viaBare(payload);
    const w = viaRaw(payload);
    await throughput(d.send, CONNECTIONS, 1000); // warm-up
    await throughput(g.send, CONNECTIONS, 1000);
    await throughput(b.send, CONNECTIONS, 1000);
    await throughput(w.send, CONNECTIONS, 1000);
    // Interleaved rounds, median of each: this machine is shared and noisy, and
    // drift hits all three alike when they take turns.
    const runs = { d: [], g: [], b: [], w: [] };
    const slice = (SECONDS * 1000) / ROUNDS;
    for (let i = 0; i < ROUNDS; i++) {
      runs.d.push(await measured(d.send, undefined, slice));
      runs.g.push(await measured(g.send, gateway.pid, slice));
      runs.b.push(await measured(b.send, bare.pid, slice));
      runs.w.push(await measured(w.send, raw.pid, slice));
    }
    if (process.env.BENCH_VERBOSE)
      for (const k of ['d', 'g', 'b', 'w']) console.log(stream, k, runs[k].map((r) => `${r.rps.toFixed(0)}@${r.cpuUs.toFixed(0)}`).join(' '));
    const median = (list) => [...list].sort((x, y) => x.rps - y.rps)[Math.floor(list.length / 2)];
    const sum = (list, key) => list.reduce((n, r) => n + r[key], 0);
    const dr = { ...median(runs.d), errors: sum(runs.d, 'errors') };
    const gr = { ...median(runs.g), errors: sum(runs.g, 'errors') };
    const br = { ...median(runs.b), errors: sum(runs.b, 'errors') };
    const wr = { ...median(runs.w), errors: sum(runs.w, 'errors') };
    rows.push({ stream, dr, gr, br, wr });
    const dl = await fixedRate(d.send, RATE, 5000);
    const gl = await fixedRate(g.send, RATE, 5000);
    rows[rows.length - 1].dl = dl;
    rows[rows.length - 1].gl = gl;
    await d.pool.close();
    await g.pool.close();
    await b.pool.close();
    await w.pool.close();
  }
  console.log(
    `\nkbchat relay benchmark: ${CONNECTIONS} connections, ${SECONDS} s per target in ${ROUNDS} interleaved rounds (median), latency at ${RATE} req/s; upstream = the project's simulator`,
  );
  console.log('mode        direct req/s   gateway req/s   ratio    added p50 ms @rate   added p99 ms @rate   errors (direct/gateway)');
  for (const r of rows) {
    const ratio = r.gr.rps / r.dr.rps;
    console.log(
      `${(r.stream ? 'stream' : 'non-stream').padEnd(12)}${r.dr.rps.toFixed(0).padStart(12)}${r.gr.rps.toFixed(0).padStart(16)}   ${(ratio * 100).toFixed(1).padStart(5)}%` +
        `${fmt(r.gl.p50 - r.dl.p50).padStart(18)}${fmt(r.gl.p99 - r.dl.p99).padStart(21)}        ${r.dr.errors + r.dl.errors}/${r.gr.errors + r.gl.errors}`,
    );
  }
  const pct = (a, b) => `${((a / b) * 100).toFixed(1)}%`;
  for (const r of rows) {
    const mode = r.stream ? 'stream' : 'non-stream';
    console.log(
      `  ${mode}: bare proxies with no accounts, billing, logs or retries: Fastify+undici ${r.br.rps.toFixed(0)} req/s = ${pct(r.br.rps, r.dr.rps)} of direct, ` +
        `node:http+undici ${r.wr.rps.toFixed(0)} req/s = ${pct(r.wr.rps, r.dr.rps)}; the gateway reached ${pct(r.gr.rps, r.br.rps)} of the Fastify proxy`,
    );
    console.log(
      `  ${mode}: CPU per request of the relay process: gateway ${fmt(r.gr.cpuUs)} us, Fastify proxy ${fmt(r.br.cpuUs)} us, node:http proxy ${fmt(r.wr.cpuUs)} us`,
    );
  }
  console.log('\ntargets: gateway throughput >= 40% of direct; added p50 < 2 ms at 200 req/s');
  for (const r of rows) {
    console.log(
      `  ${r.stream ? 'stream' : 'non-stream'}: direct p50/p99 ${fmt(r.dl.p50)}/${fmt(r.dl.p99)} ms, gateway ${fmt(r.gl.p50)}/${fmt(r.gl.p99)} ms at ${RATE} req/s; under full load p50 direct ${fmt(r.dr.p50)} ms, gateway ${fmt(r.gr.p50)} ms`,
    );
  }
} finally {
  gateway.kill('SIGTERM');
  bare.kill('SIGTERM');
  raw.kill('SIGTERM');
  sim.kill('SIGTERM');
  await new Promise((r) => setTimeout(r, 500));
  rmSync(dataDir, { recursive: true, force: true });
}
