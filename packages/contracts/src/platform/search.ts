// searchTest, and the indexing progress, problem list and retry endpoints of collections.
import { z } from 'zod';
import { id, pageOf } from './common.js';

export const searchTestBody = z.object({
  datasetId: id,
  text: z.string().trim().min(1).max(10_000),
  limit: z.number().int().min(1).max(100_000).default(5000),
  similarity: z.number().min(0).max(1).default(0),
  searchMode: z.enum(['embedding', 'fullTextRecall', 'mixedRecall']).default('embedding'),
  embeddingWeight: z.number().min(0).max(1).optional(),
  usingReRank: z.boolean().default(false),
  rerankModel: z.string().optional(),
  datasetSearchUsingExtensionQuery: z.boolean().default(false),
  datasetSearchExtensionModel: z.string().optional(),
  datasetSearchExtensionBg: z.string().max(10_000).optional(),
});

export const trainingErrorsBody = z.object({
  collectionId: id,
  offset: z.number().int().min(0).max(1_000_000).optional(),
  /** FastGPT's pages also come as pageNum (1-based). */
  pageNum: z.number().int().min(1).max(100_000).optional(),
  pageSize: z.number().int().min(1).max(100).default(20),
});
export const updateTrainingDataBody = z
  .object({
    dataId: id.optional(),
    collectionId: id.optional(),
    datasetId: id.optional(),
    q: z.unknown().optional(),
    a: z.unknown().optional(),
    chunkIndex: z.unknown().optional(),
  })
  .refine((x) => x.dataId || x.collectionId || x.datasetId, { message: 'name a dataId (one item), a collectionId or a datasetId', path: ['dataId'] })
  // FastGPT edits an item's text here; kbchat's items are the data rows themselves, changed through data/update.
  .refine((x) => x.q === undefined && x.a === undefined && x.chunkIndex === undefined, {
    message: "a training item's text is not edited here: change the chunk with PUT /api/core/dataset/data/update, then retry it",
    path: ['q'],
  });
export const collectionIdQuery = z.object({ collectionId: id });
export const retryFailedBody = z
  .object({ collectionId: id.optional(), datasetId: id.optional() })
  .refine((x) => x.collectionId || x.datasetId, { message: 'name a collectionId or a datasetId', path: ['collectionId'] });

export type SearchTestBody = z.input<typeof searchTestBody>;
export type TrainingErrorsBody = z.input<typeof trainingErrorsBody>;
export type RetryFailedBody = z.input<typeof retryFailedBody>;
export type UpdateTrainingDataBody = z.input<typeof updateTrainingDataBody>;

// What a search answers (searchTest, and each chat answer's datasetSearchNode record).

export const searchModeSchema = z.enum(['embedding', 'fullTextRecall', 'mixedRecall']);
export type SearchMode = z.infer<typeof searchModeSchema>;
export const scoreTypeSchema = z.enum(['embedding', 'fullText', 'reRank', 'rrf']);
export type ScoreType = z.infer<typeof scoreTypeSchema>;
export const fusionMethodSchema = z.enum(['rrf', 'linear']);
export type FusionMethod = z.infer<typeof fusionMethodSchema>;

export const searchScoreSchema = z.object({
  type: scoreTypeSchema,
  value: z.number(),
  /** rank in that list, from 0 */
  index: z.number(),
});
export type SearchScore = z.infer<typeof searchScoreSchema>;

export const searchResultItemSchema = z.object({
  id: z.string(),
  q: z.string(),
  a: z.string(),
  chunkIndex: z.number(),
  datasetId: z.string(),
  collectionId: z.string(),
  sourceName: z.string(),
  sourceId: z.string(),
  /** The pages of its document the item comes from, first and last (a PDF's chunks; kbchat's addition). */
  pages: z.tuple([z.number().int(), z.number().int()]).optional(),
  /** The rows of its sheet or CSV file the item holds, first and last (a spreadsheet's chunks; kbchat's addition). */
  rows: z.tuple([z.number().int(), z.number().int()]).optional(),
  score: z.array(searchScoreSchema),
});
export type SearchResultItem = z.infer<typeof searchResultItemSchema>;

