// /api/core/dataset/check/*: a dataset's saved retrieval checks and their
// runs. Settings take searchTest's names.
import { z } from 'zod';
import { id } from './common.js';
import { dropReasonSchema } from './search.js';

export const expectationSchema = z
  .object({
    text: z.string().trim().min(1).max(2000).optional(),
    collectionId: id.optional(),
    dataId: id.optional(),
    label: z.string().max(500).optional(),
  })
  .strict()
  .refine((e) => e.text || e.collectionId || e.dataId, { message: 'name a text, a collectionId or a dataId that a found chunk must match', path: ['text'] });
/** searchTest's settings and defaults. */
export const checkSettingsSchema = z
  .object({
    searchMode: z.enum(['embedding', 'fullTextRecall', 'mixedRecall']).default('embedding'),
    similarity: z.number().min(0).max(1).default(0),
    limit: z.number().int().min(1).max(100_000).default(5000),
    embeddingWeight: z.number().min(0).max(1).optional(),
    usingReRank: z.boolean().default(false),
    rerankModel: z.string().min(1).max(200).optional(),
    datasetSearchUsingExtensionQuery: z.boolean().default(false),
    datasetSearchExtensionModel: z.string().min(1).max(200).optional(),
    datasetSearchExtensionBg: z.string().max(10_000).optional(),
  })
  .strict();
const question = z.string().trim().min(1).max(10_000);
const expected = z.array(expectationSchema).min(1, 'name at least one source the question should find').max(20);
export const createCheckBody = z.object({ datasetId: id, question, expected, settings: z.preprocess((v) => v ?? {}, checkSettingsSchema) });
export const updateCheckBody = z.object({ id, question: question.optional(), expected: expected.optional(), settings: checkSettingsSchema.optional() });
export const runChecksBody = z.object({ datasetId: id, wait: z.boolean().default(false) });
export const runQuery = z.object({ id: id.optional(), datasetId: id.optional() });

export type CreateCheckBody = z.input<typeof createCheckBody>;
export type UpdateCheckBody = z.input<typeof updateCheckBody>;
export type RunChecksBody = z.input<typeof runChecksBody>;

/** What a found chunk must be: a text it contains, a collection it belongs to, a data item it is (all that are named). */
export type Expectation = z.output<typeof expectationSchema>;
/** The settings searchTest takes, under the same names. */
export type CheckSettings = z.output<typeof checkSettingsSchema>;

export const expectationResultSchema = z.object({
  /** 1-based rank in the results a chat would be given; null: not among them. */
  rank: z.number().nullable(),
  /** The chunk that matched (its id changes with a re-chunk). */
  dataId: z.string().optional(),
  /** Found by the recall but dropped by the similarity threshold or the token budget, and where it stood. */
  dropped: z.object({ reason: dropReasonSchema, rank: z.number() }).optional(),
});
export type ExpectationResult = z.infer<typeof expectationResultSchema>;

/** One of the first results, enough to see what came instead. */
export const topResultSchema = z.object({
  dataId: z.string(),
  collectionId: z.string(),
  sourceName: z.string(),
  /** The ranking score that ordered the list (reRank, rrf, embedding or fullText, first present). */
  score: z.number(),
  scoreType: z.string(),
});
export type TopResult = z.infer<typeof topResultSchema>;

export const checkResultSchema = z.object({
  checkId: z.string(),
  question: z.string(),
  passed: z.boolean(),
  /** The search failed (a model missing, the gateway down): the check fails with this message. */
  error: z.string().optional(),
  expectations: z.array(expectationResultSchema),
  /** The expectations as they were when run, so a diff can tell an edited check from a changed ranking. */
  expected: z.array(expectationSchema),
  top: z.array(topResultSchema),
  /** How many the recall found before the threshold and budget. */
  found: z.number(),
});
export type CheckResult = z.infer<typeof checkResultSchema>;

