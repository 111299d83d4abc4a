// /api/support/outLink/*: share links of an application.
import { z } from 'zod';
import { id } from './common.js';

/** An ISO date or epoch milliseconds, in the future. */
const time = z
  .union([z.number().int().positive(), z.string().datetime({ offset: true })])
  .transform((t) => (typeof t === 'number' ? t : Date.parse(t)))
  .refine((t) => t > Date.now(), 'must be in the future');
export const createOutLinkBody = z.object({
  appId: id,
  name: z.string().trim().min(1).max(200),
  limit: z.object({ expiredTime: time.nullable().optional(), QPM: z.number().int().min(1).max(100_000).nullable().optional() }).optional(),
});
export const shareIdQuery = z.object({ shareId: id });

export type CreateOutLinkBody = z.input<typeof createOutLinkBody>;

export const publicOutLinkSchema = z.object({
  _id: z.string(),
  id: z.string(),
  shareId: z.string(),
  appId: z.string(),
  name: z.string(),
  createTime: z.string(),
  lastTime: z.string().optional(),
  limit: z.object({ expiredTime: z.string().optional(), QPM: z.number().optional() }),
});
export type PublicOutLink = z.infer<typeof publicOutLinkSchema>;

/** What the public share page is told: never the prompts or settings. */
export const shareInitSchema = z.object({
  app: z.object({ name: z.string(), intro: z.string(), variables: z.array(z.string()) }),
});
export type ShareInit = z.infer<typeof shareInitSchema>;
