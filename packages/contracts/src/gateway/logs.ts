// /api/logs: the request log, and replaying a kept request.
import { z } from 'zod';

/** One row of GET /api/logs. */
export const publicLogSchema = z.object({
  id: z.number(),
  request_id: z.string(),
  created_at: z.number(),
  user_id: z.number().nullable(),
  /** The user's name now (null: no user, or deleted since). */
  user_name: z.string().nullable(),
  token_id: z.number().nullable(),
  token_name: z.string().nullable(),
  channel_id: z.number().nullable(),
  channel_name: z.string().nullable(),
  endpoint: z.string(),
  model: z.string(),
  upstream_model: z.string().nullable(),
  is_stream: z.boolean(),
  prompt_tokens: z.number(),
  completion_tokens: z.number(),
  usage_source: z.string(),
  /** Currency units; `cost_micros` is exact. */
  cost: z.number(),
  cost_micros: z.number(),
  latency_ms: z.number(),
  ttft_ms: z.number().nullable(),
  status: z.number(),
  error: z.string().nullable(),
  attempts: z.number(),
  /** The model the caller asked for, when a fallback (`model`) answered. */
  requested_model: z.string().nullable(),
});
export type PublicLog = z.infer<typeof publicLogSchema>;

/** GET /api/logs/:requestId: the row, and the body sent upstream when it was kept (failed requests). */
export const publicLogDetailSchema = publicLogSchema.extend({
  request_body: z.string().nullable(),
  replayable: z.boolean(),
});
export type PublicLogDetail = z.infer<typeof publicLogDetailSchema>;

/** GET /api/logs. */
export const logPageSchema = z.object({
  data: z.array(publicLogSchema),
  offset: z.number(),
  limit: z.number(),
  next_cursor: z.string().nullable(),
  total: z.number(),
  total_capped: z.boolean(),
});
export type LogPage = z.infer<typeof logPageSchema>;

/** POST /api/logs/:requestId/replay. */
export const replayResultSchema = z.object({
  /** The replay's own request id (its log row has it). */
  request_id: z.string(),
  original_request_id: z.string(),
  /** HTTP status the replay answered with (200 once a stream started). */
  status: z.number(),
  /** The answer was a stream: `response` lists its data payloads. */
  stream: z.boolean(),
  /** The parsed JSON answer; for a stream, the data payloads in order (JSON parsed where possible). */
  response: z.unknown(),
});
export type ReplayResult = z.infer<typeof replayResultSchema>;
