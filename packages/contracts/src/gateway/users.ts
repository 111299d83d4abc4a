// /api/users: accounts, managed by administrators.
import { z } from 'zod';
import { gatewayPageOf, MAX_UNITS } from './common.js';
import { groupName as group } from './groups.js';

const username = z
  .string()
  .trim()
  .min(1, 'required')
  .max(64, 'at most 64 characters')
  .regex(/^[A-Za-z0-9_.@-]+$/, 'letters, digits and _ . @ - only');
const password = z.string().min(8, 'at least 8 characters').max(200, 'at most 200 characters');
const role = z.enum(['admin', 'user']);
const balance = z.number().finite().min(0, 'must be >= 0').max(MAX_UNITS, `must be <= ${MAX_UNITS}`);
/** Added to the balance; negative takes away (the balance stops at 0). */
const balanceDelta = z.number().finite().min(-MAX_UNITS, `must be >= -${MAX_UNITS}`).max(MAX_UNITS, `must be <= ${MAX_UNITS}`);

export const createUserBody = z.strictObject({ username, password, role: role.optional(), group: group.optional(), balance: balance.optional() });
export const patchUserBody = z.strictObject({
  status: z.enum(['enabled', 'disabled']).optional(),
  role: role.optional(),
  group: group.optional(),
  password: password.optional(),
  balance: balance.optional(),
  balance_delta: balanceDelta.optional(),
});

export type CreateUserBody = z.input<typeof createUserBody>;
export type PatchUserBody = z.input<typeof patchUserBody>;

/** A user as the admin API shows it. */
export const gatewayUserSchema = z.object({
  id: z.number(),
  username: z.string(),
  role: z.string(),
  status: z.string(),
  group: z.string(),
  /**
   * Currency units (balance / 1e6), for people; `balance_micros` is exact.
   * Counts what gateway processes hold in leases (see `leased_micros`) as the
   * user's; below zero when costs beyond reservations were charged.
   */
  balance: z.number(),
  balance_micros: z.number(),
  /** Held by gateway processes for requests in flight; the unspent part comes back within LEDGER_FLUSH_MS. */
  leased_micros: z.number(),
  used_micros: z.number(),
  request_count: z.number(),
  created_at: z.number(),
});
export type GatewayUser = z.infer<typeof gatewayUserSchema>;

/** GET /api/users. */
export const gatewayUserPageSchema = gatewayPageOf(gatewayUserSchema);
export type GatewayUserPage = z.infer<typeof gatewayUserPageSchema>;
