// npm run bench:scale-out: kbchat's services as separate OS processes on the
// machine's servers, one process against two (docs/scale-out.md).
//
//   relay:    requests/s through one `kbchat gateway` and through two on one
//             database (MariaDB, then PostgreSQL), the load split evenly; on
//             PostgreSQL also the store's commits and written rows per request
//             (pg_stat_database of the bench's own database, read after the
//             gateways exit, which is when a backend's counters are all in).
//   indexing: items/s from the first pushData to an empty queue, one against
//             two `kbchat worker` processes, each run on a fresh PostgreSQL
//             database with pgvector (so that no run inherits another's HNSW
//             index), pushed through a `kbchat platform` with PLATFORM_WORKER=off.
//   memory:   each process's resident set (VmRSS) after its work.
// Rounds alternate one and two processes; every run and the median (the lower
// of two) are printed. A server that
// is absent is skipped, saying so. BENCH_SECONDS (8), BENCH_ROUNDS (3),
// BENCH_ITEMS (10000), BENCH_CONNECTIONS (32) change the sizes; BENCH_ONLY=relay or
// BENCH_ONLY=indexing runs one part.
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import mysql from 'mysql2/promise';
import pg from 'pg';
import { freePort, spawnReady, target, throughput } from '../../gateway/bench/lib.mjs';

const ROOT = resolve(new URL('../../..', import.meta.url).pathname);
const CLI = join(ROOT, 'packages/cli/bin/kbchat.js');
const PG_ADMIN = process.env.TEST_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const MYSQL_ADMIN = process.env.TEST_MYSQL_URL ?? 'mysql://root@127.0.0.1:3306/';
const SECONDS = Number(process.env.BENCH_SECONDS ?? 8);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const ITEMS = Number(process.env.BENCH_ITEMS ?? 10000);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 32);
const TOKEN = 'sk-bench-scale-out-0123456789abcdef';
const API_KEY = 'kbchat-bench-scale-out-key';

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor((xs.length - 1) / 2)];
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const dirs = [];
const tmp = (name) => {
  const d = mkdtempSync(join(tmpdir(), `kbchat-bench-scale-${name}-`));
  dirs.push(d);
  return d;
};

/** Resident memory of a process, MB. */
function rssMb(pid) {
  const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Math.round(Number(m[1]) / 1024) : NaN;
}

/** `kbchat <command>` as its own process on 127.0.0.1, ready; a worker has no port. */
async function service(command, env) {
  const port = await freePort();
  const args = command === 'worker' ? [CLI, command] : [CLI, command, '--port', String(port)];
  const ready = { gateway: /\[gateway\] listening on/, platform: /\[platform\] listening on/, worker: /\[worker\] indexing: waiting for work/ }[command];
  const child = await spawnReady(
    process.execPath,
    args,
    { LOG_LEVEL: 'warn', LOCAL_MODELS: 'off', HOST: '127.0.0.1', GATEWAY_HOST: '127.0.0.1', ...env },
    ready,
    120_000,
  );
  const exited = new Promise((r) => child.once('exit', r));
  return {
    child,
    url: `http://127.0.0.1:${port}`,
    async stop() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      await Promise.race([exited, sleep(15_000).then(() => child.kill('SIGKILL'))]);
    },
  };
}

