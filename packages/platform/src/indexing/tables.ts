// The indexing queue and the measured indexing rates (indexing/migration.ts).
import type { Generated } from 'kysely';

export type IndexingMode = 'chunk' | 'qa';

/** Done items are deleted. */
export type QueueStatus = 'queued' | 'leased' | 'failed';

export interface TrainingQueueTable {
  id: Generated<number>;
  team_id: string;
  dataset_id: string;
  collection_id: string;
  /** chunk items point at a data row; qa items have none yet. */
  data_id: string | null;
  mode: IndexingMode;
  /** qa items carry their source chunk: {"text","chunkIndex"}. */
  payload: string | null;
  status: Generated<QueueStatus>;
  attempts: Generated<number>;
  lease_owner: string | null;
  lease_until: number | null;
  next_attempt_at: number;
  error: string | null;
  /** Why an item waits or failed: an IndexingReason (errors.ts), as read back unchecked (problem-store.ts checks it). */
  reason: string | null;
  /** The attempt limit of the worker that counted its attempts. */
  max_attempts: number | null;
  created_at: number;
  updated_at: number;
}

export interface IndexingRatesTable {
  model: string;
  mode: IndexingMode;
  /** A worker's id, or 'probe' (rate-store.ts). */
  worker_id: string;
  /** float8: a number on every driver. */
  items_per_second: number;
  items: number;
  busy_ms: number;
  measured_at: number;
}

export interface IndexingTables {
  training_queue: TrainingQueueTable;
  indexing_rates: IndexingRatesTable;
}
