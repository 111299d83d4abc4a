// Retrieval's tables (retrieval/schema.ts says what each is for). Every query
// of them is raw SQL (unnest, triggers, pgvector operators), typed with
// sql<Row>; these declare them for the platform's database type all the same.
// The vectors_<dims> tables are made on demand, one per dimension, and so are
// not declared: their queries name them with sql.table.
import type { Generated } from 'kysely';

export interface SearchDocsTable {
  data_id: string;
  dataset_id: string;
  length: number;
  /** bigserial: every indexed document's sequence number, what in-memory copies catch up by. */
  seq: Generated<number>;
}

export interface SearchTermsTable {
  dataset_id: string;
  term: string;
  data_id: string;
  tf: number;
  doc_length: number;
}

/** Kept by statement triggers on search_docs. */
export interface SearchStatsTable {
  dataset_id: string;
  doc_count: number;
  total_length: number;
  last_seq: Generated<number>;
  removed: Generated<number>;
}

/** Kept by statement triggers on each vectors_<dims> table. */
export interface VectorStatsTable {
  dataset_id: string;
  dims: number;
  vector_count: number;
  last_seq: Generated<number>;
  removed: Generated<number>;
}

export interface RetrievalTables {
  search_docs: SearchDocsTable;
  search_terms: SearchTermsTable;
  search_stats: SearchStatsTable;
  vector_stats: VectorStatsTable;
}
