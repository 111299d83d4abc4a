// GET /api/dashboard: traffic, cost and latency over time, grouped, and what is disabled.
import { z } from 'zod';

export const dashboardDimensionSchema = z.enum(['model', 'channel', 'token', 'user']);
export type DashboardDimension = z.infer<typeof dashboardDimensionSchema>;

const sums = {
  requests: z.number(),
  errors: z.number(),
  prompt_tokens: z.number(),
  completion_tokens: z.number(),
  /** Currency units, as the logs' `cost`; `cost_micros` is exact. */
  cost: z.number(),
  cost_micros: z.number(),
};
const latencies = {
  latency_avg_ms: z.number().nullable(),
  latency_p50_ms: z.number().nullable(),
  latency_p95_ms: z.number().nullable(),
};

export const dashboardPointSchema = z.object({ t: z.number(), ...sums, ...latencies });
export type DashboardPoint = z.infer<typeof dashboardPointSchema>;

export const dashboardGroupSchema = z.object({
  /** The model, or the id as text; '' for requests without one (e.g. failed before a channel was chosen); 'other' for the rest. */
  key: z.string(),
  label: z.string(),
  other: z.boolean(),
  totals: dashboardPointSchema.omit({ t: true }),
  points: z.array(dashboardPointSchema),
});
export type DashboardGroup = z.infer<typeof dashboardGroupSchema>;

/** A user in the spend ranking. */
export const topUserSchema = z.object({ user_id: z.number(), username: z.string().nullable(), ...sums });
export type TopUser = z.infer<typeof topUserSchema>;

/** Channels an operator disabled, and channel models the health check disabled. */
export const disabledChannelsSchema = z.object({
  channels: z.array(z.object({ channel_id: z.number(), name: z.string(), reason: z.string(), since: z.number() })),
  models: z.array(
    z.object({ channel_id: z.number(), channel_name: z.string(), channel_status: z.string(), model: z.string(), reason: z.string(), since: z.number() }),
  ),
});
export type DisabledChannels = z.infer<typeof disabledChannelsSchema>;

export const dashboardAnswerSchema = z.object({
  from: z.number(),
  to: z.number(),
  bucket: z.enum(['minute', 'hour', 'day']),
  bucket_ms: z.number(),
  latency_error_bound: z.number(),
  totals: dashboardPointSchema.omit({ t: true }),
  points: z.array(dashboardPointSchema),
  group_by: dashboardDimensionSchema.optional(),
  groups: z.array(dashboardGroupSchema).optional(),
  top_users: z.array(topUserSchema),
  disabled: disabledChannelsSchema,
});
export type DashboardAnswer = z.infer<typeof dashboardAnswerSchema>;
