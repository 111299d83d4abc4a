// /api/channels: upstream channels (create, read, edit, delete), channel
// tests, and re-enabling auto-disabled models. No response ever carries a
// channel's key: ChannelsService.toPublic shows only whether one is set.
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { errors } from '../errors.js';
import type { GatewayServices } from '../gateway.js';
import { parseBody, pathId } from './input.js';

const modelName = z.string().trim().min(1, 'must be a non-empty model name').max(200, 'at most 200 characters');

const options = z.looseObject({
  streamUsage: z.boolean().optional(),
  apiVersion: z.string().optional(),
  modelTypes: z.record(z.string(), z.enum(['chat', 'embeddings', 'rerank'])).optional(),
});

const channelSchema = z.strictObject({
  name: z.string().trim().min(1, 'must not be empty').max(100, 'at most 100 characters').optional(),
  type: z.string().min(1, 'must not be empty').max(32, 'at most 32 characters').optional(),
  base_url: z.string().min(1, 'must not be empty').max(1024, 'at most 1024 characters').optional(),
  key: z.string().max(10_000, 'at most 10000 characters').optional(),
  models: z.array(modelName).max(5000, 'at most 5000 models').optional(),
  model_mapping: z.record(z.string(), modelName).optional(),
  options: options.optional(),
  priority: z.number().int('must be an integer').min(-1_000_000, 'must be >= -1000000').max(1_000_000, 'must be <= 1000000').optional(),
  weight: z.number().int('must be an integer').min(0, 'must be >= 0').max(1_000_000, 'must be <= 1000000').optional(),
  status: z.enum(['enabled', 'disabled']).optional(),
});

const modelSchema = z.strictObject({ model: modelName.optional() });

export function channelRoutes(app: FastifyInstance, services: GatewayServices): void {
  const { channels, health } = services;
  const idOf = (req: { params: unknown }) => pathId((req.params as { id: string }).id);

  app.get('/channels', async () => ({ data: await channels.list() }));

  app.post('/channels', async (req, reply) => {
    const input = parseBody(channelSchema, req.body);
    const channel = await channels.create(input);
    reply.code(201);
    return channel;
  });

  // Static path: registered before the parametric ones for readability; the router prefers it anyway.
  app.post('/channels/retest-disabled', async () => ({ data: await channels.retestDisabled() }));

  app.get('/channels/:id', async (req) => channels.get(idOf(req)));

  app.patch('/channels/:id', async (req) => {
    const id = idOf(req);
    const input = parseBody(channelSchema, req.body);
    return channels.update(id, input);
  });

  app.delete('/channels/:id', async (req) => {
    const id = idOf(req);
    await channels.delete(id);
    return { deleted: true, id };
  });

  app.post('/channels/:id/test', async (req) => {
    const id = idOf(req);
    const { model } = parseBody(modelSchema, req.body);
    const channel = await channels.get(id);
    if (model !== undefined && !channel.models.includes(model)) {
      throw errors.badField('model', `Invalid 'model': channel ${id} does not serve ${model}`);
    }
    return { channel_id: id, data: await channels.test(id, model) };
  });

  app.post('/channels/:id/enable-models', async (req) => {
    const id = idOf(req);
    const { model } = parseBody(modelSchema, req.body);
    const before = await channels.get(id);
    await health.enable(id, model);
    const enabled = before.disabled_models.filter((d) => model === undefined || d.model === model).map((d) => d.model);
    return { channel_id: id, enabled, channel: await channels.get(id) };
  });
}
