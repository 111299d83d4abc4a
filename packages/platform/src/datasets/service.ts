// Knowledge bases: datasets bound to one vector model, collections made of
// chunks, and the data items themselves. No HTTP here; the routes shape.
import { MAX_PUSH, type WebsiteImported } from '@kbchat/contracts';
import { countTextTokens } from '@kbchat/shared';
import {
  chunksUpTo,
  countChunks,
  DEFAULT_OCR_LANGUAGES,
  detectFormat,
  fetchLink,
  IngestError,
  NeedsOcr,
  type ChunkInput,
  type CustomFileReader,
  type ReadDocumentInput,
} from '../ingest/index.js';
import { newId } from '../keys/auth.js';
import type { KeyCaller } from '../keys/auth.js';
import { errors } from '../http/errors.js';
import type { ModelConfig } from '../models/config-file.js';
import { CollectionJobs, ImportCancelledError, type CollectionJobsOptions } from './jobs.js';
import type { CollectionRow, DatasetsStore, DataRow, NewDataItem } from './store.js';
import { newCollectionRow } from './collection-rows.js';
import { CollectionWriter } from './collection-writer.js';
import { linkSyncSteps, syncLink, type SyncResult } from './link-sync.js';
import { readScan, scanChunking } from './scan-reading.js';
import { importSite, type SiteImport } from './site-import.js';
import { SyncStore } from './sync-store.js';
import type { ImportPlan, IndexingHooks, KnownCount, PushDataItem, TextCollectionInput } from './types.js';

/** Datasets whose team and vector model (which never change) an upload may take from memory. */
const KNOWN_DATASETS_MAX = 10_000;

const PLAN_SAMPLE = 16;

/** A file that makes no chunk is refused as the readers refuse an empty one (the upload that brought it is discarded). */
const emptyFile = (name: string) => new IngestError('empty_document', `${name} has no text to import.`);

/**
 * Collections keep their raw text up to this many characters (nothing reads
 * it yet). Past it the chunks are the only copy: a 30 MB text as one value
 * grew PGlite's memory (which never shrinks) by about 100 MB to write it.
 */
export const RAW_TEXT_MAX = 1_000_000;

/** Default rows a statement of a large import or delete writes or removes (DELETE_BATCH_ROWS). */
export const DEFAULT_BATCH_ROWS = 1000;

/** PostgreSQL's foreign_key_violation. */
const isForeignKeyViolation = (err: unknown) => (err as { code?: string } | null)?.code === '23503';

export class DatasetsService {
  /**
   * id -> team and vector model, for uploads: saves a lookup per upload (one
   * statement, ~0.5 ms on the embedded store). A dataset deleted since (here
   * or by another process) still answers 404: the upload's insert fails on
   * its foreign key, and the lookup is made again.
   */
  private readonly knownDatasets = new Map<string, { teamId: string; vectorModel: string }>();

  /** Large imports and deletes, in steps (jobs.ts). */
  readonly jobs: CollectionJobs;
  readonly syncStore: SyncStore;
  private readonly writer: CollectionWriter;
  /** Link collections being synced here. */
  private readonly syncing = new Set<string>();

  constructor(
    private readonly store: DatasetsStore,
    private readonly models: ModelConfig,
    private readonly indexing: IndexingHooks,
    jobs: Partial<CollectionJobsOptions> = {},
    private readonly reading: {
      /** The team's own parser for the file types it names (CUSTOM_READ_FILE_URL). */
      customReader?: CustomFileReader;
      /** The languages OCR reads (OCR_LANGUAGES). */
      ocrLanguages?: string[];
    } = {},
  ) {
    this.syncStore = new SyncStore(store.db);
    this.jobs = new CollectionJobs(store, {
      batchRows: DEFAULT_BATCH_ROWS,
      vacuumAfterRows: DEFAULT_BATCH_ROWS,
      embeddedStore: false,
      vacuumSearchTables: async () => undefined,
      onError: () => undefined,
      ...jobs,
    });
    this.writer = new CollectionWriter(store, indexing, this.jobs);
  }

