// npm run bench:console: the console's reads on 1,000,000 log rows. Per store
// (PGlite always; PostgreSQL and MariaDB/MySQL when they answer), fills the
// log through the product's own write path (LogsStore.insertMany: COPY or
// multi-row INSERT, with the rollups in the same transaction), then times
// GET /api/dashboard and GET /api/logs over HTTP against a baseline measured
// in the same run: the raw query over the log table (aggregates with the
// time index; the old list: id order, OFFSET, count(*), filters no index
// serves). Also what the rollups and list indexes cost a write, on a scratch
// store. Not a test: it prints figures (docs/benchmarks.md keeps them).
//   CONSOLE_BENCH_ROWS (1000000) CONSOLE_BENCH_RUNS (30) CONSOLE_BENCH_STORES (pglite,postgres,mysql)
//   TEST_POSTGRES_URL, TEST_MYSQL_URL: admin URLs of the servers (as the tests use)
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sql } from 'kysely';
import { loadGatewayConfig, openStore, startGateway } from '../dist/index.js';
import { LogsStore } from '../dist/logs/store.js';
import { percentile } from './lib.mjs';

const ROWS = Number(process.env.CONSOLE_BENCH_ROWS ?? 1_000_000);
const RUNS = Number(process.env.CONSOLE_BENCH_RUNS ?? 30);
const BASE_RUNS = Math.max(3, Math.round(RUNS / 6));
const STORES = (process.env.CONSOLE_BENCH_STORES ?? 'pglite,postgres,mysql').split(',');
const PG_ADMIN = process.env.TEST_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const MYSQL_ADMIN = process.env.TEST_MYSQL_URL ?? 'mysql://root@127.0.0.1:3306/';
const TOKEN = 'sk-bench-console-root-token';
const SPAN_MS = 8 * 86_400_000;
const MODELS = Array.from({ length: 12 }, (_, i) => `model-${i}`);
const USERS = 50;
const TOKENS = 100; // token t belongs to user t % USERS + 1
const ERROR_RATE = 0.03;

/** A deterministic generator, so that every store gets the same rows. */
function rng(seed) {
  let s = seed >>> 0;
  return () => (s = (Math.imul(s, 1664525) + 1013904223) >>> 0) / 2 ** 32;
}

/** `count` rows from the `start`th, spread over the SPAN_MS before `now` (or at timeOf(i) when given). */
function makeRows(start, count, now, random, timeOf) {
  const rows = [];
  for (let i = start; i < start + count; i++) {
    const token = 1 + Math.floor(random() ** 2 * TOKENS); // a few tokens do most requests
    const m = Math.floor(random() ** 1.5 * MODELS.length);
    const failed = random() < ERROR_RATE;
    const prompt = failed ? 0 : 20 + Math.floor(random() * 2000);
    const completion = failed ? 0 : Math.floor(random() * 800);
    rows.push({
      request_id: `req${i.toString(36).padStart(8, '0')}${((i * 2654435761) >>> 0).toString(16)}`,
      created_at: timeOf ? timeOf(i) : now - SPAN_MS + Math.floor((i * SPAN_MS) / ROWS),
      user_id: (token % USERS) + 1,
      token_id: token,
      channel_id: 1 + (m % 6),
      endpoint: 'chat',
      model: MODELS[m],
      upstream_model: MODELS[m],
      is_stream: i % 3 === 0 ? 1 : 0,
      prompt_tokens: prompt,
      completion_tokens: completion,
      usage_source: 'upstream',
      cost: prompt * 2 + completion * 6,
      latency_ms: Math.round(40 * Math.exp(random() * 4)),
      ttft_ms: null,
      status: failed ? (random() < 0.5 ? 429 : 502) : 200,
      error: failed ? 'upstream said no' : null,
      attempts: 1,
      request_body: null,
    });
  }
  return rows;
}

