// Compares two builds of the gateway side by side on this noisy machine:
//   git worktree add /tmp/base HEAD~1 && (cd /tmp/base && ln -s "$PWD/node_modules" node_modules && npx tsc -b packages/gateway)
//   node packages/gateway/bench/compare-builds.mjs /tmp/base/packages/gateway/dist/index.js packages/gateway/dist/index.js [stream]
// Each build runs as its own process in front of one simulator; they take
// turns (alternating who goes first) for 7 rounds and the medians are printed.
// The same build against itself gives B/A within about 0.98-1.02.
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { freePort, spawnReady, target, throughput } from './lib.mjs';

const [distA, distB, mode] = process.argv.slice(2);
if (!distA || !distB) {
  console.error('usage: node compare-builds.mjs <gateway dist/index.js A> <gateway dist/index.js B> [stream]');
  process.exit(1);
}
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 7);
const here = new URL('.', import.meta.url).pathname;
const simPort = await freePort();
const sim = await spawnReady('node', [resolve(here, '../../upstream-sim/bin/upstream-sim.js'), '--port', String(simPort)], {}, /listening/);
const builds = [];
for (const dist of [distA, distB]) {
  const port = await freePort();
  const proc = await spawnReady('node', [resolve(here, 'launch-build.mjs'), resolve(dist), String(port), String(simPort)], {}, /listening on/);
  builds.push({ dist, port, proc, rps: [], cpuUs: [] });
}
/** CPU milliseconds a process has used so far (Linux /proc; NaN elsewhere). */
function cpuMs(pid) {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
    return (Number(fields[11]) + Number(fields[12])) * 10;
  } catch {
    return NaN;
  }
}
const payload = { model: 'sim-chat', messages: [{ role: 'user', content: 'How fast is the gateway?' }], max_tokens: 64, stream: mode === 'stream' };
try {
  for (let round = 0; round < ROUNDS; round++) {
    // Alternate who goes first: the same build twice showed about 1.5% in favour of the second.
    for (const b of round % 2 ? [...builds].reverse() : builds) {
      const t = target(`http://127.0.0.1:${b.port}`, '/v1/chat/completions', 'sk-compare', payload, 32);
      await throughput(t.send, 32, 500);
      const before = cpuMs(b.proc.pid);
      const r = await throughput(t.send, 32, 3000);
      b.rps.push(r.rps);
      b.cpuUs.push(((cpuMs(b.proc.pid) - before) * 1000) / Math.max(1, r.ok));
      await t.pool.close();
    }
  }
  const median = (l) => [...l].sort((x, y) => x - y)[Math.floor(l.length / 2)];
  const [a, b] = builds.map((x) => median(x.rps));
  for (const x of builds) {
    console.log(
      `${x.dist}: ${x.rps.map((r) => r.toFixed(0)).join(', ')} req/s, median ${median(x.rps).toFixed(0)}; CPU per request median ${median(x.cpuUs).toFixed(0)} us`,
    );
  }
  const [ca, cb] = builds.map((x) => median(x.cpuUs));
  console.log(`B/A = ${(b / a).toFixed(3)}, CPU per request B/A = ${(cb / ca).toFixed(3)} (${mode === 'stream' ? 'stream' : 'non-stream'}, ${ROUNDS} rounds)`);
} finally {
  for (const x of builds) x.proc.kill();
  sim.kill();
}
