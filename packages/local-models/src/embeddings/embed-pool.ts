// Runs USE-lite in worker threads so that the event loop (the gateway relaying
// other requests) stays free while it embeds. Concurrent requests are coalesced
// into batches; batches take items round-robin across the waiting requests, so
// a query of one sentence is not stuck behind an import of two thousand.
import { Worker } from 'node:worker_threads';
import { existsSync } from 'node:fs';
import { EMBED_DIMENSIONS } from '../models.js';
import { LocalModelError } from '../http-util.js';

export interface EmbedPoolOptions {
  /** Worker threads (each holds its own copy of the model, about 110 MB). */
  workers: number;
  /** Most inputs sent to a worker in one batch. */
  maxBatch: number;
}

/** Unit vectors, and each one as JSON text (made in the worker). */
export interface Embedded {
  vectors: Float32Array[];
  json: string[];
}

interface Job {
  texts: string[];
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
  inFlight: { job: Job; index: number }[];
}

/**
 * The worker is plain JS in ../../worker/, two levels above this file both as
 * src/embeddings/embed-pool.ts (vitest, tsx) and as dist/embeddings/embed-pool.js.
 */
export const EMBED_WORKER_URL = new URL('../../worker/embed-worker.mjs', import.meta.url);

export class EmbedPool {
  private readonly slots: Slot[] = [];
  private readonly jobs: Job[] = [];
  private nextBatchId = 0;
  private closed = false;
  private loadError: Error | undefined;

  constructor(private readonly options: EmbedPoolOptions) {}

  /** Starts the workers and waits until each has loaded the model. */
  async warmup(): Promise<void> {
    this.ensureWorkers();
    await Promise.all(this.slots.map((s) => s.ready));
  }

  /** Embeds non-empty, prepared texts; resolves with one unit vector per text, in order. */
  embed(texts: string[]): Promise<Embedded> {
    if (this.closed) return Promise.reject(new LocalModelError(503, 'local-embed is shut down', 'model_unavailable'));
    if (this.loadError) return Promise.reject(this.loadError);
    if (texts.length === 0) return Promise.resolve({ vectors: [], json: [] });
    this.ensureWorkers();
    return new Promise((resolve, reject) => {
      this.jobs.push({ texts, vectors: new Array(texts.length), json: new Array(texts.length), next: 0, left: texts.length, resolve, reject });
      this.dispatch();
    });
  }

  async close(): Promise<void> {
    this.closed = true;
    const err = new LocalModelError(503, 'local-embed is shutting down', 'model_unavailable');
    for (const job of this.jobs.splice(0)) job.reject(err);
    await Promise.all(this.slots.splice(0).map((s) => s.worker.terminate()));
  }

  private ensureWorkers(): void {
    if (this.slots.length > 0 || this.closed) return;
    if (!existsSync(EMBED_WORKER_URL)) throw new Error(`embedding worker missing at ${EMBED_WORKER_URL.pathname}`);
    for (let i = 0; i < this.options.workers; i++) this.slots.push(this.startWorker());
  }

  private startWorker(): Slot {
    const worker = new Worker(EMBED_WORKER_URL);
    // The pool must not keep a process alive that is otherwise done.
    worker.unref();
    const slot: Slot = { worker, ready: Promise.resolve(), busy: true, inFlight: [] };
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
      if (slot.busy || this.jobs.length === 0) continue;
      const batch = this.takeBatch();
      slot.busy = true;
      slot.inFlight = batch;
      slot.worker.postMessage({ id: this.nextBatchId++, texts: batch.map((b) => b.job.texts[b.index]) });
    }
  }

  /** Round-robin over waiting jobs, one text each per turn, up to maxBatch. */
  private takeBatch(): { job: Job; index: number }[] {
    const batch: { job: Job; index: number }[] = [];
    while (batch.length < this.options.maxBatch && this.jobs.length > 0) {
      for (let j = 0; j < this.jobs.length && batch.length < this.options.maxBatch; ) {
        const job = this.jobs[j];
        batch.push({ job, index: job.next++ });
        if (job.next === job.texts.length) this.jobs.splice(j, 1);
        else j++;
      }
    }
    return batch;
  }

  private onResult(slot: Slot, msg: BatchResult): void {
    const batch = slot.inFlight;
    slot.inFlight = [];
    slot.busy = false;
    if (msg.error !== undefined || !msg.vectors || !msg.json) {
      const err = new LocalModelError(500, `local-embed failed: ${msg.error}`, 'local_model_error');
      for (const job of new Set(batch.map((b) => b.job))) this.rejectJob(job, err);
    } else {
      for (let i = 0; i < batch.length; i++) {
        const { job, index } = batch[i];
        job.vectors[index] = msg.vectors.subarray(i * EMBED_DIMENSIONS, (i + 1) * EMBED_DIMENSIONS);
        job.json[index] = msg.json[i]!;
        if (--job.left === 0) job.resolve({ vectors: job.vectors, json: job.json });
      }
    }
    this.dispatch();
  }

  private rejectJob(job: Job, err: Error): void {
    const at = this.jobs.indexOf(job);
    if (at >= 0) this.jobs.splice(at, 1);
    job.left = -1; // later batches of this job are ignored
    job.reject(err);
  }

  private onWorkerDied(slot: Slot, err: Error): void {
    const at = this.slots.indexOf(slot);
    if (at < 0) return;
    const failure = new LocalModelError(500, `local-embed worker failed: ${err.message}`, 'local_model_error');
    for (const job of new Set(slot.inFlight.map((b) => b.job))) this.rejectJob(job, failure);
    // Replace it so that one bad batch does not take the model away for good.
    if (!this.closed && !this.loadError) this.slots[at] = this.startWorker();
    else this.slots.splice(at, 1);
  }

  private failAll(err: LocalModelError): void {
    this.loadError = err;
    for (const job of this.jobs.splice(0)) job.reject(err);
  }
}

interface BatchResult {
  id: number;
  vectors?: Float32Array;
  json?: string[];
  error?: string;
}
