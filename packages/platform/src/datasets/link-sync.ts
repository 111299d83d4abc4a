// A link collection read again (FastGPT's collection/sync; issue 29): the page
// is fetched with the link rules, and when its text changed, chunked as at its
// import. A chunk whose text the page still has keeps its data row and vectors
// (its place updated); a new chunk is queued for indexing; a chunk the page no
// longer has is superseded: searchable until nothing of the collection waits
// to be indexed, then removed (retire). A link may be synced daily or weekly:
// a timer claims the due ones (sync-store.ts), one process each.
import { chunksUpTo, fetchLink, type Chunk } from '../ingest/index.js';
import { chunkItems } from './collection-rows.js';
import type { CollectionWriter } from './collection-writer.js';
import { scanChunking } from './scan-reading.js';
import type { CollectionRow, DatasetsStore, Db } from './store.js';
import type { SyncStore } from './sync-store.js';

/** FastGPT's answers: the page had not changed, or the collection now has its new text. */
export type SyncResult = 'sameRaw' | 'success';

export interface LinkSyncSteps {
  store: SyncStore;
  transaction<T>(fn: (tx: Db) => Promise<T>): Promise<T>;
  /** The page's text now (the link rules apply; failures are IngestErrors). */
  read(url: string): Promise<string>;
  /** The text's chunks, as the collection's import made them. */
  chunks(text: string, collection: CollectionRow): Promise<Chunk[]>;
  /** Writes and queues the new chunks, each at its place, in `tx`. */
  insert(tx: Db, collection: CollectionRow, chunks: { chunk: Chunk; index: number }[]): Promise<void>;
  /** Collections keep their text up to this many characters. */
  rawTextMax: number;
}

/** The steps as the platform takes them: the link rules, the collection's chunking, its rows written and queued as an import's. */
export function linkSyncSteps(o: {
  syncStore: SyncStore;
  datasets: DatasetsStore;
  writer: CollectionWriter;
  allowPrivate: boolean;
  rawTextMax: number;
}): LinkSyncSteps {
  return {
    store: o.syncStore,
    transaction: (fn) => o.datasets.transaction(fn),
    read: async (url) => (await fetchLink(url, { allowPrivate: o.allowPrivate })).text,
    chunks: async (text, collection) => (await chunksUpTo({ text }, scanChunking(collection), Number.MAX_SAFE_INTEGER)) ?? [],
    insert: (tx, c, list) =>
      o.writer.enqueueNew(
        tx,
        c.team_id,
        c.dataset_id,
        c.id,
        list.flatMap(({ chunk, index }) => chunkItems(c, [chunk], index)),
        'chunk',
      ),
    rawTextMax: o.rawTextMax,
  };
}

export async function syncLink(s: LinkSyncSteps, collection: CollectionRow, now = Date.now()): Promise<SyncResult> {
  const text = await s.read(collection.source ?? '');
  if (collection.raw_text !== null && collection.raw_text === text) {
    await s.store.markRead(collection.id, now);
    return 'sameRaw';
  }
  const chunks = await s.chunks(text, collection);
  const current = await s.store.currentChunks(collection.id);
  // Rows by their text (a chunk's text alone: question/answer rows are never a page's chunks).
  const byText = new Map<string, string[]>();
  for (const row of current) if (!row.a) byText.set(row.q, [...(byText.get(row.q) ?? []), row.id]);
  const keep: { id: string; chunkIndex: number }[] = [];
  const fresh: { chunk: Chunk; index: number }[] = [];
  chunks.forEach((chunk, index) => {
    const id = byText.get(chunk.text)?.shift();
    if (id) keep.push({ id, chunkIndex: index });
    else fresh.push({ chunk, index });
  });
  const kept = new Set(keep.map((k) => k.id));
  const supersede = current.filter((row) => !kept.has(row.id)).map((row) => row.id);
  const rawText = text.length <= s.rawTextMax ? text : null;
  const indexOf = new Map(current.map((row) => [row.id, row.chunk_index]));
  const moved = keep.some((k) => indexOf.get(k.id) !== k.chunkIndex);
  if (!fresh.length && !supersede.length && !moved) {
    // The same chunks (the text differs only where chunking does not see it, or was not kept).
    await s.transaction((tx) => s.store.applySync(tx, { collectionId: collection.id, keep: [], supersede: [], rawText, now }));
    return 'sameRaw';
  }
  await s.transaction(async (tx) => {
    await s.store.applySync(tx, { collectionId: collection.id, keep, supersede, rawText, now });
    if (fresh.length) await s.insert(tx, collection, fresh);
  });
  return 'success';
}

export interface LinkSyncTimerOptions {
  store: SyncStore;
  /** Syncs a collection whose scheduled sync is due (claimed already). */
  sync(collection: CollectionRow): Promise<SyncResult>;
  /** How often due syncs are looked for, and superseded chunks retired. */
  checkMs: number;
  onError(err: unknown, collection?: CollectionRow): void;
}

/** Scheduled syncs, and the superseded chunks removed once their collection's new chunks are indexed. */
export class LinkSyncTimer {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  private stopping = false;

  constructor(private readonly o: LinkSyncTimerOptions) {}

  start(): void {
    this.timer = setInterval(() => void this.tick(), this.o.checkMs);
    this.timer.unref();
    void this.tick();
  }

  async stop(): Promise<void> {
    this.stopping = true;
    clearInterval(this.timer);
    await this.running;
  }

  /** One pass (never two at once): the due syncs, one at a time, then the retirements. */
  tick(): Promise<void> {
    this.running ??= this.pass().finally(() => (this.running = undefined));
    return this.running;
  }

  private async pass(): Promise<void> {
    try {
      for (let due = await this.o.store.claimDueSync(); due && !this.stopping; due = await this.o.store.claimDueSync()) {
        await this.o.sync(due).catch((err) => this.o.onError(err, due));
      }
      await this.o.store.retireSuperseded();
    } catch (err) {
      this.o.onError(err);
    }
  }
}
