// /api/core/dataset/check/*: a dataset's saved retrieval checks and their
// runs. Settings take searchTest's names.
import { z } from 'zod';
import { id } from './common.js';

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
