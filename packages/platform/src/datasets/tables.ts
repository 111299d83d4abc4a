// The datasets module's tables, as Kysely sees them (store/database.ts joins
// every module's into the platform's one database type). Ids are text (short
// random ids, like FastGPT's ObjectId strings); times are epoch milliseconds
// in bigint columns, read as numbers on both stores the platform runs on
// (PGlite, and PostgreSQL through numericTypeParsers).
import type { Generated } from 'kysely';

export interface DatasetsTable {
  id: string;
  team_id: string;
  name: string;
  intro: string;
  /** Bound at creation, never changed: every vector of the dataset comes from it. */
  vector_model: string;
  /** Learnt from the first vectors (checked unit length then). */
  vector_dimensions: number | null;
  agent_model: string | null;
  /** Scans and images are read with OCR (true unless turned off). */
  ocr: boolean;
  created_at: number;
  updated_at: number;
}

export interface CollectionsTable {
  id: string;
  dataset_id: string;
  team_id: string;
  name: string;
  /** text, file, link or data (pushData straight into an empty collection). */
  type: string;
  /** The file name or link a collection came from. */
  source: string | null;
  training_type: string;
  chunk_size: number;
  chunk_splitter: string | null;
  qa_prompt: string | null;
  metadata: string;
  /** The raw text kept for QA mode and re-chunking. */
  raw_text: string | null;
  /** Why the file could not be read, when that was found after the upload was answered (OCR). */
  read_error: string | null;
  /** Pages read with OCR: JSON [{page, confidence, error?}]; null when none were. */
  ocr_pages: string | null;
  /** A link's scheduled sync: off, daily or weekly (link-sync.ts). */
  sync_schedule: 'off' | 'daily' | 'weekly';
  /** When the link was last read (synced or created); null: at its creation. */
  synced_at: number | null;
  created_at: number;
  updated_at: number;
}

export interface DataTable {
  id: string;
  dataset_id: string;
  collection_id: string;
  team_id: string;
  q: string;
  a: string;
  chunk_index: number;
  /** Markdown heading path, JSON array of strings. */
  title_path: string;
  /** The pages of the document the chunk came from, first and last (PDF); null elsewhere. */
  page_start: number | null;
  page_end: number | null;
  /** The rows of its sheet or CSV file it holds, first and last (spreadsheets, CSV); null elsewhere. */
  row_start?: number | null;
  row_end?: number | null;
  /** A sync found the chunk gone from its page: it stays searchable until the new chunks are indexed, then goes. */
  superseded_at?: number | null;
  created_at: number;
  updated_at: number;
}

/** The texts that are embedded for a data item (the default index is q + a). */
export interface DataIndexesTable {
  id: Generated<number>;
  data_id: string;
  dataset_id: string;
  text: string;
  is_default: boolean;
}

/** ocr: a scan's pages being read (done, total: pages), before its chunks are imported. */
export type JobKind = 'import' | 'delete' | 'ocr';

/** A collection's import or delete in progress (datasets/migration.ts says what the row is for). */
export interface CollectionJobsTable {
  collection_id: string;
  team_id: string;
  dataset_id: string;
  kind: JobKind;
  /** Chunks written (import) or removed (delete) so far, of total. */
  done: number;
  total: number;
  owner: string;
  heartbeat_at: number;
  created_at: number;
}

export interface DatasetsTables {
  datasets: DatasetsTable;
  collections: CollectionsTable;
  data: DataTable;
  data_indexes: DataIndexesTable;
  collection_jobs: CollectionJobsTable;
}
