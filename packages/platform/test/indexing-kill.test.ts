// kill -9 at any moment loses nothing and duplicates nothing: a worker process
// on a PGlite data dir, embedding slowly through a real gateway and the
// simulator, is SIGKILLed several times mid-run and restarted; at the end
// every index has exactly one vector row, every data item one posting row,
// and the queue is empty.
import { execFileSync, spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { sql } from 'kysely';
import ts from 'typescript';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROOT_TOKEN, startTestGateway, type TestGateway } from '../../gateway/test/helpers.js';
import { enqueue, indexingMigrations } from '../src/indexing/index.js';
import { openPlatformStore } from '../src/store/db.js';
import { seed, testResultMigrations } from './fixtures/indexing-stores.js';

const PLATFORM = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const REPO = resolve(PLATFORM, '../..');
// Inside the repository's node_modules, so that the transpiled files resolve kysely, pg, @kbchat/shared (dist) as the sources do.
const BUILD = join(REPO, 'node_modules/.cache/kbchat-platform-indexing-kill', String(process.pid));

/** Transpiles the platform's sources and the test fixtures to JavaScript, keeping the layout (imports stay relative). */
function transpile(): string {
  const files: string[] = [];
  const walk = (dir: string) => {
    for (const name of readdirSync(dir)) {
      const p = join(dir, name);
      if (statSync(p).isDirectory()) walk(p);
      else if (p.endsWith('.ts') && !p.endsWith('.d.ts')) files.push(p);
    }
  };
  for (const d of ['src/indexing', 'src/gateway-client', 'src/store', 'src/ingest', 'src/datasets', 'test/fixtures']) walk(join(PLATFORM, d));
  for (const file of files) {
    const out = join(BUILD, relative(PLATFORM, file)).replace(/\.ts$/, '.js');
    mkdirSync(dirname(out), { recursive: true });
    const { outputText } = ts.transpileModule(readFileSync(file, 'utf8'), {
      fileName: file,
      compilerOptions: { module: ts.ModuleKind.ESNext, target: ts.ScriptTarget.ES2022, sourceMap: false },
    });
    writeFileSync(out, outputText);
  }
  writeFileSync(join(BUILD, 'package.json'), '{"type":"module"}');
  return join(BUILD, 'test/fixtures/indexing-kill-worker.js');
}

/** The child resolves @kbchat/shared to its dist/: build it when missing or older than its sources. */
function ensureSharedBuilt(): void {
  const shared = join(REPO, 'packages/shared');
  const stale = ['index', 'pglite', 'sse', 'errors', 'ids'].some((n) => {
    try {
      return statSync(join(shared, 'dist', `${n}.js`)).mtimeMs < statSync(join(shared, 'src', `${n}.ts`)).mtimeMs;
    } catch {
      return true;
    }
  });
  if (stale) execFileSync(process.execPath, [join(REPO, 'node_modules/typescript/bin/tsc'), '-b', shared], { cwd: REPO, stdio: 'pipe' });
}

let gw: TestGateway;
let script: string;
let dataDir: string;

beforeAll(async () => {
  ensureSharedBuilt();
  script = transpile();
  gw = await startTestGateway({ sim: { embedDelayMs: 200 } });
  dataDir = mkdtempSync(join(tmpdir(), 'kbchat-indexing-kill-'));
}, 120_000);
afterAll(async () => {
  await gw?.close();
  rmSync(BUILD, { recursive: true, force: true });
  if (dataDir) rmSync(dataDir, { recursive: true, force: true });
});

interface Run {
  output: () => string;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  kill(): void;
}

