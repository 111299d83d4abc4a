// Runs USE-lite in worker threads so that the event loop (the gateway relaying
// other requests) stays free while it embeds. Concurrent requests are coalesced
// into batches; which texts go next is embed-lanes.ts's choice: interactive
// requests ahead of bulk ones, round-robin inside each lane.
import { Worker } from 'node:worker_threads';
import { existsSync } from 'node:fs';
import { EMBED_DIMENSIONS } from '../models.js';
import { LocalModelError } from '../http-util.js';
import { DEFAULT_LANE_OPTIONS, EmbedLanes, type EmbedPriority, type LaneBatch, type LaneOptions } from './embed-lanes.js';

export type { EmbedPriority } from './embed-lanes.js';

export interface EmbedPoolOptions extends Partial<Omit<LaneOptions, 'maxBatch'>> {
  /** Worker threads (each holds its own copy of the model, about 110 MB). */
  workers: number;
  /** Most inputs sent to a worker in one batch. */
  maxBatch: number;
  /**
   * Most inputs the model runs on at once inside a worker (default 8): its
   * WASM memory grows to the largest run and stays there (embed-worker.mjs).
   */
  subBatch?: number;
}

/** What the pool has done, per lane (for benches and tests). */
export interface EmbedPoolStats {
  batches: Record<EmbedPriority, number>;
  texts: Record<EmbedPriority, number>;
  busyMs: Record<EmbedPriority, number>;
}

/** Unit vectors, and each one as JSON text (made in the worker). */
export interface Embedded {
  vectors: Float32Array[];
  json: string[];
}

interface Job {
  texts: string[];
  priority: EmbedPriority;
  vectors: Float32Array[];
  json: string[];
  next: number; // first text not yet handed to a worker
  left: number; // texts not yet answered
  resolve(result: Embedded): void;
  reject(err: Error): void;
}

interface Slot {
  worker: Worker;
  ready: Promise<void>;
  busy: boolean;
  inFlight: LaneBatch<Job> | undefined;
  sentAt: number;
}

/**
 * The worker is plain JS in ../../worker/, two levels above this file both as
 * src/embeddings/embed-pool.ts (vitest, tsx) and as dist/embeddings/embed-pool.js.
 */
export const EMBED_WORKER_URL = new URL('../../worker/embed-worker.mjs', import.meta.url);

export class EmbedPool {
  private readonly slots: Slot[] = [];
  private readonly lanes: EmbedLanes<Job>;
  private nextBatchId = 0;
  private closed = false;
  private loadError: Error | undefined;
  readonly stats: EmbedPoolStats = {
    batches: { interactive: 0, bulk: 0 },
    texts: { interactive: 0, bulk: 0 },
    busyMs: { interactive: 0, bulk: 0 },
  };

  constructor(private readonly options: EmbedPoolOptions) {
    this.lanes = new EmbedLanes({ ...DEFAULT_LANE_OPTIONS, ...definedOnly(options), maxBatch: options.maxBatch });
  }

  /** Starts the workers and waits until each has loaded the model. */
  async warmup(): Promise<void> {
    this.ensureWorkers();
    await Promise.all(this.slots.map((s) => s.ready));
  }

  /**
   * Embeds non-empty, prepared texts; resolves with one unit vector per text, in order.
   * `interactive` (the default: in-process callers answer a chat) goes ahead of `bulk`.
   */
  embed(texts: string[], priority: EmbedPriority = 'interactive'): Promise<Embedded> {
    if (this.closed) return Promise.reject(new LocalModelError(503, 'local-embed is shut down', 'model_unavailable'));
    if (this.loadError) return Promise.reject(this.loadError);
    if (texts.length === 0) return Promise.resolve({ vectors: [], json: [] });
    this.ensureWorkers();
    return new Promise((resolve, reject) => {
      this.lanes.add({ texts, priority, vectors: new Array(texts.length), json: new Array(texts.length), next: 0, left: texts.length, resolve, reject });
      this.dispatch();
    });
  }

  async close(): Promise<void> {
    this.closed = true;
    const err = new LocalModelError(503, 'local-embed is shutting down', 'model_unavailable');
    for (const job of this.lanes.drain()) job.reject(err);
    await Promise.all(this.slots.splice(0).map((s) => s.worker.terminate()));
  }

  private ensureWorkers(): void {
    if (this.slots.length > 0 || this.closed) return;
    if (!existsSync(EMBED_WORKER_URL)) throw new Error(`embedding worker missing at ${EMBED_WORKER_URL.pathname}`);
    for (let i = 0; i < this.options.workers; i++) this.slots.push(this.startWorker());
  }

