// GET /api/core/ai/model/list: the models config.json offers and whether the gateway serves each.
import { z } from 'zod';

export const modelKindSchema = z.enum(['llm', 'embedding', 'rerank']);
export type ModelKind = z.infer<typeof modelKindSchema>;

/** Calls to a model that failed on the gateway's side since its last success. */
export const modelFailingSchema = z.object({
  /** Failed calls in a row (a success clears them). */
  failures: z.number(),
  /** The first of them and the last, ISO times. */
  since: z.string(),
  lastAt: z.string(),
  /** The last failure's message, the gateway's own words. */
  lastError: z.string(),
});
export type ModelFailing = z.infer<typeof modelFailingSchema>;

export const modelStatusSchema = z.object({
  kind: modelKindSchema,
  model: z.string(),
  name: z.string(),
  /** The gateway lists it for the platform's token. */
  served: z.boolean(),
  /** Why not, in the gateway's own words where it gave some. */
  message: z.string().optional(),
  /** Served, but the platform's recent calls to it failed on the gateway's side. */
  failing: modelFailingSchema.optional(),
  maxContext: z.number().optional(),
  maxResponse: z.number().optional(),
  /** LLMs: the highest temperature the chat sends it (a higher setting is capped there). */
  maxTemperature: z.number().optional(),
  /** Embedding models: chunk size of new knowledge bases, in tokens. */
  defaultToken: z.number().optional(),
});
export type ModelStatus = z.infer<typeof modelStatusSchema>;

export const modelListSchema = z.object({
  gateway: z.object({ url: z.string(), reachable: z.boolean(), message: z.string().optional() }),
  models: z.array(modelStatusSchema),
});
export type ModelList = z.infer<typeof modelListSchema>;