function startWorker(): Run {
  const child = spawn(process.execPath, [script], {
    cwd: REPO,
    env: { ...process.env, KILL_DATA_DIR: join(dataDir, 'platform-db'), KILL_GATEWAY_URL: gw.url, KILL_GATEWAY_TOKEN: ROOT_TOKEN, KILL_LEASE_MS: '1000' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (out += d.toString()));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((r) => child.once('exit', (code, signal) => r({ code, signal })));
  return { output: () => out, exited, kill: () => child.kill('SIGKILL') };
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('kill -9 of a worker process', () => {
  it('loses nothing and duplicates nothing across several SIGKILLs and restarts', async () => {
    const N = 80; // 20 batches of 4 at 200 ms a call: far more than three short runs can finish
    let store = await openPlatformStore({ url: `pglite:${join(dataDir, 'platform-db')}`, migrations: { ...indexingMigrations, ...testResultMigrations } });
    const s = await seed(store.db, { n: N, indexesPer: 2 });
    await enqueue(store.db, s.items);
    await store.close();

    const embedCalls = () => gw.sim.stats().byModel['sim-embed-384'] ?? 0;
    const lastLeft = (out: string) => Number([...out.matchAll(/left (\d+)/g)].at(-1)?.[1] ?? N);
    const leftAtKill: number[] = [];
    // Run 1 is killed in its first embeddings call (nothing committed yet); runs 2 and 3 once
    // they have committed a batch, while other batches are embedding or committing.
    for (const [i, extraMs] of [0, 120, 60].entries()) {
      const calls = embedCalls();
      const run = startWorker();
      const until = Date.now() + 60_000;
      // The child prints its own count of completed items ("done N"): this run has committed a batch.
      const ready = () => (i === 0 ? embedCalls() > calls : /done [1-9]/.test(run.output()));
      while (!ready() && !/finished/.test(run.output()) && Date.now() < until) await sleep(5);
      await sleep(i === 0 ? 80 : extraMs);
      run.kill();
      const { signal } = await run.exited;
      expect(signal, run.output()).toBe('SIGKILL');
      expect(run.output()).not.toMatch(/finished/);
      leftAtKill.push(lastLeft(run.output()));
    }
    // Runs 2 and 3 made progress and were cut off with work left.
    expect(leftAtKill[1]!, String(leftAtKill)).toBeLessThan(N);
    expect(leftAtKill[2]!, String(leftAtKill)).toBeLessThan(leftAtKill[1]!);
    expect(leftAtKill[2]!, String(leftAtKill)).toBeGreaterThan(0);
    const last = startWorker();
    const { code } = await Promise.race([last.exited, sleep(90_000).then(() => ({ code: -1 }))]);
    expect(code, last.output()).toBe(0);

    store = await openPlatformStore({ url: `pglite:${join(dataDir, 'platform-db')}`, migrations: { ...indexingMigrations, ...testResultMigrations } });
    try {
      const queue = await sql<{ n: number }>`select count(*)::int as n from training_queue`.execute(store.db);
      expect(Number(queue.rows[0]!.n)).toBe(0);
      const vectors = await sql<{ missing: number; duplicated: number; stray: number }>`
        select
          (select count(*) from data_indexes i where not exists (select 1 from idx_test_vectors v where v.data_id = i.data_id and v.index_id = i.id))::int as missing,
          (select count(*) from (select 1 from idx_test_vectors group by data_id, index_id having count(*) > 1) d)::int as duplicated,
          (select count(*) from idx_test_vectors v where not exists (select 1 from data_indexes i where i.id = v.index_id))::int as stray`.execute(store.db);
      expect(vectors.rows[0]).toEqual({ missing: 0, duplicated: 0, stray: 0 });
      const totals = await sql<{ vectors: number; postings: number; data: number }>`
        select (select count(*) from idx_test_vectors)::int as vectors, (select count(*) from idx_test_postings)::int as postings, (select count(*) from data)::int as data`.execute(
        store.db,
      );
      expect(totals.rows[0]).toEqual({ vectors: 2 * N, postings: N, data: N });
      // The kills cost repeated work (calls whose results were lost), never repeated results.
      expect(embedCalls()).toBeGreaterThanOrEqual(N / 4);
    } finally {
      await store.close();
    }
  }, 180_000);
});
