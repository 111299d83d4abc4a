// Where a collection's chunks are written: its data rows and their queue
// items, in one statement where the store allows (a few), in steps where they
// are many (jobs.ts). Chunk mode stores the items; QA mode queues the chunks
// for the dataset's LLM, whose pairs become the items.
import type { RawBuilder } from 'kysely';
import { chunkBatches, type Chunk, type ChunkInput } from '../ingest/index.js';
import { chunkItems } from './collection-rows.js';
import type { CollectionJobs } from './jobs.js';
import type { CollectionRow, Db, DatasetsStore, NewDataItem } from './store.js';
import type { IndexingHooks } from './types.js';

export class CollectionWriter {
  constructor(
    private readonly store: DatasetsStore,
    private readonly indexing: IndexingHooks,
    private readonly jobs: CollectionJobs,
  ) {}

  /**
   * The chunks of `source` into `collection`: `few` (all of them, read
   * already) in one statement, else `total` in steps (jobs.ts), made as they
   * are written. The collection row is written with them, unless `existing`.
   */
  async writeChunks(
    collection: CollectionRow,
    mode: 'chunk' | 'qa',
    source: ChunkInput,
    settings: { chunkSize: number; chunkSplitter: string | undefined },
    o: { few: Chunk[] | undefined; total: number; existing: boolean },
  ): Promise<void> {
    const itemsOf = (list: Chunk[], from: number) => chunkItems(collection, list, from);
    const { team_id: teamId, dataset_id: datasetId, id: collectionId } = collection;
    if (o.few) return this.enqueueNew(undefined, teamId, datasetId, collectionId, itemsOf(o.few, 0), mode, o.existing ? undefined : collection);
    // Too many for one statement: made and written a batch a step, indexing starting on the first while the rest goes in.
    await this.jobs.importInSteps(
      collection,
      o.total,
      chunkBatches(source, settings, this.jobs.batchRows),
      (batch, from, progress) => this.enqueueNew(undefined, teamId, datasetId, collectionId, itemsOf(batch, from), mode, undefined, progress),
      { existing: o.existing },
    );
  }

  /**
   * Chunk mode stores the items and queues them for embedding. QA mode stores
   * nothing yet: each chunk goes to the dataset's LLM, and the question/answer
   * pairs it returns become the items (indexing/qa-processor.ts). Without `tx`,
   * in a transaction of its own (or none where one statement does it all).
   */
  async enqueueNew(
    tx: Db | undefined,
    teamId: string,
    datasetId: string,
    collectionId: string,
    items: NewDataItem[],
    mode: 'chunk' | 'qa',
    collection?: CollectionRow,
    progress?: RawBuilder<unknown>,
  ): Promise<void> {
    if (mode === 'chunk' && this.indexing.enqueueStatement) {
      const queued = items.map((i) => ({ teamId, datasetId, collectionId, dataId: i.row.id, mode }));
      await this.store.insertData(items, tx, collection, [this.indexing.enqueueStatement(queued), ...(progress ? [progress] : [])]);
      this.indexing.enqueued?.();
      return;
    }
    if (!tx) return this.store.transaction((t) => this.enqueueNew(t, teamId, datasetId, collectionId, items, mode, collection, progress));
    if (progress) await this.store.run(progress, tx);
    if (mode === 'qa') {
      if (collection) await this.store.insertCollection(collection, tx);
      const payload = (i: NewDataItem) => JSON.stringify({ text: i.row.a ? `${i.row.q}\n${i.row.a}` : i.row.q, chunkIndex: i.row.chunk_index });
      await this.indexing.enqueue(
        tx,
        items.map((i) => ({ teamId, datasetId, collectionId, mode, payload: payload(i) })),
      );
      return;
    }
    await this.store.insertData(items, tx, collection);
    await this.indexing.enqueue(
      tx,
      items.map((i) => ({ teamId, datasetId, collectionId, dataId: i.row.id, mode })),
    );
  }
}
