// Files into datasets, each content imported once: an upload carries (or is
// given) its SHA-256, and a repeat of the same content in the same dataset
// (a retry after a timeout, the same file dropped twice) answers with the
// collection the first made, unless a second copy is asked for. Resumable
// uploads keep their bytes in an UploadBytes store until they are imported
// or expire. No HTTP here; the routes shape.
import { createHash } from 'node:crypto';
import type { UnfinishedUpload, UploadCheck, UploadEstimate } from '@kbchat/contracts';
import type { DatasetsService } from '../datasets/service.js';
import type { KnownCount, TextCollectionInput } from '../datasets/types.js';
import { detectFormat, IngestError, isIngestError } from '../ingest/index.js';
import { errors, PlatformError } from '../http/errors.js';
import type { IndexingEstimates } from '../indexing/estimate.js';
import { newId, type KeyCaller } from '../keys/auth.js';
import type { UploadRow, UploadsStore } from './store.js';

export { MAX_FILE_BYTES } from '@kbchat/contracts';
/** Unfinished uploads are kept this long after they start, then removed with their bytes. */
export const UPLOAD_EXPIRY_MS = 24 * 60 * 60 * 1000;
/** Unfinished uploads a team may hold at once: with the size limit, at most 1 GiB of disk a team. */
export const MAX_UNFINISHED_PER_TEAM = 20;
/** A file of at most this many chunks is never "large", and its estimate probes no model. */
export const NEVER_LARGE_CHUNKS = 100;

/** Where resumable uploads keep their bytes (the tus file store). */
export interface UploadBytes {
  /** Bytes received so far; undefined when none are stored under that id. */
  offset(id: string): Promise<number | undefined>;
  read(id: string): Promise<{ data: Buffer; sha256: string }>;
  remove(id: string): Promise<void>;
  stored(): Promise<{ id: string; ageMs: number }[]>;
}

export type ChunkSettings = Omit<TextCollectionInput, 'text' | 'name' | 'datasetId' | 'type' | 'source'> & { name?: string };

export interface ImportResult {
  collectionId: string;
  insertLen: number;
  /** Nothing new was made: the collection is an earlier import of the same content (or of this same request). */
  alreadyImported: boolean;
}

/** The settings an estimate is made with, kept with it for the import that follows (after a reload too). */
export type { UnfinishedUpload, UploadEstimate };

export type EstimateSettings = Pick<ChunkSettings, 'trainingType' | 'chunkSize' | 'chunkSplitter' | 'qaPrompt'>;

/**
 * What the uploads table keeps of a finished upload's last estimate (its
 * `estimate` column, as JSON); `count` is its chunk count with the chunking
 * it was made with, which the import takes instead of counting again (a
 * finished upload's bytes never change).
 */
interface StoredEstimate {
  estimate: UploadEstimate;
  settings: EstimateSettings;
  count?: KnownCount;
}

const sha256Of = (data: Uint8Array) => createHash('sha256').update(data).digest('hex');

/** When a rate was measured, and how long before `now`. */
const rateAge = (measuredAt: string | null, now: number) => ({
  rateMeasuredAt: measuredAt,
  rateAgeSeconds: measuredAt === null ? null : Math.max(0, Math.round((now - Date.parse(measuredAt)) / 1000)),
});

/** A kept estimate, its rate's age as of `now`; null when there is none (or it is not one this version wrote). */
function storedEstimate(json: string | null | undefined, now: number): StoredEstimate | null {
  if (!json) return null;
  try {
    const kept = JSON.parse(json) as StoredEstimate;
    if (typeof kept?.estimate?.chunks !== 'number' || typeof kept.settings?.trainingType !== 'string') return null;
    return { settings: kept.settings, count: kept.count, estimate: { ...kept.estimate, ...rateAge(kept.estimate.rateMeasuredAt ?? null, now) } };
  } catch {
    return null;
  }
}

export class UploadsService {
  /** One import at a time per dataset and content, so two identical requests cannot both create. */
  private readonly locks = new Map<string, Promise<unknown>>();
  constructor(
    private readonly store: UploadsStore,
    private readonly datasets: DatasetsService,
    private readonly bytes: UploadBytes,
    private readonly estimates?: { indexing: IndexingEstimates; confirmAboveSeconds: number },
  ) {}

