// An application's chat log as its team reads it (getChatLogs), its export
// (exportChatLogs) and its figures (stats).
import { z } from 'zod';
import { chatSourceSchema } from './chat.js';
import { id, pageOf } from './common.js';

/** The latest time a JavaScript Date holds (epoch ms): past it, a time is refused by name, not a 500. */
const MAX_TIME = 8.64e15;

/** An ISO date (or date and time) or epoch milliseconds (a number, or digits in a query string). */
export const logTime = z.union([
  z.number().int().min(0).max(MAX_TIME),
  z
    .string()
    .trim()
    .refine((t) => /^\d+$/.test(t) || !Number.isNaN(Date.parse(t)), 'an ISO date or epoch milliseconds')
    .transform((t) => (/^\d+$/.test(t) ? Number(t) : Date.parse(t)))
    .refine((t) => t >= 0 && t <= MAX_TIME, 'a time between 1970 and the year 275760'),
]);

/** Which chats of the log: all of these that are given must hold. */
export const chatLogFilters = {
  /** The chat's last update, from and to (inclusive). */
  dateStart: logTime.nullable().optional(),
  dateEnd: logTime.nullable().optional(),
  /** Chats with at least one answer judged good, bad, or either. */
  feedback: z.enum(['good', 'bad', 'any']).optional(),
  source: chatSourceSchema.optional(),
  /** One share link's chats. */
  shareId: id.optional(),
  /** In the title or any message of the chat (case-insensitive). */
  searchText: z.string().trim().max(200).optional(),
};

export const chatLogsBody = z.object({
  appId: id,
  offset: z.number().int().min(0).default(0),
  pageSize: z.number().int().min(1).max(500).default(20),
  ...chatLogFilters,
});
export type ChatLogsBody = z.input<typeof chatLogsBody>;

/** One chat of an application's log, in FastGPT's field names; a visitor's chat names its link and visitor. */
export const publicChatLogSchema = z.object({
  _id: z.string(),
  id: z.string(),
  chatId: z.string(),
  title: z.string(),
  source: chatSourceSchema,
  shareId: z.string().optional(),
  outLinkUid: z.string().optional(),
  messageCount: z.number(),
  userGoodFeedbackCount: z.number(),
  userBadFeedbackCount: z.number(),
  createTime: z.string(),
  updateTime: z.string(),
});
export type PublicChatLog = z.infer<typeof publicChatLogSchema>;
export const chatLogPageSchema = pageOf(publicChatLogSchema);

/** GET /api/core/app/exportChatLogs: every message of the chats the filters select, as a file. */
export const exportChatLogsQuery = z.object({ appId: id, format: z.enum(['csv', 'jsonl']).default('csv'), ...chatLogFilters });
export type ExportChatLogsQuery = z.input<typeof exportChatLogsQuery>;

/** One line of the export (JSON Lines; the CSV has these columns in this order). */
export const exportedMessageSchema = z.object({
  chatId: z.string(),
  source: chatSourceSchema,
  /** A share link's visitor (outLinkUid); empty for the team's own chats. */
  visitor: z.string(),
  time: z.string(),
  role: z.enum(['user', 'assistant']),
  text: z.string(),
  /** 'good' or 'bad' with the visitor's words, or empty. */
  feedback: z.string(),
  /** The annotation that answered (an answer from annotationReply), or empty. */
  annotationId: z.string(),
  model: z.string(),
  tokens: z.number().nullable(),
  /** The gateway's cost of the answer's model calls, in its currency units; null where it could not be read. */
  cost: z.number().nullable(),
});
export type ExportedMessage = z.infer<typeof exportedMessageSchema>;
export const EXPORT_COLUMNS = Object.keys(exportedMessageSchema.shape) as (keyof ExportedMessage)[];

/** GET /api/core/app/stats: an application's figures per hour or day (UTC) between `from` and `to`. */
export const appStatsQuery = z.object({
  appId: id,
  /** Default: 7 days (bucket=day) or 24 hours (bucket=hour) before `to`. */
  from: logTime.optional(),
  /** Default: now. */
  to: logTime.optional(),
  bucket: z.enum(['hour', 'day']).default('day'),
});
export type AppStatsQuery = z.input<typeof appStatsQuery>;

const figures = {
  /** Chats with a question in the period. */
  chats: z.number(),
  questions: z.number(),
  /** Distinct share-link visitors, plus the team as one where it chatted itself (web app or API key). */
  visitors: z.number(),
  goodFeedback: z.number(),
  badFeedback: z.number(),
  /** Answers given word for word from an annotation. */
  annotationAnswers: z.number(),
  /** Finished answers from the model that cited no quote. */
  uncitedAnswers: z.number(),
  tokens: z.number(),
  /** The gateway's cost (its currency units) of the answers whose cost it reported. */
  cost: z.number(),
  /** Time from the question to the answer's first text, in ms; null where no answer finished. */
  ttftP50Ms: z.number().nullable(),
  ttftP95Ms: z.number().nullable(),
};
export const appStatsSchema = z.object({
  bucket: z.enum(['hour', 'day']),
  from: z.string(),
  to: z.string(),
  /** Every bucket of the period, in order, empty ones included. */
  buckets: z.array(z.object({ start: z.string(), ...figures })),
  totals: z.object(figures),
});
export type AppStats = z.infer<typeof appStatsSchema>;
