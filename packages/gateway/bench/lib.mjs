// Load generation helpers shared by the benchmarks: closed-loop throughput at
// a fixed number of connections, and open-loop latency at a fixed rate.
import { spawn } from 'node:child_process';
import { createServer } from 'node:net';
import { Pool } from 'undici';

export function freePort() {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
    s.on('error', reject);
  });
}

/** Spawns a process and resolves once a line of its output matches `ready`. */
export function spawnReady(cmd, args, env, ready, timeoutMs = 60_000) {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    const timer = setTimeout(() => reject(new Error(`${args.join(' ')} not ready in ${timeoutMs} ms:\n${out}`)), timeoutMs);
    const onData = (d) => {
      out += d;
      if (ready.test(out)) {
        clearTimeout(timer);
        resolve(child);
      }
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', onData);
    child.on('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`${args.join(' ')} exited with ${code}:\n${out}`));
    });
  });
}

export function percentile(sorted, p) {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
}

function makeRequest(pool, path, headers, body) {
  return async () => {
    const res = await pool.request({ path, method: 'POST', headers, body });
    // Drain the whole body: a stream counts when its last byte arrived.
    for await (const _ of res.body);
    if (res.statusCode !== 200) throw new Error(`status ${res.statusCode}`);
  };
}

export function target(origin, path, token, payload, connections) {
  const pool = new Pool(origin, { connections, pipelining: 1, keepAliveTimeout: 30_000 });
  const headers = { 'content-type': 'application/json', authorization: `Bearer ${token}` };
  return { pool, send: makeRequest(pool, path, headers, JSON.stringify(payload)) };
}

/** Closed loop: `connections` workers send back to back for `ms`. */
export async function throughput(send, connections, ms) {
  const lat = [];
  let errors = 0;
  const end = performance.now() + ms;
  const worker = async () => {
    while (performance.now() < end) {
      const t = performance.now();
      try {
        await send();
        lat.push(performance.now() - t);
      } catch {
        errors++;
      }
    }
  };
  const started = performance.now();
  await Promise.all(Array.from({ length: connections }, worker));
  const secs = (performance.now() - started) / 1000;
  lat.sort((a, b) => a - b);
  return { rps: lat.length / secs, ok: lat.length, errors, p50: percentile(lat, 50), p99: percentile(lat, 99) };
}

/** Open loop: one request every 1000/rate ms for `ms`, whatever the answers do. */
export async function fixedRate(send, rate, ms) {
  const lat = [];
  let errors = 0;
  const pending = [];
  const interval = 1000 / rate;
  const start = performance.now();
  for (let i = 0; ; i++) {
    const due = start + i * interval;
    if (due - start > ms) break;
    const wait = due - performance.now();
    if (wait > 1) await new Promise((r) => setTimeout(r, wait));
    const t = performance.now();
    pending.push(
      send().then(
        () => lat.push(performance.now() - t),
        () => errors++,
      ),
    );
  }
  await Promise.all(pending);
  lat.sort((a, b) => a - b);
  return { ok: lat.length, errors, p50: percentile(lat, 50), p99: percentile(lat, 99) };
}
