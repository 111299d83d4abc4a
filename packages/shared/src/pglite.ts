// PGlite (PostgreSQL in WebAssembly, in-process) for the gateway's and the
// platform's embedded stores: opening a data dir with little memory, and a
// small Kysely dialect. PGlite has one connection, so queries and transactions
// take turns through a lock; everything else is Kysely's own PostgreSQL
// adapter and compiler. Also what both stores' connect code shares: where a
// URL puts PGlite, and node-postgres parsers for a PostgreSQL server. (A
// subpath export, @kbchat/shared/pglite, so that only the stores load Kysely
// and PGlite.)
import { cpSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { spawn } from 'node:child_process';
import { createRequire } from 'node:module';
import type { Extensions, PGlite } from '@electric-sql/pglite';
import { lockStore } from './store-lock.js';
import {
  CompiledQuery,
  PostgresAdapter,
  PostgresIntrospector,
  PostgresQueryCompiler,
  type DatabaseConnection,
  type Dialect,
  type Driver,
  type Kysely,
  type QueryResult,
} from 'kysely';

class Lock {
  private tail: Promise<void> = Promise.resolve();
  acquire(): Promise<() => void> {
    let release!: () => void;
    const next = new Promise<void>((r) => (release = r));
    const prev = this.tail;
    this.tail = prev.then(() => next);
    return prev.then(() => release);
  }
}

/** What the dialect needs of PGlite: the in-process instance, or PGliteThread (pglite-thread.ts). */
export interface PGliteHandle {
  query<R>(sql: string, params?: unknown[], options?: { blob?: Blob }): Promise<{ rows: R[]; affectedRows?: number }>;
  close(): Promise<void>;
}

/** The data of COPY ... FROM '/dev/blob' statements made by copyFromBlob. */
const copyData = new WeakMap<CompiledQuery, Blob>();

/**
 * A COPY ... FROM '/dev/blob' statement with its data, for `executeQuery` on a
 * Kysely handle of the embedded store, inside a transaction as well (COPY is
 * the cheapest way to write many rows into PGlite).
 */
export function copyFromBlob(sql: string, data: Blob): CompiledQuery {
  const query = CompiledQuery.raw(sql, []);
  copyData.set(query, data);
  return query;
}

class PGliteConnection implements DatabaseConnection {
  constructor(private readonly pg: PGliteHandle) {}

  async executeQuery<R>(query: CompiledQuery): Promise<QueryResult<R>> {
    const blob = copyData.get(query);
    const res = await this.pg.query<R>(query.sql, query.parameters as unknown[], blob ? { blob } : undefined);
    const affected = res.affectedRows;
    return {
      rows: res.rows,
      numAffectedRows: affected !== undefined ? BigInt(affected) : undefined,
    };
  }

  // eslint-disable-next-line require-yield
  async *streamQuery<R>(): AsyncIterableIterator<QueryResult<R>> {
    throw new Error('PGlite dialect does not support streaming queries');
  }
}

class PGliteDriver implements Driver {
  private readonly connection: PGliteConnection;
  private releases = new WeakMap<DatabaseConnection, () => void>();

  constructor(
    private readonly pg: PGliteHandle,
    private readonly lock: Lock,
  ) {
    this.connection = new PGliteConnection(pg);
  }

  async init(): Promise<void> {}

  async acquireConnection(): Promise<DatabaseConnection> {
    const release = await this.lock.acquire();
    this.releases.set(this.connection, release);
    return this.connection;
  }

  async beginTransaction(conn: DatabaseConnection): Promise<void> {
    await conn.executeQuery(CompiledQuery.raw('begin'));
  }

  async commitTransaction(conn: DatabaseConnection): Promise<void> {
    await conn.executeQuery(CompiledQuery.raw('commit'));
  }

  async rollbackTransaction(conn: DatabaseConnection): Promise<void> {
    await conn.executeQuery(CompiledQuery.raw('rollback'));
  }

  async releaseConnection(conn: DatabaseConnection): Promise<void> {
    const release = this.releases.get(conn);
    this.releases.delete(conn);
    release?.();
  }

  async destroy(): Promise<void> {
    await this.pg.close();
  }
}

export class PGliteDialect implements Dialect {
  private readonly lock = new Lock();

  constructor(private readonly pg: PGliteHandle) {}

  createAdapter() {
    return new PostgresAdapter();
  }
  createDriver(): Driver {
    return new PGliteDriver(this.pg, this.lock);
  }
  createQueryCompiler() {
    return new PostgresQueryCompiler();
  }
  createIntrospector(db: Kysely<unknown>) {
    return new PostgresIntrospector(db);
  }
}

/**
 * Creating a data dir runs PGlite's initdb, a second WASM instance whose
 * memory (about 450 MB) a long-running process keeps: collected late, and
 * even a worker thread that ends leaves much of it resident (measured with
 * both stores: 628 MB after a first start, 415 MB after a restart). So initdb
 * runs in a short-lived child process, which gives everything back when it exits.
 */
async function createDataDir(dir: string, startParams: string[]): Promise<void> {
  const code = `
    const [pglite, dir, params] = process.argv.slice(1);
    const { PGlite } = require(pglite);
    PGlite.create(dir, { startParams: JSON.parse(params) }).then((pg) => pg.close())
      .catch((err) => { console.error(err?.stack ?? String(err)); process.exit(1); });`;
  // PGlite's CommonJS build, found as require() finds it (import.meta.resolve is not there under vitest's module runner).
  const pglite = createRequire(import.meta.url).resolve('@electric-sql/pglite');
  const child = spawn(process.execPath, ['--input-type=commonjs', '-e', code, pglite, dir, JSON.stringify(startParams)], {
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr.on('data', (d: Buffer) => (stderr += d));
  await new Promise<void>((resolve, reject) => {
    child.once('error', reject);
    child.once('exit', (code) => (code === 0 ? resolve() : reject(new Error(`creating the PGlite data dir ${dir} failed (exit ${code}): ${stderr.trim()}`))));
  });
}

/** PGlite's start parameters with the shared buffers of PGLITE_SHARED_BUFFERS, the store's own, or 16MB. */
async function startParamsOf(sharedBuffers: string | undefined): Promise<string[]> {
  const { PGlite } = await import('@electric-sql/pglite');
  const buffers = process.env.PGLITE_SHARED_BUFFERS || sharedBuffers || '16MB';
  if (!/^\d+(kB|MB|GB)$/.test(buffers)) throw new Error(`PGLITE_SHARED_BUFFERS must look like 64MB (got "${buffers}")`);
  return [...PGlite.defaultStartParams, '-c', `shared_buffers=${buffers}`];
}

/**
 * PGLITE_TEMPLATE: a data dir made by makePGliteTemplate, which new stores
 * copy instead of running initdb (and memory stores load, from its .tar). The
 * test suite makes one for its hundreds of stores (vitest.config.ts): a copy
 * costs milliseconds, initdb seconds of CPU.
 */
function template(): string | undefined {
  const dir = process.env.PGLITE_TEMPLATE;
  return dir && existsSync(`${dir}/PG_VERSION`) ? dir : undefined;
}

/** A new data dir in `target`: a copy of the template, or initdb's. */
async function makeDataDir(target: string, startParams: string[]): Promise<void> {
  const from = template();
  if (from) cpSync(from, target, { recursive: true });
  else await createDataDir(target, startParams);
}

/** Makes a template for PGLITE_TEMPLATE in `dir` (which must not exist), and `<dir>.tar` for memory stores. */
export async function makePGliteTemplate(dir: string): Promise<void> {
  const { PGlite } = await import('@electric-sql/pglite');
  mkdirSync(dir, { recursive: true });
  await createDataDir(dir, await startParamsOf(undefined));
  const pg = await PGlite.create(dir);
  const tar = await pg.dumpDataDir('none');
  await pg.close();
  writeFileSync(`${dir}.tar`, Buffer.from(await tar.arrayBuffer()));
}

/**
 * Creates the data dirs among `targets` that do not exist yet, with one
 * initdb: the others are copies of the first, made before any is opened (a
 * stopped cluster's directory is a whole database; initdb costs seconds of
 * CPU, a copy milliseconds). `kbchat start` makes both embedded stores so on
 * a first start.
 */
export async function createDataDirs(targets: string[]): Promise<void> {
  const missing = targets.filter((t) => t !== 'memory://' && !existsSync(`${t}/PG_VERSION`));
  const [first, ...rest] = missing;
  if (!first) return;
  const locks: ReturnType<typeof lockStore>[] = [];
  try {
    // Taken one by one inside the try: a store another process holds releases those already taken.
    for (const t of missing) locks.push((mkdirSync(t, { recursive: true }), lockStore(t)));
    await makeDataDir(first, await startParamsOf(undefined));
    for (const t of rest) cpSync(first, t, { recursive: true });
  } finally {
    for (const lock of locks) lock.release();
  }
}

/**
 * Where a store's PGlite lives for a database URL: 'memory://' for `memory://`
 * or `pglite:memory`, the directory after `pglite:`, else `<dataDir>/<dirName>`.
 */
export function pgliteTarget(url: string | undefined, dataDir: string | undefined, dirName: string): string {
  if (url === 'memory://' || url === 'pglite:memory') return 'memory://';
  return url?.startsWith('pglite:') ? url.slice('pglite:'.length) : `${dataDir ?? './data'}/${dirName}`;
}

/**
 * node-postgres type parsers that read int8 and numeric as numbers: the
 * stores keep money and epoch-millisecond times in bigint columns, well
 * inside 2^53. Pass `pg.types`.
 */
export function numericTypeParsers(pgTypes: { getTypeParser(oid: number, format?: 'text'): unknown }): {
  getTypeParser(oid: number, format?: 'text' | 'binary'): unknown;
} {
  return { getTypeParser: (oid, format) => (oid === 20 || oid === 1700 ? Number : pgTypes.getTypeParser(oid, format as 'text')) };
}

/**
 * Opens (creating if needed) a PGlite store in `target`, a directory or
 * 'memory://'. PostgreSQL's default 128 MB of shared buffers is resident
 * memory inside the WASM heap; 16 MB holds the gateway's working set
 * (measured: 300 -> 160 MB RSS on a reopened store). A directory is locked
 * for this process until close() (store-lock.ts); `lock: false` is for a
 * caller that holds the lock itself (PGliteThread, on its owner's side).
 */
export async function openPGlite<E extends Extensions = Extensions>(
  target: string,
  options: { sharedBuffers?: string; extensions?: E; lock?: boolean } = {},
): Promise<PGlite> {
  const { PGlite } = await import('@electric-sql/pglite');
  const startParams = await startParamsOf(options.sharedBuffers);
  const lock = target !== 'memory://' && options.lock !== false ? lockStore(target) : undefined;
  let pg: PGlite;
  try {
    if (target !== 'memory://' && !existsSync(`${target}/PG_VERSION`)) {
      mkdirSync(target, { recursive: true });
      await makeDataDir(target, startParams);
    }
    const from = target === 'memory://' ? template() : undefined;
    const loadDataDir = from && existsSync(`${from}.tar`) ? new Blob([readFileSync(`${from}.tar`)]) : undefined;
    pg = (await PGlite.create(target, { startParams, extensions: options.extensions, ...(loadDataDir ? { loadDataDir } : {}) })) as unknown as PGlite;
  } catch (err) {
    lock?.release();
    throw err;
  }
  if (lock) {
    // The lock goes with the store: whoever closes it (the Kysely dialect's destroy) releases it.
    const close = pg.close.bind(pg);
    pg.close = async () => {
      try {
        await close();
      } finally {
        lock.release();
      }
    };
  }
  return pg;
}