async function serverDatabase(kind) {
  const name = `kbchat_bench_${randomBytes(4).toString('hex')}`;
  try {
    if (kind === 'postgres') {
      const pg = (await import('pg')).default;
      const c = new pg.Client({ connectionString: PG_ADMIN, connectionTimeoutMillis: 2000 });
      await c.connect();
      await c.query(`create database ${name}`);
      await c.end();
      const url = new URL(PG_ADMIN);
      url.pathname = `/${name}`;
      return {
        url: url.toString(),
        async drop() {
          const d = new pg.Client({ connectionString: PG_ADMIN });
          await d.connect();
          await d.query(`drop database if exists ${name} with (force)`);
          await d.end();
        },
      };
    }
    const mysql = (await import('mysql2/promise')).default;
    const c = await mysql.createConnection({ uri: MYSQL_ADMIN, connectTimeout: 2000 });
    await c.query(`create database ${name}`);
    await c.end();
    const url = new URL(MYSQL_ADMIN);
    url.pathname = `/${name}`;
    return {
      url: url.toString(),
      async drop() {
        const d = await mysql.createConnection({ uri: MYSQL_ADMIN });
        await d.query(`drop database if exists ${name}`);
        await d.end();
      },
    };
  } catch (err) {
    return { skip: `${kind === 'postgres' ? `PostgreSQL at ${PG_ADMIN}` : `MySQL/MariaDB at ${MYSQL_ADMIN}`} is absent (${err.message})` };
  }
}

/**
 * µs per row of insertMany as a busy gateway's flush calls it (1,000 rows of
 * one second, 100 tokens), as the product writes; without the rollups; and
 * without the list indexes either (the write path before this change).
 */
async function writeCost(url) {
  const store = await openStore({ url });
  const logs = new LogsStore(store.db, store.kind === 'pglite');
  const random = rng(7);
  const t0 = Date.now();
  const time = async (n, offset) => {
    const t = performance.now();
    for (let i = 0; i < n; i += 1000) await logs.insertMany(makeRows(offset + i, 1000, 0, random, (j) => t0 + Math.floor(j / 1000) * 1000 + (j % 1000)));
    return ((performance.now() - t) * 1000) / n;
  };
  const N = 20_000;
  await time(5_000, 0); // warm
  const product = await time(N, 1_000_000);
  const add = logs.rollups.add;
  logs.rollups.add = async () => {};
  const noRollups = await time(N, 2_000_000);
  for (const idx of ['logs_time_idx', 'logs_token_time_idx', 'logs_channel_time_idx', 'logs_model_time_idx', 'logs_user_time_idx', 'logs_failed_time_idx']) {
    await sql
      .raw(store.kind === 'mysql' ? `drop index ${idx} on logs` : `drop index if exists ${idx}`)
      .execute(store.db)
      .catch(() => {});
  }
  const bare = await time(N, 3_000_000);
  logs.rollups.add = add;
  await store.close();
  return { product, noRollups, bare };
}

async function timeIt(fn, runs) {
  await fn();
  const ms = [];
  for (let i = 0; i < runs; i++) {
    const t = performance.now();
    await fn();
    ms.push(performance.now() - t);
  }
  ms.sort((a, b) => a - b);
  return { p50: percentile(ms, 50), p95: percentile(ms, 95) };
}

const fmt = (n) => (n >= 100 ? n.toFixed(0) : n.toFixed(1)).padStart(7);