/** A fresh database on the server, or the reason there is none. */
async function freshDatabase(kind) {
  const name = `kbchat_bench_${randomBytes(4).toString('hex')}`;
  if (kind === 'postgres') {
    const admin = new pg.Client({ connectionString: PG_ADMIN, connectionTimeoutMillis: 2000 });
    try {
      await admin.connect();
    } catch (err) {
      return { skip: `PostgreSQL not available at ${PG_ADMIN}: ${err.message}` };
    }
    const vector = (await admin.query(`select 1 from pg_available_extensions where name = 'vector'`)).rowCount > 0;
    await admin.query(`create database ${name}`);
    const url = Object.assign(new URL(PG_ADMIN), { pathname: `/${name}` }).href;
    return {
      url,
      vector,
      /** Server connections open to this database now (the processes' pools). */
      async connections() {
        return (await admin.query('select count(*)::int as n from pg_stat_activity where datname = $1', [name])).rows[0].n;
      },
      /** Commits and rows written in this database so far (complete once its connections have closed). */
      async counters() {
        const { rows } = await admin.query('select xact_commit, tup_inserted, tup_updated, tup_deleted from pg_stat_database where datname = $1', [name]);
        return Object.fromEntries(Object.entries(rows[0]).map(([k, v]) => [k, Number(v)]));
      },
      async drop() {
        await admin.query(`drop database if exists ${name} with (force)`);
        await admin.end();
      },
    };
  }
  let conn;
  try {
    conn = await mysql.createConnection({ uri: MYSQL_ADMIN, connectTimeout: 2000 });
  } catch (err) {
    return { skip: `MariaDB/MySQL not available at ${MYSQL_ADMIN}: ${err.message}` };
  }
  await conn.query(`create database ${name}`);
  return {
    url: Object.assign(new URL(MYSQL_ADMIN), { pathname: `/${name}` }).href,
    async connections() {
      const [rows] = await conn.query('select count(*) as n from information_schema.processlist where db = ?', [name]);
      return Number(rows[0].n);
    },
    async drop() {
      await conn.query(`drop database if exists ${name}`);
      await conn.end();
    },
  };
}

const simPort = await freePort();
const sim = await spawnReady(process.execPath, [join(ROOT, 'packages/upstream-sim/bin/upstream-sim.js'), '--port', String(simPort)], {}, /listening/);
const simUrl = `http://127.0.0.1:${simPort}`;
console.log(
  `machine: ${cpus().length} cores (${cpus()[0]?.model}), load average at start ${loadavg()
    .map((l) => l.toFixed(1))
    .join(' ')}; other work shares them, so figures are indicative`,
);
console.log(`relay: ${CONNECTIONS} connections, ${SECONDS} s a measurement, ${ROUNDS} rounds; indexing: ${ITEMS} items a run`);

// ---- relay: one gateway process against two on one database ----

/** One measurement: `n` gateways started on `db`, the load split evenly over them, then stopped. */
async function relayRun(db, n) {
  const env = {
    GATEWAY_DATABASE_URL: db.url,
    GATEWAY_SECRET_KEY: 'bench-scale-out-secret',
    INITIAL_ROOT_TOKEN: TOKEN,
    ROOT_INITIAL_BALANCE: '1000000000',
    SIM_API_KEY: 'sk-sim',
    SIM_BASE_URL: `${simUrl}/v1`,
    SIM_MODELS: 'sim-chat',
  };
  const gateways = [];
  for (let i = 0; i < n; i++) gateways.push(await service('gateway', { ...env, DATA_DIR: tmp(`gw${i}`) }));
  const payload = { model: 'sim-chat', messages: [{ role: 'user', content: 'How fast is the gateway?' }], max_tokens: 64 };
  const targets = gateways.map((g) => target(g.url, '/v1/chat/completions', TOKEN, payload, Math.ceil(CONNECTIONS / n)));
  let next = 0;
  const send = () => targets[next++ % n].send();
  const before = await db.counters?.();
  const warm = await throughput(send, CONNECTIONS, 1500); // connections, leases, caches
  const r = await throughput(send, CONNECTIONS, SECONDS * 1000);
  const rss = gateways.map((g) => rssMb(g.child.pid));
  const connections = await db.connections();
  await Promise.all(targets.map((t) => t.pool.close()));
  await Promise.all(gateways.map((g) => g.stop()));
  let store;
  if (before) {
    await sleep(500);
    const after = await db.counters();
    // Everything from the warm-up to the exits, the timers' own writes included: an upper bound per request.
    const all = warm.ok + r.ok;
    store = {
      commitsPerRequest: (after.xact_commit - before.xact_commit) / all,
      rowsPerRequest: (after.tup_inserted + after.tup_updated + after.tup_deleted - before.tup_inserted - before.tup_updated - before.tup_deleted) / all,
    };
  }
  return { ...r, rss, store, connections };
}

