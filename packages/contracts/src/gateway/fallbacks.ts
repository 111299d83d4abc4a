// /api/fallbacks: the models that answer, in order, when every channel of a
// model fails (gpt-4o -> gpt-4o-mini -> local-extractive).
import { z } from 'zod';

export const fallbacksBody = z.strictObject({
  fallbacks: z
    .array(z.string().trim().min(1, 'a model name').max(200, 'at most 200 characters'))
    .min(1, 'at least one model (DELETE removes them all)')
    .max(5, 'at most 5 models')
    .refine((list) => new Set(list).size === list.length, 'each model once'),
});
export type FallbacksBody = z.input<typeof fallbacksBody>;

export const modelFallbacksSchema = z.object({ model: z.string(), fallbacks: z.array(z.string()) });
export type ModelFallbacks = z.infer<typeof modelFallbacksSchema>;

export const fallbacksListSchema = z.object({ data: z.array(modelFallbacksSchema) });
export const fallbacksDeletedSchema = z.object({ deleted: z.literal(true), model: z.string() });
