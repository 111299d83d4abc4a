// /api/support/openapi/*: API keys, managed with a general key.
import { z } from 'zod';
import { id } from './common.js';

/** An ISO date or epoch milliseconds. */
const time = z.union([z.number().int().positive(), z.string().datetime({ offset: true })]).transform((t) => (typeof t === 'number' ? t : Date.parse(t)));
export const createKeyBody = z.object({
  name: z.string().trim().min(1).max(200).default('API key'),
  appId: id.optional(),
  expiredTime: time.optional(),
  // FastGPT nests the expiry in `limit`.
  limit: z.object({ expiredTime: time.optional() }).optional(),
});
export const listKeysQuery = z.object({ appId: id.optional() });
export const deleteKeyQuery = z.object({ id: z.coerce.number().int().positive() });

export type CreateKeyBody = z.input<typeof createKeyBody>;

/** A key as listed: its prefix only (the key itself is in create's answer and nowhere else). */
export const publicKeySchema = z.object({
  _id: z.string(),
  id: z.string(),
  name: z.string(),
  appId: z.string().optional(),
  apiKey: z.string(),
  createTime: z.string(),
  lastUsedTime: z.string().optional(),
  limit: z.object({ expiredTime: z.string().optional() }),
});
export type PublicKey = z.infer<typeof publicKeySchema>;