  /** A resumable upload about to be created: checked, and its row made (its id names the bytes). */
  async begin(
    caller: KeyCaller,
    input: { datasetId: string; fileName: string; fileType?: string; size: number; sha256?: string },
    now = Date.now(),
  ): Promise<string> {
    await this.datasets.dataset(caller, input.datasetId);
    try {
      detectFormat({ data: new Uint8Array(), filename: input.fileName, mimeType: input.fileType });
    } catch (err) {
      if (isIngestError(err)) throw errors.badField('filename', err.message);
      throw err;
    }
    if ((await this.store.countUnfinished(caller.teamId, now)) >= MAX_UNFINISHED_PER_TEAM) {
      throw new PlatformError(
        429,
        'too_many_uploads',
        `This team has ${MAX_UNFINISHED_PER_TEAM} unfinished uploads; finish or discard one first (unfinished uploads expire after ${UPLOAD_EXPIRY_MS / 3_600_000} hours)`,
      );
    }
    const id = newId();
    await this.store.insert({
      id,
      team_id: caller.teamId,
      dataset_id: input.datasetId,
      file_name: input.fileName,
      file_type: input.fileType ?? null,
      size: input.size,
      sha256: input.sha256 ?? null,
      idempotency_key: null,
      collection_id: null,
      reused: false,
      created_at: now,
      expires_at: now + UPLOAD_EXPIRY_MS,
    });
    return id;
  }

  /** The team's upload (404 for anyone else's, or one that expired). */
  async upload(caller: KeyCaller, id: string): Promise<UploadRow> {
    const row = await this.store.get(caller.teamId, id);
    if (!row) throw errors.notFound(`Upload ${id}`);
    return row;
  }

  /** Before sending a file: is its content in the dataset already, or partly uploaded (to resume)? */
  async check(caller: KeyCaller, datasetId: string, sha256: string, size: number, now = Date.now()): Promise<UploadCheck> {
    await this.datasets.dataset(caller, datasetId);
    const done = await this.store.imported(caller.teamId, datasetId, sha256);
    if (done?.collection_id) {
      const c = await this.datasets.collection(caller, done.collection_id);
      return { imported: { collectionId: c.id, name: c.name, createTime: new Date(Number(c.created_at)).toISOString() }, unfinished: null };
    }
    const unfinished = (await this.listUnfinished(caller, datasetId, now)).find((u) => u.sha256 === sha256 && u.size === size) ?? null;
    return { imported: null, unfinished };
  }

  async listUnfinished(caller: KeyCaller, datasetId: string, now = Date.now()): Promise<UnfinishedUpload[]> {
    await this.datasets.dataset(caller, datasetId);
    const rows = await this.store.unfinished(caller.teamId, datasetId, now);
    const out: UnfinishedUpload[] = [];
    for (const r of rows) {
      const offset = await this.bytes.offset(r.id);
      if (offset === undefined) continue;
      const complete = offset >= r.size;
      const stored = complete ? storedEstimate(r.estimate, now) : null;
      out.push({
        uploadId: r.id,
        fileName: r.file_name,
        size: r.size,
        offset,
        sha256: r.sha256,
        createTime: new Date(r.created_at).toISOString(),
        expireTime: new Date(r.expires_at!).toISOString(),
        complete,
        estimate: stored?.estimate ?? null,
        settings: stored?.settings ?? null,
      });
    }
    return out;
  }

  async discard(caller: KeyCaller, id: string): Promise<void> {
    const row = await this.upload(caller, id);
    if (row.collection_id) throw errors.conflict(`Upload ${id} is imported already (collection ${row.collection_id}); delete the collection instead`);
    await this.bytes.remove(id);
    await this.store.remove(caller.teamId, id);
  }

