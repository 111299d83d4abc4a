// Saved retrieval checks and their runs (retrieval-checks/migration.ts).

/** interrupted: its process ended before it finished; its results are not kept. */
export type RunStatus = 'running' | 'done' | 'interrupted';

export interface RetrievalChecksTable {
  id: string;
  team_id: string;
  dataset_id: string;
  question: string;
  /** JSON: [{text?, collectionId?, dataId?, label?}] */
  expected: string;
  /** JSON: searchTest's settings (searchMode, similarity, limit, ...) */
  settings: string;
  created_at: number;
  updated_at: number;
}

export interface RetrievalCheckRunsTable {
  id: string;
  team_id: string;
  dataset_id: string;
  status: RunStatus;
  total: number;
  done: number;
  passed: number;
  vector_model: string;
  /** JSON: {fingerprint, collections, chunks, pending}: the dataset's chunking when the run began. */
  chunking: string;
  /** JSON: one result per check, in the checks' order. */
  results: string;
  started_at: number;
  updated_at: number;
  finished_at: number | null;
}

export interface RetrievalChecksTables {
  retrieval_checks: RetrievalChecksTable;
  retrieval_check_runs: RetrievalCheckRunsTable;
}