/** Why a result that was found is not in the list: below the similarity threshold, or past the token budget (limit). */
export const dropReasonSchema = z.enum(['similarity', 'limit']);
export type DropReason = z.infer<typeof dropReasonSchema>;

/** A result that was found but dropped, with its scores and ranks, the rule that dropped it and the number that rule read. */
export const droppedItemSchema = searchResultItemSchema.extend({
  reason: dropReasonSchema,
  /** What the similarity filter compared with the threshold. */
  similarityValue: z.number(),
  /** Its q + a tokens, which the budget counts. */
  tokens: z.number(),
});
export type DroppedItem = z.infer<typeof droppedItemSchema>;

export const searchResultSchema = z.object({
  list: z.array(searchResultItemSchema),
  /** The first results found but dropped by the similarity threshold or the token budget, in rank order (q and a cut short). */
  dropped: z.array(droppedItemSchema),
  /** How many results the recall found (the fused shortlist). */
  found: z.number(),
  duration: z.string(),
  searchMode: searchModeSchema,
  limit: z.number(),
  similarity: z.number(),
  usingReRank: z.boolean(),
  fusion: fusionMethodSchema,
  embeddingWeight: z.number(),
  queries: z.array(z.string()),
});
export type SearchResult = z.infer<typeof searchResultSchema>;

/** What a step did not send its model, in its responseData record. */
export const inputCutSchema = z.object({
  /** The question's length, and how much of it the step sent. */
  questionChars: z.number(),
  sentChars: z.number(),
  historyTurns: z.number(),
  sentHistoryTurns: z.number(),
  /** The model's context (config.json maxContext, or the default) that the cut is for. */
  maxContext: z.number(),
});
export type InputCut = z.infer<typeof inputCutSchema>;

/** How much of a long question the search read. */
export const questionCutSchema = z.object({
  questionChars: z.number(),
  /** What full-text search and rerank read. */
  searchedChars: z.number(),
  /** What the vector model embedded: its first `maxToken` tokens. */
  embeddedChars: z.number().optional(),
  vectorModel: z.string().optional(),
  /** The vector model's limit. */
  maxToken: z.number().optional(),
});
export type QuestionCut = z.infer<typeof questionCutSchema>;

export const extensionResultSchema = z.object({
  queries: z.array(z.string()),
  model: z.string(),
  inputTokens: z.number(),
  outputTokens: z.number(),
  /** The gateway's id of the call (its request log has the channel and the cost). */
  requestId: z.string().optional(),
  /** Set when the question or history was longer than the model's context allows. */
  inputCut: inputCutSchema.optional(),
});
export type ExtensionResult = z.infer<typeof extensionResultSchema>;

export const modelCallKindSchema = z.enum(['chat', 'embeddings', 'rerank']);
export type ModelCallKind = z.infer<typeof modelCallKindSchema>;

/** A model call of a search or a chat turn, as the platform saw it. */
export const modelCallSchema = z.object({
  /** What the call was for: queryExtension, classifyQuestion, contentExtract, embeddings, rerank, chatNode. */
  step: z.string(),
  kind: modelCallKindSchema,
  model: z.string(),
  /** The gateway's X-Request-Id; absent only when the gateway was not reached. */
  requestId: z.string().optional(),
  /** Seconds, as the platform measured it (two decimals, FastGPT's unit). */
  runningTime: z.number(),
  error: z.string().optional(),
});
export type ModelCall = z.infer<typeof modelCallSchema>;

export const searchOutcomeSchema = searchResultSchema.extend({
  extension: extensionResultSchema.optional(),
  missingDatasets: z.array(z.string()),
  /** Set when the question was longer than the search reads. */
  questionCut: questionCutSchema.optional(),
  /** Every model call the search made (query extension, embeddings, rerank), with the gateway's request ids. */
  modelCalls: z.array(modelCallSchema),
  /** What a reader of the result should know: a full-text fallback, a cut question. */
  note: z.string().optional(),
});
export type SearchOutcome = z.infer<typeof searchOutcomeSchema>;

