// The indexing worker: claims due queue items, runs them in batches through an
// injected processor, and settles each batch in one transaction together with
// the item's deletion, so a kill -9 at any point leaves every item either
// still claimable or done, never half done. Many workers (processes) may share
// one PostgreSQL: claims use SKIP LOCKED and completions check the lease.
import { randomBytes } from 'node:crypto';
import type { IndexingRecorder } from '../metrics/index.js';
import type { PlatformDb, PlatformTx } from '../store/database.js';
import {
  DEFAULT_MAX_ATTEMPTS,
  errorText,
  isItemSpecific,
  isRateLimit,
  NO_QA_MODEL,
  NO_VECTOR_MODEL,
  NotConfiguredError,
  reasonOf,
  retryAfterOf,
} from './errors.js';
import {
  claimItems,
  completeItems,
  failItems,
  markWaiting,
  releaseAllLeases,
  releaseItems,
  renewLeases,
  wakeWaiting,
  type IndexingMode,
  type QueueItem,
} from './queue-store.js';

/**
 * Two phases, because PGlite has one connection: a transaction held open over
 * an HTTP call would stall every other query of the process. `prepare` does the
 * network work (embedding, LLM calls) outside any transaction; `commit` writes
 * the results inside the transaction that also completes the items. `commit`
 * may get a subset of the prepared items (the others were taken away meanwhile).
 */
export interface BatchProcessor<P = unknown> {
  /** When set, the processor cannot run (e.g. "no vector model configured"): waiting items of its mode show this text and stay queued. */
  unavailable?: string;
  prepare(items: QueueItem[], db: PlatformDb): Promise<P>;
  commit(tx: PlatformTx, items: QueueItem[], prepared: P): Promise<void>;
  /** After the commit: `items` (those committed) were done, in a batch that started at `startedAt` (epoch ms). */
  settled?(items: QueueItem[], prepared: P, startedAt: number): void;
}

export interface IndexingWorkerOptions {
  db: PlatformDb;
  /** Unique per worker; default host-pid-random. */
  workerId?: string;
  /** Batches in flight at once (systemEnv.vectorMaxProcess / qaMaxProcess). Default 1. */
  concurrency?: number;
  /** Items per batch (one embeddings call for chunk mode). Default 16. */
  batchSize?: number;
  /** Items per batch of a mode, over batchSize (e.g. chunk: 64, one embeddings call's worth). */
  batchSizes?: Partial<Record<IndexingMode, number>>;
  /**
   * After a claim that came back short (nothing more was due), the next claim
   * waits this long, so that items still arriving gather into fuller batches:
   * on the embedded store every batch costs ~10 statements whatever its size.
   * Default 0 (claim at once).
   */
  lingerMs?: number;
  /** How long a claim holds before another worker may take the item; renewed at a third of it. Default 60 s. */
  leaseMs?: number;
  /**
   * No other worker can reach this queue (the embedded store, which one process
   * opens): leases found at start are a dead process's, given back at once
   * instead of after leaseMs. Never on PostgreSQL. Default false.
   */
  soleWorker?: boolean;
  /** Counted failures before an item becomes 'failed'. Default 5. */
  maxAttempts?: number;
  /** Sleep when nothing is due. Default 1 s. */
  pollMs?: number;
  /** One processor per mode this worker runs; a mode without one is left to other workers. */
  processors: Partial<Record<IndexingMode, BatchProcessor<any>>>;
  /** Backoff after a counted failure: base * 2^attempts, capped. Defaults 2 s, 5 min. */
  backoffBaseMs?: number;
  backoffMaxMs?: number;
  /** Pause after a rate limit without Retry-After: base * 2^(streak-1), capped. Defaults 1 s, 60 s. */
  rateLimitBaseMs?: number;
  rateLimitMaxMs?: number;
  /** How long items wait before an unconfigured model is checked again. Default 30 s. */
  unconfiguredRecheckMs?: number;
  /** Store failures inside the loop (the loop keeps going). */
  onError?: (err: unknown) => void;
  /** Called once the queue has had nothing due for quietMs (again after each busy spell): deferred work such as index builds. */
  onQuiet?: () => Promise<unknown>;
  /** Default 2 s. */
  quietMs?: number;
  /** Told how many items each batch settled, and how (the platform's /metrics). */
  metrics?: IndexingRecorder;
}