async function benchStore(kind) {
  let server;
  let url;
  let dataDir;
  if (kind === 'pglite') {
    dataDir = mkdtempSync(join(tmpdir(), 'kbchat-console-bench-'));
    url = undefined;
  } else {
    server = await serverDatabase(kind);
    if (server.skip) {
      console.log(`\n== ${kind}: skipped, ${server.skip}`);
      return;
    }
    url = server.url;
  }
  console.log(`\n== ${kind}: ${ROWS.toLocaleString('en')} log rows`);
  const scratch = kind === 'pglite' ? { url: 'memory://', drop: async () => {} } : await serverDatabase(kind);
  const cost = await writeCost(scratch.url);
  await scratch.drop();
  console.log(
    `flush write, µs a row (1,000-row flushes): ${cost.product.toFixed(1)} (rows + list indexes + rollups), ${cost.noRollups.toFixed(1)} without rollups, ` +
      `${cost.bare.toFixed(1)} without the new indexes either (before this change)`,
  );

  const config = loadGatewayConfig(
    { INITIAL_ROOT_TOKEN: TOKEN, LOCAL_MODELS: 'off', LOG_RETENTION_DAYS: '0' },
    { host: '127.0.0.1', port: 0, dataDir: dataDir ?? tmpdir(), databaseUrl: url, logLevel: 'warn', retestIntervalMs: 0 },
  );
  const gw = await startGateway(config, () => {});
  try {
    const db = gw.services.store.db;
    const now = Date.now();
    const random = rng(42);
    const started = performance.now();
    for (let i = 0; i < ROWS; i += 10_000) await gw.services.logsStore.insertMany(makeRows(i, Math.min(10_000, ROWS - i), now, random));
    if (kind !== 'mysql') await sql`analyze`.execute(db);
    else await sql`analyze table logs, log_rollups`.execute(db);
    const rollupRows = Number((await sql`select count(*) as n from log_rollups`.execute(db)).rows[0].n);
    const secs = (performance.now() - started) / 1000;
    console.log(
      `filled in ${secs.toFixed(1)} s (${((secs * 1e6) / ROWS).toFixed(0)} µs a row: 10k-row batches over 8 days, sparse for rollups); ${rollupRows.toLocaleString('en')} rollup rows`,
    );

    const api = async (path) => {
      const res = await fetch(gw.url + path, { headers: { authorization: `Bearer ${TOKEN}` } });
      if (res.status !== 200) throw new Error(`${path}: ${res.status} ${await res.text()}`);
      return res.json();
    };
    const q = (s) => s.execute(db);
    const isPg = kind !== 'mysql';
    const pct = isPg
      ? sql`, percentile_cont(0.5) within group (order by latency_ms) as p50, percentile_cont(0.95) within group (order by latency_ms) as p95`
      : sql``;
    const rawDashboard = (from, step, by) => {
      const bucket = sql`created_at - (created_at % ${sql.lit(step)})`;
      const col = by === 'model' ? 'model' : `${by}_id`;
      const group = by ? sql`${bucket}, ${sql.ref(col)}` : bucket;
      return q(sql`select ${bucket} as b, ${by ? sql.ref(col) : sql`''`} as k, count(*) as requests,
        sum(case when status >= 400 or error is not null then 1 else 0 end) as errors, sum(prompt_tokens) as p, sum(completion_tokens) as c,
        sum(cost) as cost ${pct} from logs where created_at >= ${from} and created_at < ${now} group by ${group}`);
    };
    const rawUsers = (from) =>
      q(sql`select user_id, sum(cost) as c from logs where created_at >= ${from} and created_at < ${now} group by user_id order by c desc limit 10`);

    const results = [];
    const row = (name, ours, base) => {
      results.push({ name, ours, base });
      console.log(
        `${name.padEnd(40)} p50 ${fmt(ours.p50)} ms  p95 ${fmt(ours.p95)} ms   baseline p50 ${fmt(base.p50)} ms  ratio ${(base.p50 / ours.p50).toFixed(1)}`,
      );
    };
    for (const [label, span, step] of [
      ['hour', 3_600_000, 60_000],
      ['day', 86_400_000, 3_600_000],
      ['week', 7 * 86_400_000, 3_600_000],
    ]) {
      const from = now - span;
      for (const by of [undefined, 'model', 'token', 'user']) {
        const path = `/api/dashboard?from=${from}&to=${now}${by ? `&group_by=${by}` : ''}`;
        const ours = await timeIt(() => api(path), RUNS);
        const base = await timeIt(async () => {
          await rawDashboard(from, step, by);
          await rawUsers(from);
        }, BASE_RUNS);
        row(`dashboard, last ${label}${by ? `, by ${by}` : ''}`, ours, base);
      }
    }

    // What the token and user groups' percentiles cost on their own: their rollups keep no histogram,
    // so the dashboard reads the shown groups' latencies from the log (RollupStore.latencyHistograms).
    for (const [label, span] of [
      ['day', 86_400_000],
      ['week', 7 * 86_400_000],
    ]) {
      for (const dim of ['token', 'user']) {
        const answer = await api(`/api/dashboard?from=${now - span}&to=${now}&group_by=${dim}`);
        const keys = answer.groups.filter((g) => !g.other).map((g) => g.key);
        const rowsRead = answer.groups.filter((g) => !g.other).reduce((n, g) => n + g.totals.requests, 0);
        const t = await timeIt(() => gw.services.logsStore.rollups.latencyHistograms(dim, keys, answer.from, answer.to), RUNS);
        console.log(
          `${`${dim} percentiles from the log, ${label}`.padEnd(40)} p50 ${fmt(t.p50)} ms  p95 ${fmt(t.p95)} ms   (${keys.length} groups, ${rowsRead.toLocaleString('en')} log rows)`,
        );
      }
    }

    const cols = sql.raw('id, request_id, created_at, user_id, token_id, channel_id, endpoint, model, status, cost, latency_ms');
    const oldList = (where, offset = 0) =>
      Promise.all([
        q(sql`select ${cols} from logs where ${where} order by id desc limit 50 offset ${offset}`),
        q(sql`select count(*) as n from logs where ${where}`),
      ]);
    const first = await api('/api/logs?limit=50');
    row('logs, first page', await timeIt(() => api('/api/logs?limit=50'), RUNS), await timeIt(() => oldList(sql`1 = 1`), BASE_RUNS));
    // Half-way down by cursor: the cursor of the row 500,000 deep, as a client paging there would hold.
    const deep = (await q(sql`select created_at, id from logs order by created_at desc, id desc limit 1 offset ${Math.floor(ROWS / 2)}`)).rows[0];
    const cursor = `${Number(deep.created_at)}_${Number(deep.id)}`;
    row(
      'logs, page 10,000 deep (cursor)',
      await timeIt(() => api(`/api/logs?limit=50&cursor=${cursor}`), RUNS),
      await timeIt(() => oldList(sql`1 = 1`, Math.floor(ROWS / 2)), BASE_RUNS),
    );
    // A rare token (the generator favours low ids), its errors, in the last three days.
    const from3 = now - 3 * 86_400_000;
    row(
      'logs, filtered (token, errors, 3 days)',
      await timeIt(() => api(`/api/logs?limit=50&token_id=${TOKENS}&status=error&from=${from3}`), RUNS),
      // +0 / concat: the same filter as no index can serve, i.e. the list before this change.
      await timeIt(() => oldList(sql`token_id + 0 = ${TOKENS} and (status >= 400 or error is not null) and created_at + 0 >= ${from3}`), BASE_RUNS),
    );
    const rid = first.data[25].request_id;
    row(
      'logs, request-id search',
      await timeIt(() => api(`/api/logs?request_id=${rid}`), RUNS),
      await timeIt(() => oldList(sql`concat(request_id, '') = ${rid}`), BASE_RUNS),
    );
    console.log(
      `(first page total: ${first.total}${first.total_capped ? ', capped' : ''}; baseline = raw SQL on the log table${isPg ? '' : ', without percentiles: MySQL has no percentile aggregate'})`,
    );
    return results;
  } finally {
    await gw.close();
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
    await server?.drop();
  }
}

for (const kind of STORES) await benchStore(kind);
process.exit(0);
