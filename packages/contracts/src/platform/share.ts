// /api/support/outLink/*: share links of an application, and what their
// visitors' page is told.
import { z } from 'zod';
import { id } from './common.js';

/** An ISO date or epoch milliseconds, in the future. */
const time = z
  .union([z.number().int().positive(), z.string().datetime({ offset: true })])
  .transform((t) => (typeof t === 'number' ? t : Date.parse(t)))
  .refine((t) => t > Date.now(), 'must be in the future');

/** A site that may embed the link's page: its origin (scheme, host and port), as a browser names it. */
const origin = z
  .string()
  .trim()
  .max(300)
  .transform((o) => o.replace(/\/+$/, '').toLowerCase())
  .refine(
    (o) => /^https?:\/\/[a-z0-9.-]+(:\d{1,5})?$/.test(o) || /^https?:\/\/\[[0-9a-f:.]+\](:\d{1,5})?$/.test(o),
    'an origin such as https://www.example.com (scheme, host and port only)',
  );

/** A link's limits: each given replaces the stored one, null clears it. */
export const outLinkLimitSchema = z.object({
  expiredTime: time.nullable().optional(),
  /** Requests per minute per visitor. */
  QPM: z.number().int().min(1).max(100_000).nullable().optional(),
  /** Requests per minute through the link, all visitors together. */
  linkQPM: z.number().int().min(1).max(1_000_000).nullable().optional(),
  /** The gateway cost (its currency units) the link may spend; past it, its visitors get a 403. */
  maxUsagePoints: z.number().positive().max(1e12).nullable().optional(),
  /** The operator's server that decides who may chat, and as whom (FastGPT's shareAuth hooks). */
  hookUrl: z
    .string()
    .trim()
    .max(2000)
    .refine((u) => /^https?:\/\/[^\s/?#@]+(\/[^\s?#]*)?$/i.test(u), 'an http:// or https:// address without a query, fragment or credentials')
    .nullable()
    .optional(),
});

export const createOutLinkBody = z.object({
  appId: id,
  name: z.string().trim().min(1).max(200),
  limit: outLinkLimitSchema.optional(),
  /** The sites that may embed the page (frame-ancestors); empty or absent: any. */
  allowedOrigins: z.array(origin).max(50).optional(),
});
export const updateOutLinkBody = z.object({
  id,
  name: z.string().trim().min(1).max(200).optional(),
  limit: outLinkLimitSchema.optional(),
  allowedOrigins: z.array(origin).max(50).optional(),
});
export const shareIdQuery = z.object({ shareId: id });
/** The share page's first call: the link, and the visitor's token where the operator's page gave one. */
export const shareInitQuery = z.object({ shareId: id, authToken: z.string().min(1).max(4096).optional() });

export type CreateOutLinkBody = z.input<typeof createOutLinkBody>;
export type UpdateOutLinkBody = z.input<typeof updateOutLinkBody>;

export const publicOutLinkSchema = z.object({
  _id: z.string(),
  id: z.string(),
  shareId: z.string(),
  appId: z.string(),
  name: z.string(),
  createTime: z.string(),
  lastTime: z.string().optional(),
  limit: z.object({
    expiredTime: z.string().optional(),
    QPM: z.number().optional(),
    linkQPM: z.number().optional(),
    maxUsagePoints: z.number().optional(),
    hookUrl: z.string().optional(),
  }),
  /** The gateway cost spent through the link so far (read from the gateway's log a moment after each answer). */
  usedPoints: z.number(),
  allowedOrigins: z.array(z.string()),
});
export type PublicOutLink = z.infer<typeof publicOutLinkSchema>;

/** What the public share page is told: never the prompts, settings or the hook. */
export const shareInitSchema = z.object({
  app: z.object({ name: z.string(), intro: z.string(), variables: z.array(z.string()) }),
  /** The visitor's id from the operator's hook (use it as outLinkUid): the same person's chats on any device. */
  uid: z.string().optional(),
  /** Whether the link asks for the visitor's token (it has a hook). */
  authRequired: z.boolean(),
  /** The sites that may embed the page (empty: any); the embed script checks its page against them. */
  allowedOrigins: z.array(z.string()),
});
export type ShareInit = z.infer<typeof shareInitSchema>;
