// /api/channels: upstream channels, their tests and health.
import { z } from 'zod';
import { gatewayPageOf } from './common.js';
import { groupName } from './groups.js';

const modelName = z.string().trim().min(1, 'must be a non-empty model name').max(200, 'at most 200 characters');

const channelOptions = z.looseObject({
  streamUsage: z.boolean().optional(),
  apiVersion: z.string().optional(),
  modelTypes: z.record(z.string(), z.enum(['chat', 'embeddings', 'rerank'])).optional(),
  keyStrategy: z.enum(['round-robin', 'random'], "must be 'round-robin' or 'random'").optional(),
});

export const channelBody = z.strictObject({
  name: z.string().trim().min(1, 'must not be empty').max(100, 'at most 100 characters').optional(),
  type: z.string().min(1, 'must not be empty').max(32, 'at most 32 characters').optional(),
  base_url: z.string().min(1, 'must not be empty').max(1024, 'at most 1024 characters').optional(),
  key: z.string().max(10_000, 'at most 10000 characters').optional(),
  models: z.array(modelName).max(5000, 'at most 5000 models').optional(),
  model_mapping: z.record(z.string(), modelName).optional(),
  options: channelOptions.optional(),
  priority: z.number().int('must be an integer').min(-1_000_000, 'must be >= -1000000').max(1_000_000, 'must be <= 1000000').optional(),
  weight: z.number().int('must be an integer').min(0, 'must be >= 0').max(1_000_000, 'must be <= 1000000').optional(),
  status: z.enum(['enabled', 'disabled']).optional(),
  /** The groups whose callers it serves; empty: every group. */
  groups: z
    .array(groupName)
    .max(100, 'at most 100 groups')
    .refine((list) => new Set(list).size === list.length, 'each group once')
    .optional(),
});

export const channelModelBody = z.strictObject({ model: modelName.optional() });

export const testAllBody = z.strictObject({
  concurrency: z.number().int('must be an integer').min(1, 'must be from 1 to 32').max(32, 'must be from 1 to 32').optional(),
});

export type ChannelBody = z.input<typeof channelBody>;
export type ChannelInput = ChannelBody;
export type ChannelModelBody = z.input<typeof channelModelBody>;
export type TestAllBody = z.input<typeof testAllBody>;

export const endpointSchema = z.enum(['chat', 'embeddings', 'rerank']);
export type Endpoint = z.infer<typeof endpointSchema>;

export const channelOptionsSchema = z.object({
  /** Send stream_options.include_usage upstream (off for upstreams that reject it). */
  streamUsage: z.boolean().optional(),
  /** Azure OpenAI api-version; for Anthropic channels, the anthropic-version header. */
  apiVersion: z.string().optional(),
  /** Per-model endpoint kind where the name does not tell (used by tests and /v1/models). */
  modelTypes: z.record(z.string(), endpointSchema).optional(),
  /** Extra facts per model shown by /v1/models (local models: supports_tools, dimensions, description). */
  modelInfo: z.record(z.string(), z.record(z.string(), z.unknown())).optional(),
  /** How requests spread over a key pool (a key of several lines): in turn (the default) or at random. */
  keyStrategy: z.enum(['round-robin', 'random']).optional(),
});
export type ChannelOptions = z.infer<typeof channelOptionsSchema>;

/** One failure that counted toward disabling a channel model. */
export const channelFailureSchema = z.object({ at: z.number(), error: z.string() });
export type ChannelFailure = z.infer<typeof channelFailureSchema>;

/** A disabled channel model as the admin API shows it: why, and when it is tested again. */
export const publicDisabledModelSchema = z.object({
  model: z.string(),
  reason: z.string(),
  disabled_at: z.number(),
  /** The failures that disabled it, oldest first (empty for models disabled before they were kept). */
  failures: z.array(channelFailureSchema),
  /** When this process's re-test loop next tests it; null when the loop is off. */
  retest_at: z.number().nullable(),
});
export type PublicDisabledModel = z.infer<typeof publicDisabledModelSchema>;

/** A channel model's latest test, by any process. */
export const publicModelTestSchema = z.object({
  model: z.string(),
  ok: z.boolean(),
  latency_ms: z.number(),
  status: z.number().nullable(),
  error: z.string().nullable(),
  tested_at: z.number(),
});
export type PublicModelTest = z.infer<typeof publicModelTestSchema>;

/**
 * One key of a channel's key (one a line): its hint, never the key, and its
 * state. Only a pool (two keys or more) disables a key by itself, when the
 * upstream refuses it (401/402/403) or says its quota is used up (429
 * insufficient_quota); the re-test loop tries it again like a disabled model.
 */
