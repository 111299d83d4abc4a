// Large collections are written and removed in steps, each one statement that
// commits on its own: on the embedded store every statement holds the one
// connection the whole process shares, and one statement over 100,000 chunks
// held chat for tens of seconds and grew PGlite's memory (WASM memory never
// shrinks) by the size of everything it carried (issue 34: 475 MB -> 2 GB).
// A collection_jobs row says how far a step-wise import or delete got (the
// progress the web app shows) and whose it is; a job whose owner stopped is
// finished by whoever finds it: a delete goes on, an import cut short is
// deleted, as the one statement it replaces would have left nothing.
import { randomBytes } from 'node:crypto';
import type { RawBuilder } from 'kysely';
import type { CollectionRow, DatasetsStore, JobRow } from './store.js';

export interface CollectionJobsOptions {
  /** Chunks an import writes, or data rows a delete removes, per statement. */
  batchRows: number;
  /** A delete of at least this many data rows is followed by a VACUUM. */
  vacuumAfterRows: number;
  /** The embedded store: one process opens it, so any job found at start is a dead process's. */
  embeddedStore: boolean;
  /** VACUUM of the tables retrieval writes (postings, vectors). */
  vacuumSearchTables(): Promise<void>;
  onError(err: unknown): void;
}

/** Why a file read in the background has no chunks when its process stopped while reading it. */
export const READ_STOPPED = 'The platform stopped while it was reading this file; upload it again.';

/** A job whose owner has not beaten for this long is taken over. */
export const STALE_JOB_MS = 5 * 60_000;

export class ImportCancelledError extends Error {}

/** The process is stopping: a job ends at its next step, its row left for the next start (or another process) to finish. */
export class JobsStoppingError extends Error {
  constructor() {
    super('the platform is stopping; the next start finishes this');
  }
}

type Target = Pick<CollectionRow, 'id' | 'team_id' | 'dataset_id'>;

/**
 * Between steps: PGlite answers in microtasks, so a loop of statements never
 * lets the event loop read a request; without this a chat's queries waited
 * for the whole delete (measured: one progress read in 500 ms of deleting).
 */
const letOthersIn = () => new Promise<void>((resolve) => setImmediate(resolve));

export class CollectionJobs {
  readonly owner = `${process.pid}-${randomBytes(4).toString('hex')}`;
  private readonly deletes = new Map<string, Promise<void>>();
  /** Imports running here whose collection is being deleted: they stop at their next step. */
  private readonly cancelled = new Set<string>();
  private readonly imports = new Set<Promise<unknown>>();
  /** Files being read in the background (readInBackground), by collection. */
  private readonly reads = new Map<string, AbortController>();
  private vacuuming: Promise<void> | undefined;
  private vacuumAgain = false;
  private timer: NodeJS.Timeout | undefined;
  private swept = false;
  private stopping = false;

  constructor(
    private readonly store: DatasetsStore,
    private readonly o: CollectionJobsOptions,
  ) {}

  /** An import of more chunks than this is written in steps. */
  get batchRows(): number {
    return this.o.batchRows;
  }

  /** Finishes jobs other processes left (now, then every STALE_JOB_MS). */
  start(): void {
    const sweep = () => void this.sweep().catch(this.o.onError);
    sweep();
    this.timer = setInterval(sweep, STALE_JOB_MS);
    this.timer.unref();
  }

  /** Jobs running here stop at their next step and wait for the next start. */
  async stop(): Promise<void> {
    this.stopping = true;
    clearInterval(this.timer);
    for (const read of this.reads.values()) read.abort();
    await Promise.allSettled([...this.deletes.values(), ...this.imports, this.vacuuming]);
  }

  /**
   * Writes a new collection of `total` items in steps: the collection and its
   * job row first, then `writeStep(batch, from, progress)` for each batch (of
   * at most batchRows items, made as they are written), which must run
   * `progress` in the statement that writes the batch. Anything failing (or
   * a delete of the collection meanwhile) deletes what was written.
   */
  importInSteps<T>(
    collection: CollectionRow,
    total: number,
    batches: AsyncIterable<T[]>,
    writeStep: (batch: T[], from: number, progress: RawBuilder<unknown>) => Promise<void>,
    o: { /** The collection is written already (a scan, read first): its job row becomes the import's. */ existing?: boolean } = {},
  ): Promise<void> {
    return this.tracked(this.runImport(collection, total, batches, writeStep, o.existing ?? false));
  }

  private tracked<T>(running: Promise<T>): Promise<T> {
    this.imports.add(running);
    return running.finally(() => this.imports.delete(running));
  }

  /**
   * Reads a new collection's file in the background (a scan's OCR takes
   * minutes; the upload is answered at once): the collection and its 'ocr'
   * job row first, then `read(signal)`, which writes the chunks when done.
   * Deleting the collection, or the process stopping, aborts `signal` (a
   * stopped read is ended by the next start: sweep).
   */
  async readInBackground(collection: CollectionRow, read: (signal: AbortSignal) => Promise<void>): Promise<void> {
    if (this.stopping) throw new JobsStoppingError();
    const job = {
      collectionId: collection.id,
      teamId: collection.team_id,
      datasetId: collection.dataset_id,
      kind: 'ocr' as const,
      total: 0,
      owner: this.owner,
    };
    await this.store.insertData([], undefined, collection, [this.store.jobInsertStatement(job)]);
    const abort = new AbortController();
    this.reads.set(collection.id, abort);
    void this.tracked(read(abort.signal))
      .catch(this.o.onError)
      .finally(() => {
        this.reads.delete(collection.id);
        this.cancelled.delete(collection.id);
      });
  }