  async createDataset(caller: KeyCaller, input: { name: string; intro?: string; vectorModel?: string; agentModel?: string; ocr?: boolean }): Promise<string> {
    const vectorModel = input.vectorModel ?? this.models.vectorModels[0]?.model;
    if (input.vectorModel && !this.models.vectorModels.some((m) => m.model === input.vectorModel)) {
      throw errors.badField(
        'vectorModel',
        `"${input.vectorModel}" is not one of the configured vector models (${this.models.vectorModels.map((m) => m.model).join(', ') || 'none configured'})`,
      );
    }
    if (input.agentModel && !this.models.llmModels.some((m) => m.model === input.agentModel)) {
      throw errors.badField('agentModel', `"${input.agentModel}" is not one of the configured LLM models`);
    }
    const id = newId();
    const now = Date.now();
    await this.store.insertDataset({
      id,
      team_id: caller.teamId,
      name: input.name,
      intro: input.intro ?? '',
      // No vector model configured: the dataset is still made, and its items wait with that reason shown.
      vector_model: vectorModel ?? '',
      vector_dimensions: null,
      agent_model: input.agentModel ?? this.models.llmModels[0]?.model ?? null,
      ocr: input.ocr ?? true,
      created_at: now,
      updated_at: now,
    });
    return id;
  }

  async updateDataset(caller: KeyCaller, change: { id: string; name?: string; intro?: string; ocr?: boolean }): Promise<void> {
    const { id, ...fields } = change;
    if (!(await this.store.updateDataset(caller.teamId, id, fields))) throw errors.notFound(`Dataset ${id}`);
  }

  async dataset(caller: KeyCaller, id: string) {
    const d = await this.store.dataset(caller.teamId, id);
    if (!d) throw errors.notFound(`Dataset ${id}`);
    return d;
  }

  listDatasets(caller: KeyCaller, searchKey?: string) {
    return this.store.listDatasets(caller.teamId, searchKey);
  }

  async deleteDataset(caller: KeyCaller, id: string): Promise<void> {
    this.knownDatasets.delete(id);
    await this.dataset(caller, id);
    if (!(await this.jobs.deleteDataset(caller.teamId, id))) throw errors.notFound(`Dataset ${id}`);
  }

  /** Chunk size for a dataset: what the caller asks, else its vector model's default. */
  private chunkSizeFor(vectorModel: string, asked?: number): number {
    const model = this.models.vectorModels.find((m) => m.model === vectorModel);
    const max = model?.maxToken ?? 8000;
    const size = asked ?? model?.defaultToken ?? 512;
    if (size > max) throw errors.badField('chunkSize', `${size} is more than ${vectorModel} reads (${max} tokens)`);
    return size;
  }

  /** The dataset an upload goes into (404 when the caller's team has none of that id). */
  private async uploadTarget(caller: KeyCaller, id: string): Promise<{ id: string; vector_model: string }> {
    const known = this.knownDatasets.get(id);
    if (known?.teamId === caller.teamId) return { id, vector_model: known.vectorModel };
    const d = await this.dataset(caller, id);
    if (this.knownDatasets.size >= KNOWN_DATASETS_MAX) this.knownDatasets.clear();
    this.knownDatasets.set(id, { teamId: d.team_id, vectorModel: d.vector_model });
    return d;
  }

  async createTextCollection(caller: KeyCaller, input: TextCollectionInput): Promise<{ collectionId: string; insertLen: number }> {
    const { text, ...rest } = input;
    const empty = () => errors.badField('text', 'there is no text to index');
    return this.createCollection(caller, rest, { text }, { rawText: text.length <= RAW_TEXT_MAX ? text : null, empty });
  }