export const publicChannelKeySchema = z.object({
  /** Its line among the channel's keys, counting from 0 (blank lines left out). */
  index: z.number(),
  hint: z.string(),
  status: z.enum(['enabled', 'disabled']),
  reason: z.string().nullable(),
  disabled_at: z.number().nullable(),
  /** When this process's re-test loop next tests it; null when it is enabled or the loop is off. */
  retest_at: z.number().nullable(),
});
export type PublicChannelKey = z.infer<typeof publicChannelKeySchema>;

/** A channel as the admin API shows it: never its key. */
export const publicChannelSchema = z.object({
  id: z.number(),
  name: z.string(),
  type: z.string(),
  base_url: z.string(),
  key_set: z.boolean(),
  /** Each of its keys by its hint (empty when none is set). */
  keys: z.array(publicChannelKeySchema),
  models: z.array(z.string()),
  model_mapping: z.record(z.string(), z.string()),
  /** As stored: the body's options take keys beyond these, and the answer gives them back. */
  options: channelOptionsSchema.loose(),
  priority: z.number(),
  weight: z.number(),
  status: z.string(),
  source: z.string(),
  env_provider: z.string().nullable(),
  /** The groups whose callers it serves; empty: every group. */
  groups: z.array(z.string()),
  disabled_models: z.array(publicDisabledModelSchema),
  /** The latest test of each model it serves that was tested (models no longer served are left out). */
  last_tests: z.array(publicModelTestSchema),
  created_at: z.number(),
  updated_at: z.number(),
});
export type PublicChannel = z.infer<typeof publicChannelSchema>;

/** GET /api/channels (without offset or limit: every channel, `limit` = `total`). */
export const channelPageSchema = gatewayPageOf(publicChannelSchema);
export type ChannelPage = z.infer<typeof channelPageSchema>;

export const modelTestResultSchema = z.object({
  model: z.string(),
  endpoint: endpointSchema,
  ok: z.boolean(),
  latency_ms: z.number(),
  status: z.number().optional(),
  error: z.string().optional(),
  /** When it was sent (epoch ms). */
  tested_at: z.number(),
});
export type ModelTestResult = z.infer<typeof modelTestResultSchema>;

export const channelModelTestResultSchema = modelTestResultSchema.extend({ channel_id: z.number(), channel_name: z.string() });
export type ChannelModelTestResult = z.infer<typeof channelModelTestResultSchema>;

/** POST /api/channels/test-all. */
export const testAllResultSchema = z.object({
  data: z.array(channelModelTestResultSchema),
  /** Enabled channels this process cannot test (unknown type, local models off here). */
  skipped: z.array(z.object({ channel_id: z.number(), channel_name: z.string(), reason: z.string() })),
  summary: z.object({ channels: z.number(), tested: z.number(), ok: z.number(), failed: z.number(), started_at: z.number(), finished_at: z.number() }),
});
export type TestAllResult = z.infer<typeof testAllResultSchema>;

export const retestResultSchema = z.object({
  channel_id: z.number(),
  model: z.string(),
  enabled: z.boolean(),
  error: z.string().optional(),
  /** For a disabled key of a pool (tested with `model`): its hint. */
  key: z.string().optional(),
});
export type RetestResult = z.infer<typeof retestResultSchema>;

/** POST /api/channels/retest-disabled: each disabled model tested again, and whether it is enabled now. */
export const retestDisabledAnswerSchema = z.object({ data: z.array(retestResultSchema) });
export type RetestDisabledAnswer = z.infer<typeof retestDisabledAnswerSchema>;

/** POST /api/channels/:id/test: one result per model tested. */
export const channelTestAnswerSchema = z.object({ channel_id: z.number(), data: z.array(modelTestResultSchema) });
export type ChannelTestAnswer = z.infer<typeof channelTestAnswerSchema>;

/** POST /api/channels/:id/enable-models: the models enabled again, and the channel as it is now. */
export const enableModelsAnswerSchema = z.object({ channel_id: z.number(), enabled: z.array(z.string()), channel: publicChannelSchema });
export type EnableModelsAnswer = z.infer<typeof enableModelsAnswerSchema>;

/** POST /api/channels/:id/keys/:index/enable: the key enabled again by hand, and the channel as it is now. */
export const enableKeyAnswerSchema = z.object({ channel_id: z.number(), index: z.number(), enabled: z.boolean(), channel: publicChannelSchema });
export type EnableKeyAnswer = z.infer<typeof enableKeyAnswerSchema>;

/** GET /api/channels/providers. */
export const channelProvidersSchema = z.object({
  types: z.array(
    z.object({
      type: z.string(),
      label: z.string(),
      default_base_url: z.string().nullable(),
      key_required: z.boolean(),
      stream_usage_default: z.boolean(),
      endpoints: z.array(z.string()).readonly(),
    }),
  ),
  presets: z.array(z.object({ env: z.string(), type: z.string(), base_url: z.string().nullable(), models: z.array(z.string()) })),
});
export type ChannelProviders = z.infer<typeof channelProvidersSchema>;