async function relayBench(kind) {
  const db = await freshDatabase(kind);
  if (db.skip) {
    console.log(`relay on ${kind}: skipped (${db.skip})`);
    return;
  }
  try {
    // The first start migrates: not timed.
    await (
      await service('gateway', {
        GATEWAY_DATABASE_URL: db.url,
        GATEWAY_SECRET_KEY: 'bench-scale-out-secret',
        INITIAL_ROOT_TOKEN: TOKEN,
        ROOT_INITIAL_BALANCE: '1000000000',
        SIM_API_KEY: 'sk-sim',
        SIM_BASE_URL: `${simUrl}/v1`,
        SIM_MODELS: 'sim-chat',
        DATA_DIR: tmp('gw-init'),
      })
    ).stop();
    const runs = { 1: [], 2: [] };
    for (let round = 0; round < ROUNDS; round++) {
      for (const n of round % 2 ? [2, 1] : [1, 2]) {
        const r = await relayRun(db, n);
        runs[n].push(r);
        const store = r.store ? `, store ${r.store.commitsPerRequest.toFixed(3)} commits and ${r.store.rowsPerRequest.toFixed(2)} rows written a request` : '';
        console.log(
          `  relay on ${kind}, ${n} gateway${n > 1 ? 's' : ''}: ${Math.round(r.rps)} req/s, p50 ${r.p50.toFixed(1)} ms, p99 ${r.p99.toFixed(1)} ms, ${r.errors} errors, RSS ${r.rss.join(' + ')} MB, ${r.connections} store connections${store}`,
        );
      }
    }
    for (const n of [1, 2]) {
      const rs = runs[n];
      console.log(
        `relay on ${kind}, ${n} gateway process${n > 1 ? 'es' : ''}: ${rs.map((r) => Math.round(r.rps)).join(', ')} req/s (median ${Math.round(median(rs.map((r) => r.rps)))}; p99 ${rs.map((r) => r.p99.toFixed(0)).join(', ')} ms)` +
          (rs[0].store ? `, ${rs.map((r) => r.store.commitsPerRequest.toFixed(3)).join(', ')} store commits a request` : ''),
      );
    }
  } finally {
    await db.drop();
  }
}

// ---- indexing: one worker process against two ----

const TOPICS = ['harbour tides', 'orchard frost', 'railway signals', 'library archives', 'glacier melt', 'market prices', 'river levels', 'wind farms'];

async function indexingRun(gateway, configPath, workersN) {
  const db = await freshDatabase('postgres');
  if (db.skip || !db.vector) {
    if (!db.skip) await db.drop();
    return { skip: db.skip ?? 'pgvector is not installed in this PostgreSQL' };
  }
  const env = (name, extra = {}) => ({
    DATA_DIR: tmp(name),
    DATABASE_URL: db.url,
    GATEWAY_URL: gateway.url,
    GATEWAY_TOKEN: TOKEN,
    CONFIG_PATH: configPath,
    INITIAL_API_KEY: API_KEY,
    ROOT_PASSWORD: 'bench-root-password',
    ...extra,
  });
  const platform = await service('platform', env('pl', { PLATFORM_WORKER: 'off' }));
  const workers = await Promise.all(Array.from({ length: workersN }, (_, i) => service('worker', env(`w${i}`))));
  const api = async (path, body) => {
    const res = await fetch(`${platform.url}${path}`, {
      method: body ? 'POST' : 'GET',
      headers: { authorization: `Bearer ${API_KEY}`, ...(body ? { 'content-type': 'application/json' } : {}) },
      body: body ? JSON.stringify(body) : undefined,
    });
    const json = await res.json();
    if (res.status !== 200) throw new Error(`${path}: ${res.status} ${JSON.stringify(json)}`);
    return json.data;
  };
  const queue = new pg.Client({ connectionString: db.url });
  await queue.connect();
  try {
    const datasetId = await api('/api/core/dataset/create', { name: 'bench', vectorModel: 'sim-embed-384' });
    const { collectionId } = await api('/api/core/dataset/collection/create/text', { datasetId, name: 'bench', text: 'Readings from the stations.' });
    const started = performance.now();
    // 200 items a push (the API's limit), three pushes in flight.
    const pushes = Array.from({ length: Math.ceil(ITEMS / 200) }, (_, p) =>
      Array.from({ length: Math.min(200, ITEMS - p * 200) }, (_, i) => {
        const n = p * 200 + i;
        return {
          q: `Record ${n} on ${TOPICS[n % TOPICS.length]}: station ${n % 97} read ${(n * 37) % 1009} units, trend ${n % 3 ? 'rising' : 'falling'} since reading ${n - 1}.`,
        };
      }),
    );
    const inserted = [];
    await Promise.all(
      [0, 1, 2].map(async (lane) => {
        for (let p = lane; p < pushes.length; p += 3)
          inserted.push((await api('/api/core/dataset/data/pushData', { collectionId, data: pushes[p] })).insertLen);
      }),
    );
    const pushed = inserted.reduce((a, b) => a + b, 0);
    const pushedMs = performance.now() - started;
    for (;;) {
      const { rows } = await queue.query('select count(*)::int as n from training_queue');
      if (rows[0].n === 0) break;
      await sleep(50);
    }
    const ms = performance.now() - started;
    const connections = await db.connections();
    const detail = await api(`/api/core/dataset/trainingDetail?datasetId=${datasetId}`);
    if (detail.done !== pushed + 1 || detail.failed) throw new Error(`indexing ended with ${JSON.stringify(detail)}`);
    // The platform's in-memory copies (postings, HNSW graph) load on its first searches.
    for (let i = 0; i < 20; i++) {
      for (const searchMode of ['fullTextRecall', 'embedding'])
        await api('/api/core/dataset/searchTest', { datasetId, text: `station ${i} ${TOPICS[i % TOPICS.length]}`, searchMode });
    }
    await sleep(1000); // the vector copy loads in the background
    await api('/api/core/dataset/searchTest', { datasetId, text: 'glacier melt', searchMode: 'embedding' });
    return { items: pushed + 1, ms, pushedMs, connections, rss: { platform: rssMb(platform.child.pid), workers: workers.map((w) => rssMb(w.child.pid)) } };
  } finally {
    await queue.end();
    await Promise.all([...workers, platform].map((s) => s.stop()));
    await db.drop();
  }
}

