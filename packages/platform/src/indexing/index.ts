// The indexing queue: durable items in the platform store, a worker that
// claims them with leases, and the chunk (embeddings) and QA processors.
export { indexingMigrations } from './migration.js';
export {
  enqueue,
  enqueueStatement,
  claimItems,
  renewLeases,
  completeItems,
  releaseItems,
  releaseAllLeases,
  failItems,
  markWaiting,
  wakeWaiting,
  retryFailed,
  listItems,
  queueDepth,
  type IndexingMode,
  type QueueItem,
  type EnqueueItem,
  type QueueDb,
} from './queue-store.js';
export { progress, sumProgress, type CollectionProgress, type DatasetProgress } from './progress.js';
export { IndexingWorker, notConfiguredText, type BatchProcessor, type IndexingWorkerOptions, type WorkerStats } from './worker.js';
export {
  NO_VECTOR_MODEL,
  NO_QA_MODEL,
  NotConfiguredError,
  ParseFailureError,
  isRateLimit,
  isItemSpecific,
  errorText,
  reasonOf,
  DEFAULT_MAX_ATTEMPTS,
  INDEXING_REASONS,
  type IndexingReason,
} from './errors.js';
export { listProblems, retryItem, PREVIEW_CHARS, type TrainingProblem, type ProblemStatus, type RetryOutcome } from './problem-store.js';
export { indexChunks, type ChunkIndexingDeps, type VectorRow, type PostingItem } from './chunk-processor.js';
export { indexQa, type QaIndexingDeps, type QaPayload } from './qa-processor.js';
export { loadIndexTexts, insertDataWithIndexes, type IndexText, type NewDataRow } from './data-store.js';
export { IndexingEstimates, type IndexingEstimate } from './estimate.js';
export { loadRates, saveRate, type IndexingRate } from './rate-store.js';