  private async runImport<T>(
    collection: CollectionRow,
    total: number,
    batches: AsyncIterable<T[]>,
    writeStep: (batch: T[], from: number, progress: RawBuilder<unknown>) => Promise<void>,
    existing: boolean,
  ): Promise<void> {
    if (this.stopping) throw new JobsStoppingError();
    const job = {
      collectionId: collection.id,
      teamId: collection.team_id,
      datasetId: collection.dataset_id,
      kind: 'import' as const,
      total,
      owner: this.owner,
    };
    if (existing) await this.store.startJob(job);
    else await this.store.insertData([], undefined, collection, [this.store.jobInsertStatement(job)]);
    try {
      let from = 0;
      for await (const batch of batches) {
        if (this.cancelled.has(collection.id)) throw new ImportCancelledError(`Collection ${collection.id} was deleted while it was being imported`);
        if (this.stopping) throw new JobsStoppingError();
        await writeStep(batch, from, this.store.jobProgressStatement(collection.id, batch.length));
        from += batch.length;
        await letOthersIn();
      }
      await this.store.endJob(collection.id);
    } catch (err) {
      // As the one statement it stands for would: nothing of it stays (at once, or at the next start when stopping).
      if (!(err instanceof JobsStoppingError)) await this.deleteCollection(collection).catch(this.o.onError);
      throw err;
    } finally {
      this.cancelled.delete(collection.id);
    }
  }

  /**
   * Deletes a collection a batch of its data rows a statement (their indexes,
   * vectors, postings and queue items go with them), its job row counting,
   * then the collection, then a VACUUM when it was large. One delete per
   * collection at a time in this process: a second call waits for the first.
   */
  deleteCollection(c: Target): Promise<void> {
    let running = this.deletes.get(c.id);
    if (!running) {
      this.cancelled.add(c.id);
      this.reads.get(c.id)?.abort();
      running = this.runDelete(c).finally(() => this.deletes.delete(c.id));
      this.deletes.set(c.id, running);
    }
    return running;
  }

  /** A dataset's data in steps (no job row: nothing shows a dataset's delete), then the dataset. */
  async deleteDataset(teamId: string, datasetId: string): Promise<boolean> {
    const total = await this.store.countData({ datasetId });
    if (total > this.o.batchRows) await this.store.analyzeForDelete();
    if (total > this.o.batchRows) while ((await this.store.deleteDataBatch({ datasetId }, this.o.batchRows)) > 0) await letOthersIn();
    const deleted = await this.store.deleteDataset(teamId, datasetId);
    if (total >= this.o.vacuumAfterRows) await this.vacuum();
    return deleted;
  }

  private async runDelete(c: Target): Promise<void> {
    const total = await this.store.countData({ collectionId: c.id });
    if (total > this.o.batchRows) {
      await this.store.startJob({ collectionId: c.id, teamId: c.team_id, datasetId: c.dataset_id, kind: 'delete', total, owner: this.owner });
      await this.store.analyzeForDelete();
      while ((await this.store.deleteDataBatch({ collectionId: c.id }, this.o.batchRows)) > 0) {
        if (this.stopping) throw new JobsStoppingError();
        await letOthersIn();
      }
    }
    // The job row goes with its collection.
    await this.store.deleteCollection(c.team_id, c.id);
    if (total >= this.o.vacuumAfterRows) await this.vacuum();
  }

  /** One VACUUM at a time; deletes that end during one get one more after it. */
  private vacuum(): Promise<void> {
    if (this.vacuuming) {
      this.vacuumAgain = true;
      return this.vacuuming;
    }
    const run = async () => {
      do {
        this.vacuumAgain = false;
        await this.o.vacuumSearchTables();
        await this.store.vacuumAfterDelete({ releaseWal: this.o.embeddedStore });
      } while (this.vacuumAgain);
    };
    this.vacuuming = run().finally(() => (this.vacuuming = undefined));
    return this.vacuuming;
  }

  /**
   * Jobs left by a process that stopped: deletes finished, imports cut short
   * deleted; a file being read keeps its collection, which says why it has
   * no chunks (its bytes are gone with the process).
   */
  async sweep(): Promise<JobRow[]> {
    const all = this.o.embeddedStore && !this.swept;
    this.swept = true;
    const jobs = await this.store.claimStaleJobs(this.owner, Date.now() - STALE_JOB_MS, all);
    for (const j of jobs) {
      if (j.kind === 'ocr') await this.store.endRead(j.collection_id, { readError: READ_STOPPED });
      else await this.deleteCollection({ id: j.collection_id, team_id: j.team_id, dataset_id: j.dataset_id });
    }
    return jobs;
  }
}
