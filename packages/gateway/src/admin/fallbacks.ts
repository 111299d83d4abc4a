// /api/fallbacks: each model's fallbacks (channels/fallbacks.ts), for administrators.
import type { FastifyPluginAsync } from 'fastify';
import { fallbacksBody, fallbacksDeletedSchema, fallbacksListSchema, modelFallbacksSchema } from '@kbchat/contracts';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { errors } from '../errors.js';
import type { GatewayServices } from '../gateway.js';
import { modelOf } from './prices.js';

export const fallbacksPlugin: FastifyPluginAsync<{ services: GatewayServices }> = async (fastify, { services }) => {
  const app = fastify.withTypeProvider<ZodTypeProvider>();
  const { fallbacks } = services;

  app.get('/fallbacks', { schema: { response: { 200: fallbacksListSchema } } }, async () => ({ data: fallbacks.list() }));

  app.put('/fallbacks/*', { schema: { body: fallbacksBody, response: { 200: modelFallbacksSchema } } }, async (req) => {
    const model = modelOf(req, 'fallbacks');
    const list = req.body.fallbacks;
    if (list.includes(model)) throw errors.badField('fallbacks', `Invalid 'fallbacks': ${model} cannot be its own fallback`);
    await fallbacks.set(model, list);
    return { model, fallbacks: list };
  });

  app.delete('/fallbacks/*', { schema: { response: { 200: fallbacksDeletedSchema } } }, async (req) => {
    const model = modelOf(req, 'fallbacks');
    if (!(await fallbacks.remove(model))) throw errors.notFound(`Fallbacks of ${model}`);
    return { deleted: true as const, model };
  });
};