  private startWorker(): Slot {
    const worker = new Worker(EMBED_WORKER_URL, { workerData: { subBatch: this.options.subBatch ?? 8 } });
    // The pool must not keep a process alive that is otherwise done.
    worker.unref();
    const slot: Slot = { worker, ready: Promise.resolve(), busy: true, inFlight: undefined, sentAt: 0 };
    slot.ready = new Promise<void>((resolve, reject) => {
      const onMessage = (msg: { type?: string; error?: string }): void => {
        if (msg.type === 'ready') {
          slot.busy = false;
          worker.off('message', onMessage);
          worker.on('message', (m: BatchResult) => this.onResult(slot, m));
          resolve();
          this.dispatch();
        } else if (msg.type === 'failed') {
          this.failAll(new LocalModelError(503, `local-embed could not load its model: ${msg.error}`, 'model_unavailable'));
          reject(this.loadError);
        }
      };
      worker.on('message', onMessage);
    });
    slot.ready.catch(() => {}); // reported through the jobs; warmup() rethrows
    worker.on('error', (err) => this.onWorkerDied(slot, err));
    worker.on('exit', (code) => {
      if (!this.closed) this.onWorkerDied(slot, new Error(`embedding worker exited with code ${code}`));
    });
    return slot;
  }

  private dispatch(): void {
    for (const slot of this.slots) {
      if (slot.busy || !this.lanes.waiting) continue;
      const batch = this.lanes.take(performance.now());
      if (!batch) return;
      slot.busy = true;
      slot.inFlight = batch;
      slot.sentAt = performance.now();
      slot.worker.postMessage({ id: this.nextBatchId++, texts: batch.items.map((b) => b.job.texts[b.index]) });
    }
  }

  /** The slot's batch is over (answered or lost): the lanes and the stats learn its time. */
  private settle(slot: Slot, answered: boolean): LaneBatch<Job> | undefined {
    const batch = slot.inFlight;
    slot.inFlight = undefined;
    slot.busy = false;
    if (!batch) return undefined;
    const now = performance.now();
    // A batch that failed says nothing about what the next one will cost.
    const ms = now - slot.sentAt;
    this.lanes.finished(batch, answered ? ms : undefined, now);
    this.stats.batches[batch.priority]++;
    this.stats.texts[batch.priority] += batch.items.length;
    this.stats.busyMs[batch.priority] += ms;
    return batch;
  }

  private onResult(slot: Slot, msg: BatchResult): void {
    const items = this.settle(slot, msg.error === undefined)?.items ?? [];
    if (msg.error !== undefined || !msg.vectors || !msg.json) {
      const err = new LocalModelError(500, `local-embed failed: ${msg.error}`, 'local_model_error');
      for (const job of new Set(items.map((b) => b.job))) this.rejectJob(job, err);
    } else {
      for (let i = 0; i < items.length; i++) {
        const { job, index } = items[i]!;
        job.vectors[index] = msg.vectors.subarray(i * EMBED_DIMENSIONS, (i + 1) * EMBED_DIMENSIONS);
        job.json[index] = msg.json[i]!;
        if (--job.left === 0) job.resolve({ vectors: job.vectors, json: job.json });
      }
    }
    this.dispatch();
  }

  private rejectJob(job: Job, err: Error): void {
    this.lanes.remove(job);
    job.left = -1; // later batches of this job are ignored
    job.reject(err);
  }

  private onWorkerDied(slot: Slot, err: Error): void {
    const at = this.slots.indexOf(slot);
    if (at < 0) return;
    const failure = new LocalModelError(500, `local-embed worker failed: ${err.message}`, 'local_model_error');
    const items = this.settle(slot, false)?.items ?? [];
    for (const job of new Set(items.map((b) => b.job))) this.rejectJob(job, failure);
    // Replace it so that one bad batch does not take the model away for good.
    if (!this.closed && !this.loadError) this.slots[at] = this.startWorker();
    else this.slots.splice(at, 1);
  }

  private failAll(err: LocalModelError): void {
    this.loadError = err;
    for (const job of this.lanes.drain()) job.reject(err);
  }
}

function definedOnly<T extends object>(o: T): Partial<T> {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as Partial<T>;
}

interface BatchResult {
  id: number;
  vectors?: Float32Array;
  json?: string[];
  error?: string;
}
