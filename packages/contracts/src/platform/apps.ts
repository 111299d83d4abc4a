// /api/core/app/*: what an application holds, validated with errors that name
// the field. The same schema checks a create body, and an update merged onto
// the stored app.
import { z } from 'zod';
import { annotationReplySchema } from './annotations.js';
import { id, pageOf } from './common.js';

export const SEARCH_MODES = ['embedding', 'fullTextRecall', 'mixedRecall'] as const;

const category = z.object({
  /** What the classifier answers with. */
  id: z.string().trim().min(1).max(64),
  description: z.string().trim().min(1).max(2000),
  /** Knowledge bases searched for this category instead of the app's. */
  datasets: z.array(id).max(50).optional(),
  /** Added to the system prompt for this category. */
  prompt: z.string().max(50_000).optional(),
  /** A fixed answer: no search and no model call. */
  reply: z.string().min(1).max(50_000).optional(),
});

const extractField = z.object({
  key: z.string().regex(/^[A-Za-z_][\w-]{0,63}$/, 'a key is a letter or _ followed by up to 63 letters, digits, _ or -'),
  description: z.string().max(2000).default(''),
  type: z.enum(['string', 'number', 'boolean']).default('string'),
  required: z.boolean().default(false),
  enum: z.array(z.string().max(500)).max(100).optional(),
});

export const appSettingsSchema = z.object({
  /** The gateway model that answers (an llmModels entry of config.json). */
  model: z.string().min(1),
  systemPrompt: z.string().max(100_000).default(''),
  temperature: z.number().min(0).max(2).optional(),
  maxToken: z.number().int().min(1).max(1_000_000).optional(),
  /** Knowledge bases searched for every question (none: a plain chat app). */
  datasets: z.array(id).max(50).default([]),
  search: z
    .object({
      searchMode: z.enum(SEARCH_MODES).default('mixedRecall'),
      similarity: z.number().min(0).max(1).default(0),
      /** Token budget of the quotes. */
      limit: z.number().int().min(1).max(100_000).default(3000),
      embeddingWeight: z.number().min(0).max(1).optional(),
      usingReRank: z.boolean().default(false),
      rerankModel: z.string().min(1).optional(),
      queryExtension: z
        .object({ enabled: z.boolean().default(false), model: z.string().min(1).optional(), background: z.string().max(20_000).default('') })
        .prefault({}),
      /** Offer the knowledge-base search to the model as a tool (it searches when and for what it chooses) instead of searching the question first. */
      asTool: z.boolean().default(false),
    })
    .prefault({}),
  /** How one quote is written: {{q}}, {{a}}, {{source}}, {{sourceId}}, {{index}}. */
  quoteTemplate: z.string().min(1).max(20_000).optional(),
  /** The user message when quotes were found: {{quote}} and {{question}}. */
  quotePrompt: z.string().min(1).max(50_000).optional(),
  classify: z
    .object({ model: z.string().min(1).optional(), background: z.string().max(20_000).default(''), categories: z.array(category).min(2).max(50) })
    .nullable()
    .default(null),
  extract: z
    .object({ model: z.string().min(1).optional(), description: z.string().max(20_000).default(''), fields: z.array(extractField).min(1).max(50) })
    .nullable()
    .default(null),
  /** Curated replies: a question close enough to an annotation's gets its answer, with no search and no model call. */
  annotationReply: annotationReplySchema.prefault({}),
  /** Tools the answering model may call, from the team's tool sources (/api/core/tool/source/*). */
  tools: z
    .array(z.object({ sourceId: id, name: z.string().trim().min(1).max(200) }))
    .max(20, 'at most 20 tools')
    .refine((list) => new Set(list.map((t) => `${t.sourceId}/${t.name}`)).size === list.length, 'each tool once')
    .default([]),
  /** The most rounds of tool calls in one answer; then the model answers with what it has. */
  toolRounds: z.number().int().min(1).max(10).default(5),
});

export type AppSettings = z.infer<typeof appSettingsSchema>;
export type AppCategory = z.infer<typeof category>;
export type AppExtractField = z.infer<typeof extractField>;

const appMeta = { name: z.string().trim().min(1).max(200), intro: z.string().max(5000).default('') };

export const createAppSchema = z.object({ ...appMeta, ...appSettingsSchema.shape });
/** An update names the app and any fields to change; the merge is validated whole. */
export const updateAppSchema = z.object({ appId: id, name: appMeta.name.optional(), intro: z.string().max(5000).optional() }).passthrough();
export const appIdQuery = z.object({ appId: id });
export const listAppsBody = z.object({
  searchKey: z.string().max(200).optional(),
  offset: z.number().int().min(0).default(0),
  pageSize: z.number().int().min(1).max(500).default(100),
});

export type CreateAppBody = z.input<typeof createAppSchema>;
export type UpdateAppBody = z.input<typeof updateAppSchema>;
export type ListAppsBody = z.input<typeof listAppsBody>;

/** An application as the API answers it: FastGPT's `simple` app, its settings spread in. */
export const publicAppSchema = z.object({
  _id: z.string(),
  id: z.string(),
  name: z.string(),
  intro: z.string(),
  type: z.literal('simple'),
  ...appSettingsSchema.shape,
  createTime: z.string(),
  updateTime: z.string(),
});
export type PublicApp = z.infer<typeof publicAppSchema>;

export const appPageSchema = pageOf(publicAppSchema);
