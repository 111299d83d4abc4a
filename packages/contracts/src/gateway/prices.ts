// /api/prices: what each model costs.
import { z } from 'zod';
import { MAX_UNITS } from './common.js';

const amount = z.number().finite().min(0, 'must be >= 0').max(MAX_UNITS, `must be <= ${MAX_UNITS}`);

export const directPriceBody = z.strictObject({ input_price: amount, output_price: amount });
export const ratioPriceBody = z.strictObject({ model_ratio: amount, completion_ratio: amount.optional() });
/** PUT's body is one form or the other (parsePrice picks which, so that a problem names a field of the form sent). */
export const priceBody = z.union([directPriceBody, ratioPriceBody]);

export type PriceBody = z.input<typeof priceBody>;
