// The shapes the datasets service takes and gives, apart from its code: what
// indexing is told (IndexingHooks), what an import is made of, and a plan of one.
import type { RawBuilder } from 'kysely';
import type { Db } from './store.js';

export type QueueEntry = { teamId: string; datasetId: string; collectionId: string; dataId?: string; mode: 'chunk' | 'qa'; payload?: string };

/** What indexing needs to hear about new or changed data (the queue; wired at start). */
export interface IndexingHooks {
  /** Called inside the transaction that wrote the items. */
  enqueue(tx: Db, items: QueueEntry[]): Promise<void>;
  /** The queue's INSERT for `items`, to run inside the statement that writes their data rows; `enqueued` follows once it ran. */
  enqueueStatement?(items: QueueEntry[]): RawBuilder<unknown>;
  /** Items went in through enqueueStatement. */
  enqueued?(): void;
  /** Items still to index and failed ones, per collection (for the collection list). */
  progress?(datasetId: string, collectionIds: string[]): Promise<Map<string, { waiting: number; failed: number }>>;
}

export interface TextCollectionInput {
  datasetId: string;
  name: string;
  text: string;
  trainingType: 'chunk' | 'qa';
  chunkSize?: number;
  chunkSplitter?: string;
  qaPrompt?: string;
  metadata?: Record<string, unknown>;
  type?: 'text' | 'file' | 'link';
  source?: string | null;
}

export interface PushDataItem {
  q: string;
  a?: string;
  indexes?: { text: string }[];
}

/** What an import of a file would make: its chunks (counted by the real chunker) and the models that would index them. */
export interface ImportPlan {
  chunks: number;
  chunkSize: number;
  chunkSplitter: string | undefined;
  trainingType: 'chunk' | 'qa';
  vectorModel: string;
  agentModel: string | null;
  /** Up to PLAN_SAMPLE chunk texts spread through the file (what a speed probe embeds). */
  sample: string[];
  /** A scan: the pages OCR will read (its chunks are not counted before: `chunks` is this, a page's worth each). */
  ocrPages?: number;
}

/** The chunk count of an earlier plan of the same content, for an import that would otherwise count it first. */
export interface KnownCount {
  chunks: number;
  chunkSize: number;
  chunkSplitter: string | undefined;
}