  /**
   * What importing a finished upload would make and cost, without importing
   * it: its chunks counted by the real reader and chunker, the time at the
   * dataset's measured rate. Content the import would refuse is refused here
   * the same way, and the upload discarded. The answer is kept with the
   * upload (with its settings), so that a page reloaded while it asks the
   * user asks the same again.
   */
  async estimate(caller: KeyCaller, id: string, settings: EstimateSettings): Promise<UploadEstimate> {
    const { row, data } = await this.complete(caller, id);
    const plan = await this.refusingContent(caller, id, () =>
      this.datasets.planFile(caller, row.dataset_id, { data, filename: row.file_name, mimeType: row.file_type ?? undefined }, settings),
    );
    const confirmAboveSeconds = this.estimates?.confirmAboveSeconds ?? Infinity;
    const model = plan.trainingType === 'qa' ? plan.agentModel : plan.vectorModel;
    const probe = plan.chunks > NEVER_LARGE_CHUNKS ? plan.sample : [];
    const e = this.estimates
      ? await this.estimates.indexing.estimate(plan.trainingType, model || null, probe)
      : { rate: null, rateError: null, queuedAhead: 0, probed: false };
    const perSecond = e.rate?.itemsPerSecond ?? null;
    const seconds = perSecond ? Math.ceil(plan.chunks / perSecond) : null;
    const estimate: UploadEstimate = {
      chunks: plan.chunks,
      trainingType: plan.trainingType,
      chunksPerSecond: perSecond,
      rateSource: e.rate?.source ?? null,
      rateError: e.rateError,
      queuedAhead: e.queuedAhead,
      ...rateAge(e.rate ? new Date(e.rate.measuredAt).toISOString() : null, Date.now()),
      rateFromThisFile: e.probed,
      seconds,
      secondsWithQueue: perSecond ? Math.ceil((plan.chunks + e.queuedAhead) / perSecond) : null,
      large: seconds !== null ? seconds >= confirmAboveSeconds : plan.chunks > NEVER_LARGE_CHUNKS && Number.isFinite(confirmAboveSeconds),
      confirmAboveSeconds: Number.isFinite(confirmAboveSeconds) ? confirmAboveSeconds : 0,
    };
    const count = { chunks: plan.chunks, chunkSize: plan.chunkSize, chunkSplitter: plan.chunkSplitter };
    await this.store.saveEstimate(id, JSON.stringify({ estimate, settings, count } satisfies StoredEstimate));
    return estimate;
  }

  /** A resumable upload whose bytes are all in: verified, then imported once (a repeat answers the same collection). */
  async finish(caller: KeyCaller, id: string, settings: ChunkSettings & { allowDuplicate?: boolean }): Promise<ImportResult> {
    const first = await this.upload(caller, id);
    if (first.collection_id) return { collectionId: first.collection_id, insertLen: 0, alreadyImported: true };
    // Estimated already: its chunks were counted then (a finished upload's bytes never change).
    const known = storedEstimate(first.estimate, Date.now())?.count;
    const { data, sha256 } = await this.complete(caller, id);
    const result = await this.once(first.dataset_id, sha256, async () => {
      const row = await this.upload(caller, id);
      if (row.collection_id) return { collectionId: row.collection_id, insertLen: 0, alreadyImported: true };
      const r = await this.refusingContent(caller, id, () =>
        this.importOrReuse(caller, row.dataset_id, sha256, settings, { data, filename: row.file_name, mimeType: row.file_type ?? undefined }, known),
      );
      await this.store.markImported(id, { collectionId: r.collectionId, sha256, reused: r.alreadyImported });
      return r;
    });
    await this.bytes.remove(id);
    return result;
  }

  /** An unimported upload with all its bytes, read and checked against the SHA-256 it declared (a mismatch is discarded). */
  private async complete(caller: KeyCaller, id: string): Promise<{ row: UploadRow; data: Buffer; sha256: string }> {
    const row = await this.upload(caller, id);
    if (row.collection_id) throw errors.conflict(`Upload ${id} is imported already (collection ${row.collection_id})`);
    const offset = await this.bytes.offset(id);
    if (offset === undefined) throw errors.notFound(`The bytes of upload ${id} (expired or discarded)`);
    if (offset < row.size) throw errors.conflict(`Upload ${id} has ${offset} of its ${row.size} bytes; send the rest before importing it`);
    const { data, sha256 } = await this.bytes.read(id);
    if (row.sha256 && row.sha256 !== sha256) {
      await this.discard(caller, id);
      throw errors.badField(
        'sha256',
        `the ${data.byteLength} bytes received hash to ${sha256}, not the ${row.sha256} declared; the upload was discarded, send the file again`,
      );
    }
    return { row, data, sha256 };
  }