/** A saved check, with its result in the dataset's latest finished run if it was in it. */
export const publicRetrievalCheckSchema = z.object({
  _id: z.string(),
  id: z.string(),
  datasetId: z.string(),
  question: z.string(),
  expected: z.array(expectationSchema),
  settings: checkSettingsSchema,
  createdAt: z.number(),
  updatedAt: z.number(),
  last: checkResultSchema.extend({ runId: z.string(), startedAt: z.number(), stale: z.boolean() }).optional(),
});
export type PublicRetrievalCheck = z.infer<typeof publicRetrievalCheckSchema>;

/** The dataset's chunks when a run began: any re-chunk, edit or new import changes the fingerprint. */
export const checkChunkingSchema = z.object({
  fingerprint: z.string(),
  collections: z.number(),
  chunks: z.number(),
  /** Items still queued or indexing then: their chunks were not all searchable yet. */
  pending: z.number(),
});
export type CheckChunking = z.infer<typeof checkChunkingSchema>;

/** interrupted: its process ended before it finished; its results are not kept. */
export const runStatusSchema = z.enum(['running', 'done', 'interrupted']);

export const checkRunSchema = z.object({
  id: z.string(),
  datasetId: z.string(),
  status: runStatusSchema,
  total: z.number(),
  done: z.number(),
  passed: z.number(),
  vectorModel: z.string(),
  chunking: checkChunkingSchema,
  results: z.array(checkResultSchema),
  startedAt: z.number(),
  updatedAt: z.number(),
  finishedAt: z.number().nullable(),
});
export type CheckRun = z.infer<typeof checkRunSchema>;

export const checkChangeSchema = z.enum(['newlyFailing', 'newlyPassing', 'stillFailing', 'stillPassing', 'new']);
export type CheckChange = z.infer<typeof checkChangeSchema>;

export const rankChangeSchema = z.object({
  /** Which expectation of the check (its index). */
  index: z.number(),
  expectation: expectationSchema,
  before: z.number().nullable(),
  after: z.number().nullable(),
  /** Found before, not among the results now. */
  lost: z.boolean(),
});
export type RankChange = z.infer<typeof rankChangeSchema>;

export const checkDiffSchema = z.object({
  checkId: z.string(),
  question: z.string(),
  change: checkChangeSchema,
  passed: z.boolean(),
  /** The check's expectations were edited between the runs: ranks are not compared. */
  edited: z.boolean(),
  rankChanges: z.array(rankChangeSchema),
});
export type CheckDiff = z.infer<typeof checkDiffSchema>;

/** The difference between a run and the one before it, per check. */
export const runDiffSchema = z.object({
  previousRunId: z.string().nullable(),
  previousStartedAt: z.number().nullable(),
  /** Set when the dataset's vector model differs from the previous run's. */
  vectorModelChanged: z.object({ before: z.string(), after: z.string() }).nullable(),
  /** The chunks (ids, edits, chunk settings) differ from the previous run's. */
  chunkingChanged: z.boolean(),
  counts: z.record(checkChangeSchema, z.number()),
  checks: z.array(checkDiffSchema),
  /** Checks in the previous run that are gone (deleted since). */
  removed: z.array(z.object({ checkId: z.string(), question: z.string() })),
});
export type RunDiff = z.infer<typeof runDiffSchema>;

/** A run without its results, as the list of runs has it. */
export const checkRunSummarySchema = checkRunSchema.omit({ results: true });
export type CheckRunSummary = z.infer<typeof checkRunSummarySchema>;

/** A run (null: the dataset has none) and, once it is done, its difference to the finished run before it. */
export const checkRunAnswerSchema = z.object({ run: checkRunSchema.nullable(), diff: runDiffSchema.nullable() });
export type CheckRunAnswer = z.infer<typeof checkRunAnswerSchema>;

/** A run started: its id, and with wait: true the run and its diff as well. */
export const checkRunStartedSchema = checkRunAnswerSchema.partial().extend({ runId: z.string() });
export type CheckRunStarted = z.infer<typeof checkRunStartedSchema>;