export interface WorkerStats {
  batches: number;
  done: number;
  failedAttempts: number;
  rateLimited: number;
}

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

export class IndexingWorker {
  readonly workerId: string;
  readonly stats: WorkerStats = { batches: 0, done: 0, failedAttempts: 0, rateLimited: 0 };
  private readonly o: Required<Omit<IndexingWorkerOptions, 'workerId' | 'onError' | 'processors' | 'onQuiet' | 'metrics'>> &
    Pick<IndexingWorkerOptions, 'onError' | 'processors' | 'onQuiet' | 'metrics'>;
  private readonly held = new Set<number>();
  private readonly slots = new Set<Promise<void>>();
  private stopping = false;
  private loopDone: Promise<void> | undefined;
  private wakeUp: (() => void) | undefined;
  private renewTimer: NodeJS.Timeout | undefined;
  private rateLimitStreak = 0;
  /** What the last rate limit said: items held back by its pause show it too. */
  private rateLimitText = '';
  /** No claims before this time (a rate limit pauses the whole worker). */
  pausedUntil = 0;

  constructor(opts: IndexingWorkerOptions) {
    this.workerId = opts.workerId ?? `${process.pid}-${randomBytes(4).toString('hex')}`;
    this.o = {
      concurrency: 1,
      batchSize: 16,
      batchSizes: {},
      lingerMs: 0,
      leaseMs: 60_000,
      soleWorker: false,
      maxAttempts: DEFAULT_MAX_ATTEMPTS,
      pollMs: 1000,
      backoffBaseMs: 2000,
      backoffMaxMs: 300_000,
      rateLimitBaseMs: 1000,
      rateLimitMaxMs: 60_000,
      unconfiguredRecheckMs: 30_000,
      quietMs: 2000,
      ...(Object.fromEntries(Object.entries(opts).filter(([, v]) => v !== undefined)) as IndexingWorkerOptions),
    } as IndexingWorker['o'];
  }

  private get runnable(): IndexingMode[] {
    return (Object.keys(this.o.processors) as IndexingMode[]).filter((m) => this.o.processors[m] && !this.o.processors[m]!.unavailable);
  }

  private sizeOf(mode: IndexingMode): number {
    return this.o.batchSizes[mode] ?? this.o.batchSize;
  }

  start(): this {
    if (this.loopDone) return this;
    this.stopping = false;
    this.renewTimer = setInterval(() => void this.renew(), Math.max(50, Math.floor(this.o.leaseMs / 3)));
    this.renewTimer.unref();
    this.loopDone = this.loop();
    return this;
  }

  /** Claims at once instead of waiting for the next poll (after an enqueue). */
  wake(): void {
    this.wakeUp?.();
  }

  /** Stops claiming and waits for the batches in flight to settle. */
  async stop(): Promise<void> {
    this.stopping = true;
    this.wake();
    await this.loopDone;
    clearInterval(this.renewTimer);
    this.loopDone = undefined;
  }