  /**
   * A collection of the chunks `source` makes. A few (at most one batch) go
   * in in one statement; more go in in steps (jobs.ts), made as they are
   * written, after counting them (the job's progress is "n of total"):
   * `known`, a plan's count of the same content and chunking, saves that pass.
   */
  private async createCollection(
    caller: KeyCaller,
    input: Omit<TextCollectionInput, 'text'>,
    source: ChunkInput,
    what: { rawText: string | null; /** the refusal of a source that makes no chunk */ empty: () => Error },
    known?: KnownCount,
  ): Promise<{ collectionId: string; insertLen: number }> {
    const dataset = await this.uploadTarget(caller, input.datasetId);
    const settings = this.chunking(dataset.vector_model, input);
    const count = known && known.chunkSize === settings.chunkSize && known.chunkSplitter === settings.chunkSplitter ? known.chunks : undefined;
    const batchRows = this.jobs.batchRows;
    const few = count === undefined || count <= batchRows ? await chunksUpTo(source, settings, batchRows) : undefined;
    const total = few?.length ?? count ?? (await countChunks(source, settings, 0)).chunks;
    if (total === 0) throw what.empty();
    const collection = newCollectionRow(caller.teamId, dataset.id, input, settings, what.rawText);
    try {
      await this.writer.writeChunks(collection, input.trainingType, source, settings, { few, total, existing: false });
    } catch (err) {
      if (err instanceof ImportCancelledError) throw errors.conflict(err.message);
      if (!isForeignKeyViolation(err)) throw err;
      // The dataset went away since it was looked up: 404 (or, if it is there after all, the error).
      this.knownDatasets.delete(dataset.id);
      await this.dataset(caller, dataset.id);
      throw err;
    }
    return { collectionId: collection.id, insertLen: total };
  }

  private chunking(vectorModel: string, input: { chunkSize?: number; chunkSplitter?: string }) {
    return { chunkSize: this.chunkSizeFor(vectorModel, input.chunkSize), chunkSplitter: input.chunkSplitter || undefined };
  }

  /**
   * What importing this file would make, without writing anything: read and
   * chunked exactly as the import will (the same reader, chunker and chunk
   * size), so the count is the import's; nothing is kept but the count and a
   * sample. Refusals are the import's too.
   */
  async planFile(
    caller: KeyCaller,
    datasetId: string,
    file: { data: Uint8Array; filename: string; mimeType?: string },
    settings: { trainingType: 'chunk' | 'qa'; chunkSize?: number; chunkSplitter?: string },
  ): Promise<ImportPlan> {
    const dataset = await this.dataset(caller, datasetId);
    const chunking = { chunkSize: this.chunkSizeFor(dataset.vector_model, settings.chunkSize), chunkSplitter: settings.chunkSplitter || undefined };
    const models = { trainingType: settings.trainingType, vectorModel: dataset.vector_model, agentModel: dataset.agent_model };
    try {
      const counted = await countChunks(await this.fileInput(caller, datasetId, file), chunking, PLAN_SAMPLE);
      if (counted.chunks === 0) throw emptyFile(file.filename);
      return { ...counted, ...chunking, ...models };
    } catch (err) {
      if (!(err instanceof NeedsOcr)) throw err;
      // Not read yet: a scanned page makes about one chunk.
      return { chunks: err.pages, sample: [], ocrPages: err.pages, ...chunking, ...models };
    }
  }

  /**
   * An uploaded file: read into structured text, then chunked like text;
   * `known`: a plan's count of it (planFile). A scan (an image, or a PDF
   * with pages without text, in a dataset that reads them with OCR) is read
   * after the answer (readScan): its collection has no chunks yet.
   */
  async createFileCollection(
    caller: KeyCaller,
    file: { data: Uint8Array; filename: string; mimeType?: string },
    settings: Omit<TextCollectionInput, 'text' | 'name'> & { name?: string },
    known?: KnownCount,
  ) {
    // The file is read as it is chunked (ingest/chunk-stream.ts): its text is not kept whole (raw_text; nothing reads it yet).
    const input = { ...settings, name: settings.name || file.filename, type: 'file' as const, source: file.filename };
    const source = await this.fileInput(caller, settings.datasetId, file);
    try {
      return await this.createCollection(caller, input, source, { rawText: null, empty: () => emptyFile(file.filename) }, known);
    } catch (err) {
      if (!(err instanceof NeedsOcr) || !('file' in source)) throw err;
    }
    const dataset = await this.uploadTarget(caller, settings.datasetId);
    const collection = newCollectionRow(caller.teamId, dataset.id, input, this.chunking(dataset.vector_model, input), null);
    const reading = {
      store: this.store,
      owner: this.jobs.owner,
      batchRows: this.jobs.batchRows,
      languages: this.reading.ocrLanguages ?? DEFAULT_OCR_LANGUAGES,
    };
    await this.jobs.readInBackground(collection, (signal) =>
      readScan(reading, collection, source.file, signal, (text, few, total) =>
        this.writer.writeChunks(collection, collection.training_type === 'qa' ? 'qa' : 'chunk', text, scanChunking(collection), { few, total, existing: true }),
      ),
    );
    return { collectionId: collection.id, insertLen: 0 };
  }

