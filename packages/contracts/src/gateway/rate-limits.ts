// /api/rate-limits: requests and tokens per minute and requests per day on a
// token, a user, a group or a model, and budgets that reset on a token or a
// user (the gateway's limits/).
import { z } from 'zod';
import { MAX_INT32, MAX_UNITS } from './common.js';

export const RATE_LIMIT_SCOPES = ['token', 'user', 'group', 'model'] as const;
export const rateLimitScopeSchema = z.enum(RATE_LIMIT_SCOPES);
export type RateLimitScope = z.infer<typeof rateLimitScopeSchema>;

const perWindow = z.number().int('a whole number').min(1, 'at least 1 (null: no limit)').max(MAX_INT32, `at most ${MAX_INT32}`).nullable();

export const BUDGET_PERIODS = ['day', 'week', 'month'] as const;

/** A budget that resets: so many units per UTC day, week (from Monday) or month. Tokens and users only. */
export const budgetSchema = z.strictObject({
  // A millionth of a unit is the smallest amount the books hold: less would be a budget of 0.
  amount: z.number().min(0.000001, 'at least 0.000001 units').max(MAX_UNITS, `at most ${MAX_UNITS} units`),
  period: z.enum(BUDGET_PERIODS),
});
export type Budget = z.infer<typeof budgetSchema>;

/** A subject's limits and budget; a field left out or null has none. All null removes the subject's row. */
export const rateLimitBody = z.strictObject({
  rpm: perWindow.optional(),
  tpm: perWindow.optional(),
  rpd: perWindow.optional(),
  budget: budgetSchema.nullable().optional(),
});
export type RateLimitBody = z.input<typeof rateLimitBody>;

export const rateLimitSchema = z.object({
  scope: rateLimitScopeSchema,
  /** A token's or a user's id, a group's or a model's name. */
  subject: z.string(),
  rpm: z.number().nullable(),
  tpm: z.number().nullable(),
  rpd: z.number().nullable(),
  budget: z.object({ amount: z.number(), period: z.enum(BUDGET_PERIODS) }).nullable(),
});
export type RateLimit = z.infer<typeof rateLimitSchema>;

export const rateLimitListSchema = z.object({
  data: z.array(rateLimitSchema),
  /** Where windows are counted: Redis (REDIS_URL), the shared database, or each process (the embedded store). */
  counting: z.enum(['redis', 'store', 'process']),
  /** Why they are counted per process just now (Redis or the store unreachable), else null. */
  problem: z.string().nullable(),
});
export type RateLimitList = z.infer<typeof rateLimitListSchema>;

export const rateLimitDeletedSchema = z.object({ deleted: z.literal(true), scope: rateLimitScopeSchema, subject: z.string() });
