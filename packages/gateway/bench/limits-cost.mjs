// What a rate limit costs the relay: one build of the gateway (dist/), three
// processes side by side in front of one simulator: no limits (the relay
// checks nothing), a limit on sim-chat counted in the process, and the same
// counted on Redis (REDIS_URL, default redis://127.0.0.1:6379; skipped, saying
// so, where none answers). The limits are set far above what the bench sends,
// so every request is counted and none refused. They take turns for 5 rounds
// (alternating the order); the medians and their ratios to "no limits" are
// printed. Run `npx tsc -b` first.
//   node packages/gateway/bench/limits-cost.mjs
import { resolve } from 'node:path';
import { freePort, spawnReady, target, throughput } from './lib.mjs';

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const here = new URL('.', import.meta.url).pathname;
const dist = resolve(here, '../dist/index.js');

async function redisAnswers() {
  const { Redis } = await import('ioredis');
  const r = new Redis(REDIS_URL, { lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null, connectTimeout: 1000 });
  r.on('error', () => {});
  try {
    await r.connect();
    return (await r.ping()) === 'PONG';
  } catch {
    return false;
  } finally {
    r.disconnect();
  }
}

const simPort = await freePort();
const sim = await spawnReady('node', [resolve(here, '../../upstream-sim/bin/upstream-sim.js'), '--port', String(simPort)], {}, /listening/);
const configs = [
  { name: 'no limits', env: {}, limit: false },
  { name: 'limit, counted in the process', env: {}, limit: true },
];
if (await redisAnswers()) configs.push({ name: 'limit, counted on Redis', env: { REDIS_URL, REDIS_PREFIX: `kbchat-bench-${process.pid}` }, limit: true });
else console.log(`[limits-cost] no Redis answers at ${REDIS_URL}: the Redis row is left out`);

const running = [];
try {
  for (const c of configs) {
    const port = await freePort();
    const proc = await spawnReady(
      'node',
      [resolve(here, 'launch-build.mjs'), dist, String(port), String(simPort)],
      { BENCH_GATEWAY_ENV: JSON.stringify(c.env) },
      /listening on/,
    );
    const origin = `http://127.0.0.1:${port}`;
    if (c.limit) {
      const res = await fetch(`${origin}/api/rate-limits/model/sim-chat`, {
        method: 'PUT',
        headers: { authorization: 'Bearer sk-compare', 'content-type': 'application/json' },
        body: JSON.stringify({ rpm: 2_000_000_000, tpm: 2_000_000_000 }),
      });
      if (res.status !== 200) throw new Error(`setting the limit: HTTP ${res.status} ${await res.text()}`);
    }
    running.push({ ...c, origin, proc, rps: [] });
  }
  const payload = { model: 'sim-chat', messages: [{ role: 'user', content: 'How fast is the gateway?' }], max_tokens: 64 };
  for (let round = 0; round < ROUNDS; round++) {
    for (const b of round % 2 ? [...running].reverse() : running) {
      const t = target(b.origin, '/v1/chat/completions', 'sk-compare', payload, 32);
      await throughput(t.send, 32, 500);
      const r = await throughput(t.send, 32, 3000);
      if (r.ok === 0) throw new Error(`${b.name}: no request answered`);
      b.rps.push(r.rps);
      await t.pool.close();
    }
  }
  const median = (l) => [...l].sort((x, y) => x - y)[Math.floor(l.length / 2)];
  const base = median(running[0].rps);
  for (const b of running) {
    const m = median(b.rps);
    console.log(`${b.name.padEnd(32)} ${b.rps.map((r) => r.toFixed(0)).join(', ')} req/s, median ${m.toFixed(0)} (${(m / base).toFixed(3)} of no limits)`);
  }
} finally {
  for (const b of running) b.proc.kill();
  sim.kill();
}
