// /api/redemptions: top-up codes made by administrators; /api/user/topup: a
// signed-in user redeems one. A code is shown once, when it is made.
import { z } from 'zod';
import { gatewayPageOf, MAX_UNITS } from './common.js';

export const createRedemptionsBody = z.strictObject({
  name: z.string().trim().min(1, 'required').max(64, 'at most 64 characters'),
  /** Currency units each code adds to the balance of whoever redeems it. */
  quota: z.number().finite().gt(0, 'must be > 0').max(MAX_UNITS, `must be <= ${MAX_UNITS}`),
  count: z.number().int('a whole number').min(1, 'must be >= 1').max(100, 'at most 100 at once').default(1),
});
export type CreateRedemptionsBody = z.input<typeof createRedemptionsBody>;

export const patchRedemptionBody = z.strictObject({ status: z.enum(['unused', 'disabled']) });
export type PatchRedemptionBody = z.input<typeof patchRedemptionBody>;

export const topupBody = z.strictObject({ key: z.string().trim().min(1, 'required').max(200, 'at most 200 characters') });
export type TopupBody = z.input<typeof topupBody>;

/** A code as the admin API shows it: never the code itself, only its hint. */
export const gatewayRedemptionSchema = z.object({
  id: z.number(),
  name: z.string(),
  key_hint: z.string(),
  /** Currency units; `quota_micros` is exact. */
  quota: z.number(),
  quota_micros: z.number(),
  status: z.enum(['unused', 'redeemed', 'disabled']),
  created_by: z.number(),
  created_at: z.number(),
  redeemed_by: z.number().nullable(),
  redeemed_by_username: z.string().nullable(),
  redeemed_at: z.number().nullable(),
});
export type GatewayRedemption = z.infer<typeof gatewayRedemptionSchema>;

export const gatewayRedemptionPageSchema = gatewayPageOf(gatewayRedemptionSchema);
export type GatewayRedemptionPage = z.infer<typeof gatewayRedemptionPageSchema>;

/** POST /api/redemptions: the codes, shown this once, and their rows. */
export const redemptionsCreatedSchema = z.object({ keys: z.array(z.string()), data: z.array(gatewayRedemptionSchema) });
export type RedemptionsCreated = z.infer<typeof redemptionsCreatedSchema>;

/** POST /api/user/topup: what was added and the balance now (units; micros exact). */
export const toppedUpSchema = z.object({ added: z.number(), balance: z.number(), balance_micros: z.number() });
export type ToppedUp = z.infer<typeof toppedUpSchema>;
