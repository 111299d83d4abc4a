// /api/groups: price groups. A user and a token have a group (a token's own,
// else its user's); a channel serves some groups (none named: all of them);
// a group's ratio multiplies every cost charged to its callers.
import { z } from 'zod';

/** A group's name, as users, tokens and channels name it. */
export const groupName = z
  .string()
  .trim()
  .min(1, 'must not be empty')
  .max(64, 'at most 64 characters')
  .regex(/^[\p{L}\p{N}_.@-]+$/u, 'letters, digits and _ . @ - only');

/** The group every user is in unless set; it cannot be deleted. */
export const DEFAULT_GROUP = 'default';
/** The highest ratio a group may have (a thousand times the price). */
export const MAX_GROUP_RATIO = 1000;

export const groupBody = z.strictObject({
  /** 1 = full price, 0.5 = half price, 0 = free; at most 6 decimal places (kept in millionths). */
  ratio: z
    .number()
    .finite()
    .min(0, 'must be >= 0')
    .max(MAX_GROUP_RATIO, `must be <= ${MAX_GROUP_RATIO}`)
    .refine((v) => Math.abs(v * 1e6 - Math.round(v * 1e6)) < 1e-3, 'at most 6 decimal places'),
  /** Omitted: the group keeps the description it has ('' for a new group). */
  description: z.string().trim().max(255, 'at most 255 characters').optional(),
});
export type GroupBody = z.input<typeof groupBody>;

/** A group as the admin API shows it, with what uses it (a group in use cannot be deleted). */
export const publicGroupSchema = z.object({
  name: z.string(),
  ratio: z.number(),
  description: z.string(),
  /** Users in the group. */
  users: z.number(),
  /** Tokens that name the group as their own. */
  tokens: z.number(),
  /** Channels that name the group among those they serve. */
  channels: z.number(),
  created_at: z.number(),
  updated_at: z.number(),
});
export type PublicGroup = z.infer<typeof publicGroupSchema>;

/** GET /api/groups: every group, `default` first. */
export const groupsAnswerSchema = z.object({ data: z.array(publicGroupSchema) });
export type GroupsAnswer = z.infer<typeof groupsAnswerSchema>;

export const groupDeletedSchema = z.object({ deleted: z.literal(true), name: z.string() });
export type GroupDeleted = z.infer<typeof groupDeletedSchema>;