  /**
   * Runs `work` on an upload's content; if the content itself is refused (not
   * a readable file of its type, no text), the upload is discarded, bytes and
   * all: sending the same bytes again cannot go better, so it is never
   * offered for resuming. Other failures (the store, a setting) keep it.
   */
  private async refusingContent<T>(caller: KeyCaller, id: string, work: () => Promise<T>): Promise<T> {
    try {
      return await work();
    } catch (err) {
      if (!isIngestError(err)) throw err;
      await this.discard(caller, id);
      throw new IngestError(err.code, `${err.message} The upload was discarded.`, { cause: err });
    }
  }

  /** A whole file in one request (multipart): the same identity and idempotency as a resumable upload. */
  async importFile(
    caller: KeyCaller,
    file: { data: Uint8Array; filename: string; mimeType?: string },
    settings: ChunkSettings & { datasetId: string; sha256?: string; idempotencyKey?: string; allowDuplicate?: boolean },
  ): Promise<ImportResult> {
    const sha256 = sha256Of(file.data);
    if (settings.sha256 && settings.sha256 !== sha256)
      throw errors.badField('sha256', `the ${file.data.byteLength} bytes received hash to ${sha256}, not the ${settings.sha256} declared`);
    const byKey = async () => {
      const earlier = settings.idempotencyKey ? await this.store.byIdempotencyKey(caller.teamId, settings.idempotencyKey) : undefined;
      if (earlier && earlier.dataset_id !== settings.datasetId)
        throw errors.badField('idempotencyKey', `already used for another knowledge base (${earlier.dataset_id})`);
      return earlier?.collection_id ? { collectionId: earlier.collection_id, insertLen: 0, alreadyImported: true } : undefined;
    };
    return (
      (await byKey()) ??
      this.once(settings.datasetId, sha256, async () => {
        const repeated = await byKey();
        if (repeated) return repeated;
        const { sha256: _declared, idempotencyKey: _key, datasetId, ...chunking } = settings;
        const r = await this.importOrReuse(caller, datasetId, sha256, chunking, file);
        await this.store.insert({
          id: newId(),
          team_id: caller.teamId,
          dataset_id: settings.datasetId,
          file_name: file.filename,
          file_type: file.mimeType ?? null,
          size: file.data.byteLength,
          sha256,
          idempotency_key: settings.idempotencyKey ?? null,
          collection_id: r.collectionId,
          reused: r.alreadyImported,
          created_at: Date.now(),
          expires_at: null,
        });
        return r;
      })
    );
  }

  /** Unfinished uploads past their expiry, and bytes that no upload owns (its dataset was deleted), removed. */
  async sweep(now = Date.now()): Promise<number> {
    const expired = await this.store.removeExpired(now);
    for (const id of expired) await this.bytes.remove(id);
    let orphans = 0;
    for (const { id, ageMs } of await this.bytes.stored()) {
      // An hour's grace: a creation writes its bytes' record just after its row.
      if (ageMs > 3_600_000 && !(await this.store.exists(id))) {
        await this.bytes.remove(id);
        orphans++;
      }
    }
    return expired.length + orphans;
  }

  private async importOrReuse(
    caller: KeyCaller,
    datasetId: string,
    sha256: string,
    settings: ChunkSettings & { allowDuplicate?: boolean },
    file: { data: Uint8Array; filename: string; mimeType?: string },
    known?: KnownCount,
  ): Promise<ImportResult> {
    if (!settings.allowDuplicate) {
      const earlier = await this.store.imported(caller.teamId, datasetId, sha256);
      if (earlier?.collection_id) return { collectionId: earlier.collection_id, insertLen: 0, alreadyImported: true };
    }
    const { allowDuplicate: _, ...chunking } = settings;
    const r = await this.datasets.createFileCollection(caller, file, { ...chunking, datasetId }, known);
    return { ...r, alreadyImported: false };
  }

  private async once<T>(datasetId: string, sha256: string, run: () => Promise<T>): Promise<T> {
    const key = `${datasetId}:${sha256}`;
    const before = this.locks.get(key) ?? Promise.resolve();
    const mine = before.catch(() => undefined).then(run);
    this.locks.set(key, mine);
    try {
      return await mine;
    } finally {
      if (this.locks.get(key) === mine) this.locks.delete(key);
    }
  }
}
