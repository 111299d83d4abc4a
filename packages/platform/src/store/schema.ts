// The platform store's tables, as Kysely sees them. Ids are text (short random
// ids, like FastGPT's ObjectId strings); times are epoch milliseconds.
import type { Generated } from 'kysely';

export interface TeamsTable {
  id: string;
  name: string;
  created_at: number;
}

export interface ApiKeysTable {
  id: Generated<number>;
  team_id: string;
  /** Set for an application key: it opens only that application's chat. */
  app_id: string | null;
  name: string;
  /** sha256 of the key; the key itself is shown once and never stored. */
  key_hash: string;
  /** The first characters, so that a user can tell keys apart. */
  key_prefix: string;
  created_at: number;
  expires_at: number | null;
  revoked_at: number | null;
  last_used_at: number | null;
}

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

export interface PlatformTables {
  teams: TeamsTable;
  api_keys: ApiKeysTable;
  datasets: DatasetsTable;
  collections: CollectionsTable;
  data: DataTable;
  data_indexes: DataIndexesTable;
}
