// Retrieval: full-text (BM25) and vector recall, fusion, rerank, budget.
export { analyze, termCounts, ENGLISH_STOPWORDS, type TermCounts } from './analyzer.js';
export { RetrievalError, isRetrievalError } from './errors.js';
export { retrievalMigrations, vectorTableName, HNSW_MAX_VECTOR_DIMS, HNSW_MAX_HALFVEC_DIMS, MAX_VECTOR_DIMS } from './schema.js';
export {
  ensureVectorTable,
  buildVectorIndexes,
  vacuumSearchTables,
  HNSW_MIN_ROWS,
  indexForSearch,
  storeVectors,
  removeData,
  checkUnitVectors,
  UNIT_NORM_TOLERANCE,
  type SearchItem,
  type VectorRow,
} from './store.js';
export { bm25Search, vectorSearch, loadDataRows, vectorIndexState, type ScoredId, type DataRow } from './search-store.js';
export { rrfFuse, linearFuse, RRF_K, type FusionMethod, type WeightedList } from './fusion.js';
export {
  searchDataset,
  withinBudget,
  SEARCH_DEFAULTS,
  type SearchMode,
  type SearchParams,
  type SearchDeps,
  type SearchResult,
  type SearchResultItem,
  type SearchScore,
  type DroppedItem,
  type DropReason,
  type ScoreType,
} from './search.js';
