// /api/prices: what each model costs.
import { z } from 'zod';
import { MAX_UNITS } from './common.js';

const amount = z.number().finite().min(0, 'must be >= 0').max(MAX_UNITS, `must be <= ${MAX_UNITS}`);

export const directPriceBody = z.strictObject({ input_price: amount, output_price: amount });
export const ratioPriceBody = z.strictObject({ model_ratio: amount, completion_ratio: amount.optional() });
/** PUT's body is one form or the other (parsePrice picks which, so that a problem names a field of the form sent). */
export const priceBody = z.union([directPriceBody, ratioPriceBody]);

export type PriceBody = z.input<typeof priceBody>;

export const publicPriceSchema = z.object({
  model: z.string(),
  /** Currency units per 1M input tokens. */
  input_price: z.number(),
  /** Currency units per 1M output tokens. */
  output_price: z.number(),
  /** one-api's model_ratio: input_price / 2. */
  model_ratio: z.number(),
  /** one-api's completion_ratio: output / input; null when input is free. */
  completion_ratio: z.number().nullable(),
});
export type PublicPrice = z.infer<typeof publicPriceSchema>;

/** A model that has traffic or a channel but no price of its own, with what it is charged. */
export const unpricedModelSchema = publicPriceSchema.extend({
  /** 'default': DEFAULT_INPUT_PRICE / DEFAULT_OUTPUT_PRICE; 'free': served in-process. */
  charged: z.enum(['default', 'free']),
  /** Served by a channel (enabled or not). */
  in_channels: z.boolean(),
  /** Charged for tokens within log retention. */
  has_traffic: z.boolean(),
});
export type UnpricedModel = z.infer<typeof unpricedModelSchema>;

/** GET /api/prices. */
export const pricesAnswerSchema = z.object({
  data: z.array(publicPriceSchema),
  default: z.object({ input_price: z.number(), output_price: z.number() }),
  unpriced: z.array(unpricedModelSchema),
});
export type PricesAnswer = z.infer<typeof pricesAnswerSchema>;

/** DELETE /api/prices/<model>: the model charged the default price again. */
export const priceDeletedSchema = z.object({ deleted: z.literal(true), model: z.string() });
export type PriceDeleted = z.infer<typeof priceDeletedSchema>;