/** What searchTest answers: the search's outcome in FastGPT's names, kbchat's own beside them. */
export const searchTestAnswerSchema = searchOutcomeSchema
  .pick({ list: true, duration: true, searchMode: true, limit: true, similarity: true, usingReRank: true })
  .extend({
    queryExtensionModel: z.string().optional(),
    queryExtensionResult: z.object({ model: z.string(), queries: z.array(z.string()) }).optional(),
  })
  .extend(searchOutcomeSchema.pick({ questionCut: true, note: true, dropped: true, found: true, modelCalls: true }).shape);
export type SearchTestAnswer = z.infer<typeof searchTestAnswerSchema>;

/** Why an item is not indexed (yet). */
export const INDEXING_REASONS = ['rate_limited', 'model_missing', 'parse_failure', 'upstream_error', 'other'] as const;
export type IndexingReason = (typeof INDEXING_REASONS)[number];

/** A problem item of getTrainingError: FastGPT's fields, then kbchat's own. */
export const publicTrainingErrorSchema = z.object({
  _id: z.string(),
  datasetId: z.string(),
  collectionId: z.string(),
  /** The data row (chunk items); null for a qa item, which has none yet. */
  dataId: z.string().nullable(),
  mode: z.enum(['chunk', 'qa']),
  chunkIndex: z.number().nullable(),
  /** The start of the chunk's text, to recognise it by. */
  q: z.string(),
  errorMsg: z.string(),
  /** FastGPT's retryCount is what is left, not what was used. */
  retryCount: z.number(),
  status: z.enum(['failed', 'waiting', 'indexing']),
  reason: z.enum(INDEXING_REASONS),
  attempts: z.number(),
  maxAttempts: z.number(),
  nextAttemptAt: z.string().nullable(),
  updateTime: z.string(),
});
export type PublicTrainingError = z.infer<typeof publicTrainingErrorSchema>;

export const collectionProgressSchema = z.object({
  collectionId: z.string(),
  queued: z.number(),
  indexing: z.number(),
  failed: z.number(),
  done: z.number(),
  total: z.number(),
  lastError: z.string().nullable(),
  rateLimited: z.number(),
  rateLimitedUntil: z.string().nullable(),
  timeLeftSeconds: z.number().nullable(),
  job: z.object({ kind: z.enum(['import', 'delete', 'ocr']), done: z.number(), total: z.number() }).nullable(),
});
export type CollectionProgress = z.infer<typeof collectionProgressSchema>;

export const datasetProgressSchema = collectionProgressSchema.omit({ collectionId: true, job: true }).extend({
  /** Collections being deleted in steps: not counted in the rest. */
  deleting: z.number(),
});
export type DatasetProgress = z.infer<typeof datasetProgressSchema>;

/** GET /api/core/dataset/trainingDetail: the dataset's sum, its vector index and each collection's progress. */
export const datasetTrainingDetailSchema = datasetProgressSchema.extend({
  /** 'exact' until the worker builds the HNSW graph (when its queue is quiet): searches scan every vector meanwhile; null before any vector. */
  vectorIndex: z.enum(['hnsw', 'exact']).nullable(),
  collections: z.array(collectionProgressSchema),
});
export type DatasetTrainingDetail = z.infer<typeof datasetTrainingDetailSchema>;

/** GET /api/core/dataset/collection/trainingDetail: FastGPT's counts, then kbchat's (collectionId, timeLeftSeconds and job once something of it was queued). */
export const collectionTrainingDetailSchema = collectionProgressSchema.partial({ collectionId: true, timeLeftSeconds: true, job: true }).extend({
  trainingType: z.string(),
  queuedCounts: z.number(),
  trainingCounts: z.number(),
  errorCounts: z.number(),
  trainedCount: z.number(),
});
export type CollectionTrainingDetail = z.infer<typeof collectionTrainingDetailSchema>;

export const trainingErrorPageSchema = pageOf(publicTrainingErrorSchema);

/** A retry: how many items were queued again. */
export const retriedSchema = z.object({ retried: z.number() });