  private async loop(): Promise<void> {
    let lastMark = 0;
    let lastBusy = Date.now();
    let quietDone = false;
    let shortClaimAt = -Infinity;
    if (this.o.soleWorker) await this.safe(() => releaseAllLeases(this.o.db));
    // Items held back as "not configured" by an earlier run start now if this one can run them.
    for (const mode of this.runnable) await this.safe(() => wakeWaiting(this.o.db, { mode, error: notConfiguredText(mode) }));
    while (!this.stopping) {
      const now = Date.now();
      if (now - lastMark >= Math.min(this.o.unconfiguredRecheckMs, 10_000)) {
        lastMark = now;
        await this.markUnavailable();
      }
      if (this.pausedUntil > now) {
        await this.idle(Math.min(this.pausedUntil - now, this.o.pollMs * 10));
        continue;
      }
      if (now - shortClaimAt < this.o.lingerMs) {
        await this.idle(this.o.lingerMs - (now - shortClaimAt)); // an enqueue's wake only ends it early: loop again
        continue;
      }
      const free = this.o.concurrency - this.slots.size;
      if (free <= 0) {
        await Promise.race([...this.slots, this.idle(this.o.pollMs)]);
        continue;
      }
      const modes = this.runnable;
      const limit = free * Math.max(0, ...modes.map((m) => this.sizeOf(m)));
      const items = await this.safe(() => claimItems(this.o.db, { workerId: this.workerId, limit, leaseMs: this.o.leaseMs, modes }));
      if (items?.length && items.length < limit) shortClaimAt = Date.now();
      if (!items?.length) {
        if (this.slots.size) lastBusy = Date.now();
        else if (!quietDone && this.o.onQuiet && Date.now() - lastBusy >= this.o.quietMs) {
          quietDone = true;
          await this.safe(this.o.onQuiet);
          continue;
        }
        await this.idle(Math.min(this.o.pollMs, this.o.quietMs));
        continue;
      }
      lastBusy = Date.now();
      quietDone = false;
      for (const it of items) this.held.add(it.id);
      // Same mode and dataset per batch (one model per call), spread over the free slots.
      const batches = toBatches(items, (m) => this.sizeOf(m));
      const perSlot: QueueItem[][][] = Array.from({ length: Math.min(free, batches.length) }, () => []);
      batches.forEach((b, i) => perSlot[i % perSlot.length]!.push(b));
      for (const list of perSlot) {
        const slot = (async () => {
          for (const b of list) await this.runBatch(b);
        })();
        this.slots.add(slot);
        void slot.finally(() => this.slots.delete(slot));
      }
    }
    await Promise.all(this.slots);
  }

  private async runBatch(items: QueueItem[]): Promise<void> {
    const processor = this.o.processors[items[0]!.mode]!;
    const ids = items.map((i) => i.id);
    this.stats.batches++;
    const startedAt = Date.now();
    try {
      const prepared = await processor.prepare(items, this.o.db);
      const owned = await this.o.db.transaction().execute(async (tx) => {
        const mine = await completeItems(tx, this.workerId, ids);
        if (mine.size)
          await processor.commit(
            tx,
            items.filter((i) => mine.has(i.id)),
            prepared,
          );
        return mine;
      });
      if (owned.size)
        processor.settled?.(
          items.filter((i) => owned.has(i.id)),
          prepared,
          startedAt,
        );
      // Counted once committed: a reader that sees `done` must also see the items gone from the queue.
      this.stats.done += owned.size;
      this.o.metrics?.settled(items[0]!.mode, 'indexed', owned.size);
      this.rateLimitStreak = 0;
    } catch (err) {
      await this.settleFailure(items, err);
    } finally {
      for (const id of ids) this.held.delete(id);
    }
  }

