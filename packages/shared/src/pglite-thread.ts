// PGlite on a worker thread. The gateway's relay thread spends its time on
// sockets; the request log's COPY into PGlite (WASM) took about a quarter of
// it under load (measured: 4.9-5.5k against 6.5-7k relayed requests/s with the
// COPY skipped). On its own thread the store uses the machine's other core
// and the relay thread never runs SQL. A query costs a message each way (tens
// of microseconds), which is why the platform, whose requests wait on many
// small queries, keeps PGlite in-process.
import { Worker } from 'node:worker_threads';
import type { PGliteHandle } from './pglite.js';
import { lockStore, type StoreLock } from './store-lock.js';

export interface ThreadOptions {
  sharedBuffers?: string;
}
export type ThreadRequest = { id: number; close?: false; sql: string; params?: unknown[]; blob?: Blob } | { id: number; close: true };
export type ThreadReply = { id: number; ready?: true; rows?: unknown[]; affectedRows?: number; error?: Record<string, unknown> };

/** An Error with the fields the worker sent (code, constraint, detail...), so callers test it as they would PGlite's own. */
function errorFrom(data: Record<string, unknown>): Error {
  const err = new Error(String(data.message ?? 'embedded store error'));
  Object.assign(err, data);
  return err;
}

/**
 * The worker gets the process's own flags, less --input-type, which a worker
 * refuses (node --input-type=module -e ...). Where Node refuses them still
 * (V8 flags such as --max-semi-space-size are per process), it gets none: the
 * store's thread needs no flag to run.
 */
function startWorker(file: URL, workerData: unknown): Worker {
  const execArgv = process.execArgv.filter((flag) => !flag.startsWith('--input-type'));
  try {
    return new Worker(file, { workerData, execArgv });
  } catch (err) {
    if ((err as { code?: string }).code !== 'ERR_WORKER_INVALID_EXEC_ARGV') throw err;
    return new Worker(file, { workerData, execArgv: [] });
  }
}

export class PGliteThread implements PGliteHandle {
  private nextId = 1;
  private pending = new Map<number, { resolve: (r: ThreadReply) => void; reject: (e: Error) => void }>();
  private failure: Error | undefined;

  private constructor(
    private readonly worker: Worker,
    private readonly lock: StoreLock | undefined,
  ) {
    worker.on('message', (msg: ThreadReply) => {
      const waiter = this.pending.get(msg.id);
      if (!waiter) return;
      this.pending.delete(msg.id);
      if (this.pending.size === 0) worker.unref();
      if (msg.error) waiter.reject(errorFrom(msg.error));
      else waiter.resolve(msg);
    });
    const stop = (err: Error) => {
      this.failure ??= err;
      for (const waiter of this.pending.values()) waiter.reject(this.failure);
      this.pending.clear();
    };
    worker.on('error', (err) => stop(new Error(`the embedded store's thread failed: ${err.message}`)));
    worker.on('exit', (code) => stop(new Error(`the embedded store's thread has stopped (exit ${code})`)));
  }

  /** Opens (creating if needed) PGlite in `target`, a directory or 'memory://', on a new thread. */
  static async open(target: string, options: ThreadOptions = {}): Promise<PGliteThread> {
    // Locked here, on the owner's thread: a thread that dies without closing
    // cannot leave the store locked to a process that no longer uses it.
    const lock = target === 'memory://' ? undefined : lockStore(target);
    // From src/ (tests run the TypeScript) and from dist/ alike, the worker is the compiled file in dist/.
    const worker = startWorker(new URL('../dist/pglite-thread-worker.js', import.meta.url), { target, options });
    const thread = new PGliteThread(worker, lock);
    const ready = new Promise<ThreadReply>((resolve, reject) => thread.pending.set(0, { resolve, reject }));
    try {
      await ready;
    } catch (err) {
      await worker.terminate();
      lock?.release();
      throw err;
    }
    worker.unref();
    return thread;
  }

  private send(request: ThreadRequest): Promise<ThreadReply> {
    if (this.failure) return Promise.reject(this.failure);
    return new Promise((resolve, reject) => {
      this.pending.set(request.id, { resolve, reject });
      // Referenced while a query is out, so that a process waiting on one does not exit.
      this.worker.ref();
      this.worker.postMessage(request);
    });
  }

  async query<R>(sql: string, params?: unknown[], options?: { blob?: Blob }): Promise<{ rows: R[]; affectedRows?: number }> {
    const res = await this.send({ id: this.nextId++, sql, params, blob: options?.blob });
    return { rows: res.rows as R[], affectedRows: res.affectedRows };
  }

  async close(): Promise<void> {
    if (!this.failure) {
      await this.send({ id: this.nextId++, close: true }).catch(() => undefined);
      this.failure = new Error('the embedded store is closed');
    }
    await this.worker.terminate();
    this.lock?.release();
  }
}