  /** What a file's chunks are made from: the team's parser's Markdown for the types it reads, else the file (read with OCR where the dataset says so). */
  private async fileInput(caller: KeyCaller, datasetId: string, file: ReadDocumentInput): Promise<ChunkInput> {
    const input = this.reading.customReader ? await this.reading.customReader.inputOf(file) : { file };
    if (!('file' in input)) return input;
    const format = detectFormat(file);
    return format === 'pdf' || format === 'image' ? { ...input, ocr: (await this.dataset(caller, datasetId)).ocr } : input;
  }

  /** A link: fetched with the address rules (no loopback or private addresses unless allowed), then chunked. */
  async createLinkCollection(caller: KeyCaller, link: string, settings: Omit<TextCollectionInput, 'text' | 'name'> & { name?: string }, allowPrivate: boolean) {
    await this.dataset(caller, settings.datasetId);
    const page = await fetchLink(link, { allowPrivate });
    return this.createTextCollection(caller, { ...settings, name: settings.name || page.title || page.url, text: page.text, type: 'link', source: page.url });
  }

  /** A website's pages from a start address, a link collection each (site-import.ts). */
  async createWebsiteCollections(caller: KeyCaller, input: Omit<SiteImport, 'allowPrivate'>, allowPrivate: boolean): Promise<WebsiteImported> {
    await this.dataset(caller, input.datasetId);
    return importSite(
      { existing: (datasetId, url) => this.syncStore.linkCollection(caller.teamId, datasetId, url), create: (c) => this.createTextCollection(caller, c) },
      { ...input, allowPrivate },
    );
  }

  /** FastGPT's collection/sync: a link collection read again (link-sync.ts). */
  async syncCollection(caller: KeyCaller, id: string, allowPrivate: boolean): Promise<SyncResult> {
    return this.syncLinkCollection(await this.collection(caller, id), allowPrivate);
  }

  /** A link collection read again; refused for other collections, and while it is imported, deleted or synced. */
  async syncLinkCollection(c: CollectionRow, allowPrivate: boolean): Promise<SyncResult> {
    if (c.type !== 'link') throw errors.badField('collectionId', `collection ${c.id} is made of a ${c.type}; only a link collection can be synced`);
    if (c.training_type !== 'chunk') throw errors.badField('collectionId', `collection ${c.id} holds question/answer pairs; only chunks are synced`);
    if (this.syncing.has(c.id) || (await this.store.job(c.id)))
      throw errors.conflict(`Collection ${c.id} is being imported, deleted or synced; try again when that is done`);
    this.syncing.add(c.id);
    try {
      const steps = linkSyncSteps({ syncStore: this.syncStore, datasets: this.store, writer: this.writer, allowPrivate, rawTextMax: RAW_TEXT_MAX });
      return await syncLink(steps, c);
    } finally {
      this.syncing.delete(c.id);
    }
  }

  /** A collection's name, and a link's scheduled sync. */
  async updateCollection(caller: KeyCaller, change: { id: string; name?: string; syncSchedule?: CollectionRow['sync_schedule'] }): Promise<void> {
    const c = await this.collection(caller, change.id);
    if (change.syncSchedule && change.syncSchedule !== 'off' && c.type !== 'link') {
      throw errors.badField('syncSchedule', `collection ${c.id} is made of a ${c.type}; only a link collection is synced`);
    }
    await this.syncStore.setSchedule(caller.teamId, change.id, change);
  }

  async collection(caller: KeyCaller, id: string) {
    const c = await this.store.collection(caller.teamId, id);
    if (!c) throw errors.notFound(`Collection ${id}`);
    return c;
  }

