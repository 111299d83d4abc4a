// /api/users: accounts, managed by administrators.
import { z } from 'zod';
import { MAX_UNITS } from './common.js';

const username = z
  .string()
  .trim()
  .min(1, 'required')
  .max(64, 'at most 64 characters')
  .regex(/^[A-Za-z0-9_.@-]+$/, 'letters, digits and _ . @ - only');
const password = z.string().min(8, 'at least 8 characters').max(200, 'at most 200 characters');
const role = z.enum(['admin', 'user']);
const group = z.string().trim().min(1, 'must not be empty').max(64, 'at most 64 characters');
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