  private async settleFailure(items: QueueItem[], err: unknown): Promise<void> {
    const ids = items.map((i) => i.id);
    const now = Date.now();
    const mode = items[0]!.mode;
    if (err instanceof NotConfiguredError) {
      this.o.metrics?.settled(mode, 'waiting', items.length);
      const next = now + this.o.unconfiguredRecheckMs;
      await this.safe(() => releaseItems(this.o.db, this.workerId, ids, { nextAttemptAt: next, error: err.message, reason: 'model_missing', now }));
      await this.safe(() =>
        markWaiting(this.o.db, { mode: items[0]!.mode, error: err.message, reason: 'model_missing', datasetId: err.datasetId, nextAttemptAt: next, now }),
      );
      return;
    }
    if (isRateLimit(err)) {
      // Wait as told (Retry-After), else back off exponentially; the items lose no attempt.
      this.stats.rateLimited++;
      this.o.metrics?.settled(mode, 'rate_limited', items.length);
      this.rateLimitStreak++;
      const wait = retryAfterOf(err) ?? Math.min(this.o.rateLimitMaxMs, this.o.rateLimitBaseMs * 2 ** (this.rateLimitStreak - 1));
      this.pausedUntil = Math.max(this.pausedUntil, now + wait);
      const text = `rate limited, waiting ${Math.ceil(wait / 1000)} s before trying again: ${errorText(err)}`;
      this.rateLimitText = text;
      await this.safe(() => releaseItems(this.o.db, this.workerId, ids, { nextAttemptAt: now + wait, error: text, reason: 'rate_limited', now }));
      return;
    }
    if (items.length > 1 && isItemSpecific(err)) {
      // One bad item must not fail its neighbours: run them one by one.
      for (const it of items) {
        if (this.pausedUntil > Date.now()) {
          // A rate limit hit while going one by one: the rest wait too, without losing an attempt.
          const o = { nextAttemptAt: this.pausedUntil, error: this.rateLimitText || null, reason: 'rate_limited' as const };
          this.o.metrics?.settled(mode, 'rate_limited', 1);
          await this.safe(() => releaseItems(this.o.db, this.workerId, [it.id], o));
        } else await this.runBatch([it]);
      }
      return;
    }
    this.stats.failedAttempts += items.length;
    this.o.metrics?.settled(mode, 'failed', items.length);
    const o = {
      error: errorText(err),
      reason: reasonOf(err),
      maxAttempts: this.o.maxAttempts,
      backoffBaseMs: this.o.backoffBaseMs,
      backoffMaxMs: this.o.backoffMaxMs,
      now,
    };
    await this.safe(() => failItems(this.o.db, this.workerId, ids, o));
  }

  /** Modes this worker has a processor for but which cannot run: their waiting items say why. */
  private async markUnavailable(): Promise<void> {
    for (const [mode, p] of Object.entries(this.o.processors) as [IndexingMode, BatchProcessor | undefined][]) {
      if (p?.unavailable) await this.safe(() => markWaiting(this.o.db, { mode, error: p.unavailable! }));
    }
  }

  private async renew(): Promise<void> {
    if (this.held.size) await this.safe(() => renewLeases(this.o.db, this.workerId, [...this.held], this.o.leaseMs));
  }

  private idle(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const t = setTimeout(done, ms);
      function done() {
        clearTimeout(t);
        resolve();
      }
      this.wakeUp = done;
    });
  }

  /** Store calls inside the loop never end it: an unreachable database is reported and retried. */
  private async safe<T>(fn: () => Promise<T>): Promise<T | undefined> {
    try {
      return await fn();
    } catch (err) {
      this.o.onError?.(err);
      if (!this.stopping) await sleep(Math.min(this.o.pollMs, 1000));
      return undefined;
    }
  }
}

/** The text shown on items a mode's processor cannot run yet. */
export function notConfiguredText(mode: IndexingMode): string {
  return mode === 'chunk' ? NO_VECTOR_MODEL : NO_QA_MODEL;
}

function toBatches(items: QueueItem[], sizeOf: (mode: IndexingMode) => number): QueueItem[][] {
  const groups = new Map<string, QueueItem[]>();
  for (const it of items) {
    const key = `${it.mode}\u0000${it.datasetId}`;
    let g = groups.get(key);
    if (!g) groups.set(key, (g = []));
    g.push(it);
  }
  const out: QueueItem[][] = [];
  for (const g of groups.values()) {
    const size = sizeOf(g[0]!.mode);
    for (let i = 0; i < g.length; i += size) out.push(g.slice(i, i + size));
  }
  return out;
}