  async listCollections(caller: KeyCaller, datasetId: string, offset: number, pageSize: number, searchText?: string) {
    await this.dataset(caller, datasetId);
    const page = await this.store.listCollections(caller.teamId, datasetId, offset, pageSize, searchText);
    const progress =
      (await this.indexing.progress?.(
        datasetId,
        page.rows.map((r) => r.id),
      )) ?? new Map();
    return {
      total: page.total,
      rows: page.rows.map((r) => ({ ...r, training_amount: progress.get(r.id)?.waiting ?? 0, error_amount: progress.get(r.id)?.failed ?? 0 })),
    };
  }

  /** Answers once the collection is gone (a large one in steps: its job row shows how far; then the store is vacuumed). */
  async deleteCollection(caller: KeyCaller, id: string): Promise<void> {
    await this.jobs.deleteCollection(await this.collection(caller, id));
  }

  async pushData(caller: KeyCaller, collectionId: string, data: PushDataItem[], trainingType: 'chunk' | 'qa' = 'chunk'): Promise<{ insertLen: number }> {
    if (data.length > MAX_PUSH) throw errors.badField('data', `at most ${MAX_PUSH} items a request (got ${data.length})`);
    const collection = await this.collection(caller, collectionId);
    const dataset = await this.dataset(caller, collection.dataset_id);
    const limit = this.models.vectorModels.find((m) => m.model === dataset.vector_model)?.maxToken;
    data.forEach((d, i) => {
      if (!d.q.trim()) throw errors.badField(`data[${i}].q`, 'must not be empty');
      if (limit && countTextTokens(d.q + (d.a ? `\n${d.a}` : '')) > limit * 4) {
        throw errors.badField(`data[${i}].q`, `is far longer than ${dataset.vector_model} reads (${limit} tokens); split it`);
      }
    });
    const now = Date.now();
    return this.store.transaction(async (tx) => {
      let next = await this.store.nextChunkIndex(collectionId, tx);
      const items: NewDataItem[] = data.map((d) => ({
        row: {
          id: newId(),
          dataset_id: dataset.id,
          collection_id: collectionId,
          team_id: caller.teamId,
          q: d.q,
          a: d.a ?? '',
          chunk_index: next++,
          title_path: '[]',
          created_at: now,
          updated_at: now,
        },
        indexes: indexTexts(d.q, d.a ?? '', d.indexes),
      }));
      await this.writer.enqueueNew(tx, caller.teamId, dataset.id, collectionId, items, trainingType);
      return { insertLen: items.length };
    });
  }

  async dataItem(caller: KeyCaller, id: string): Promise<DataRow & { indexes: { id: number; text: string; is_default: boolean }[] }> {
    const row = await this.store.dataItem(caller.teamId, id);
    if (!row) throw errors.notFound(`Data ${id}`);
    return { ...row, indexes: await this.store.indexesOf(id) };
  }

  async listData(caller: KeyCaller, collectionId: string, offset: number, pageSize: number, searchText?: string) {
    await this.collection(caller, collectionId);
    return this.store.listData(caller.teamId, collectionId, offset, pageSize, searchText);
  }

  /** New text means new vectors: the item is queued again in the same transaction. */
  async updateData(caller: KeyCaller, id: string, input: { q?: string; a?: string; indexes?: { text: string }[] }): Promise<void> {
    const row = await this.store.dataItem(caller.teamId, id);
    if (!row) throw errors.notFound(`Data ${id}`);
    const q = input.q ?? row.q;
    const a = input.a ?? row.a;
    if (!q.trim()) throw errors.badField('q', 'must not be empty');
    await this.store.transaction(async (tx) => {
      await this.store.updateData(id, q, a, indexTexts(q, a, input.indexes), tx);
      await this.indexing.enqueue(tx, [{ teamId: caller.teamId, datasetId: row.dataset_id, collectionId: row.collection_id, dataId: id, mode: 'chunk' }]);
    });
  }

  async deleteData(caller: KeyCaller, id: string): Promise<void> {
    if (!(await this.store.deleteData(caller.teamId, id))) throw errors.notFound(`Data ${id}`);
  }
}

/** The default index (q, and a when there is one) and any custom ones, without repeats. */
function indexTexts(q: string, a: string, custom?: { text: string }[]): string[] {
  const texts = [a.trim() ? `${q}\n${a}` : q, ...(custom ?? []).map((i) => i.text).filter((t) => t.trim())];
  return [...new Set(texts)];
}