async function indexingBench() {
  const gateway = await service('gateway', {
    DATA_DIR: tmp('gw-idx'),
    INITIAL_ROOT_TOKEN: TOKEN,
    ROOT_INITIAL_BALANCE: '1000000000',
    SIM_API_KEY: 'sk-sim',
    SIM_BASE_URL: `${simUrl}/v1`,
    SIM_MODELS: 'sim-chat,sim-embed-384',
  });
  const configPath = join(tmp('config'), 'config.json');
  writeFileSync(
    configPath,
    JSON.stringify({ llmModels: [{ model: 'sim-chat' }], vectorModels: [{ model: 'sim-embed-384' }], systemEnv: { vectorMaxProcess: 2 } }),
  );
  try {
    const runs = { 1: [], 2: [] };
    for (let round = 0; round < ROUNDS; round++) {
      for (const n of round % 2 ? [2, 1] : [1, 2]) {
        const r = await indexingRun(gateway, configPath, n);
        if (r.skip) {
          console.log(`indexing: skipped (${r.skip})`);
          return;
        }
        runs[n].push(r);
        console.log(
          `  indexing, ${n} worker${n > 1 ? 's' : ''}: ${r.items} items in ${(r.ms / 1000).toFixed(1)} s = ${Math.round(r.items / (r.ms / 1000))} items/s (pushes done after ${(r.pushedMs / 1000).toFixed(1)} s), ${r.connections} store connections; RSS platform ${r.rss.platform} MB after searches, worker${n > 1 ? 's' : ''} ${r.rss.workers.join(' + ')} MB, gateway ${rssMb(gateway.child.pid)} MB`,
        );
      }
    }
    for (const n of [1, 2])
      console.log(
        `indexing, ${n} worker process${n > 1 ? 'es' : ''}: ${runs[n].map((r) => Math.round(r.items / (r.ms / 1000))).join(', ')} items/s (median ${Math.round(median(runs[n].map((r) => r.items / (r.ms / 1000))))})`,
      );
  } finally {
    await gateway.stop();
  }
}

const only = process.env.BENCH_ONLY; // relay | indexing
try {
  if (only !== 'indexing') {
    await relayBench('mysql');
    await relayBench('postgres');
  }
  if (only !== 'relay') await indexingBench();
} finally {
  sim.kill('SIGTERM');
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
}
