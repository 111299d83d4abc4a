// /api/channels: upstream channels, their tests and health.
import { z } from 'zod';

const modelName = z.string().trim().min(1, 'must be a non-empty model name').max(200, 'at most 200 characters');

const channelOptions = z.looseObject({
  streamUsage: z.boolean().optional(),
  apiVersion: z.string().optional(),
  modelTypes: z.record(z.string(), z.enum(['chat', 'embeddings', 'rerank'])).optional(),
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
});

export const channelModelBody = z.strictObject({ model: modelName.optional() });

export const testAllBody = z.strictObject({
  concurrency: z.number().int('must be an integer').min(1, 'must be from 1 to 32').max(32, 'must be from 1 to 32').optional(),
});

export type ChannelBody = z.input<typeof channelBody>;
