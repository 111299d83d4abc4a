// /api/tokens: gateway tokens, a user's own (administrators': anyone's they manage).
import { z } from 'zod';
import { gatewayPageOf, MAX_INT32, MAX_UNITS } from './common.js';
import { groupName } from './groups.js';

const fields = {
  name: z.string().trim().min(1, 'must not be empty').max(100, 'at most 100 characters'),
  status: z.enum(['enabled', 'disabled']),
  expires_at: z
    .number()
    .int('must be an integer (epoch milliseconds)')
    .refine((v) => v > Date.now(), 'must be a time in the future, in epoch milliseconds')
    .nullable(),
  quota_limit: z.number().finite().min(0, 'must be >= 0').max(MAX_UNITS, `must be <= ${MAX_UNITS}`).nullable(),
  models: z.array(z.string().trim().min(1, 'must be a non-empty model name').max(200, 'at most 200 characters')).max(1000, 'at most 1000 models'),
  ip_allow: z.string().max(4000, 'at most 4000 characters').nullable(),
  /** The token's own price group; null: its user's. Only administrators set it. */
  group: groupName.nullable(),
};

export const createTokenBody = z.strictObject({
  user_id: z.number().int().positive().max(MAX_INT32).optional(),
  name: fields.name,
  status: fields.status.optional(),
  expires_at: fields.expires_at.optional(),
  quota_limit: fields.quota_limit.optional(),
  models: fields.models.optional(),
  ip_allow: fields.ip_allow.optional(),
  group: fields.group.optional(),
});

export const patchTokenBody = z.strictObject({
  name: fields.name.optional(),
  status: fields.status.optional(),
  expires_at: fields.expires_at.optional(),
  quota_limit: fields.quota_limit.optional(),
  models: fields.models.optional(),
  ip_allow: fields.ip_allow.optional(),
  group: fields.group.optional(),
});

export type CreateTokenBody = z.input<typeof createTokenBody>;
export type PatchTokenBody = z.input<typeof patchTokenBody>;

/** A token as the admin API shows it: its hint, never the key. */
export const gatewayTokenSchema = z.object({
  id: z.number(),
  user_id: z.number(),
  name: z.string(),
  key_hint: z.string(),
  status: z.string(),
  expires_at: z.number().nullable(),
  quota_limit_micros: z.number().nullable(),
  quota_used_micros: z.number(),
  models: z.array(z.string()),
  ip_allow: z.string().nullable(),
  /** The token's own price group; null: it is charged as its user's group. */
  group: z.string().nullable(),
  created_at: z.number(),
  last_used_at: z.number().nullable(),
  /** The token the platform of this installation calls the gateway with: disabling or deleting it stops chat and indexing. */
  platform: z.boolean(),
});
export type GatewayToken = z.infer<typeof gatewayTokenSchema>;

/** GET /api/tokens. */
export const gatewayTokenPageSchema = gatewayPageOf(gatewayTokenSchema);
export type GatewayTokenPage = z.infer<typeof gatewayTokenPageSchema>;

/** POST /api/tokens: the token, and its key, shown this once. */
export const gatewayCreatedTokenSchema = z.object({ token: gatewayTokenSchema, key: z.string() });
export type GatewayCreatedToken = z.infer<typeof gatewayCreatedTokenSchema>;
