// /api/prices: model prices in currency units per 1M tokens, or one-api style
// ratios (model ratio 1 = 2 units per 1M input tokens; output = input x
// completion ratio). Kept as integer micro-units per 1M tokens.
import type { PublicPrice, UnpricedModel, PricesAnswer } from '@kbchat/contracts';
import type { FastifyPluginAsync, FastifyRequest } from 'fastify';
import {
  directPriceBody as directSchema,
  priceBody,
  priceDeletedSchema,
  pricesAnswerSchema,
  publicPriceSchema,
  ratioPriceBody as ratioSchema,
} from '@kbchat/contracts';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { MICROS, ratioToPrice, unitsToMicros, type ModelPrice } from '../accounts/pricing.js';
import { errors } from '../errors.js';
import type { GatewayServices } from '../gateway.js';
import { documentedOnly, parseBody } from './input.js';

export type { PublicPrice, UnpricedModel, PricesAnswer };

/** The most unpriced models GET /api/prices lists. */
const MAX_UNPRICED = 500;

function publicPrice(p: ModelPrice): PublicPrice {
  const input = p.inputPrice / MICROS;
  const output = p.outputPrice / MICROS;
  return {
    model: p.model,
    input_price: input,
    output_price: output,
    model_ratio: input / 2,
    completion_ratio: input > 0 ? output / input : null,
  };
}

/** The model name: everything after /api/prices/, so that names with '/' work with or without %2F. */
export function modelOf(req: FastifyRequest, route = 'prices'): string {
  const raw = (req.params as Record<string, string | undefined>)['*'] ?? '';
  const model = raw.trim();
  if (!model) throw errors.badField('model', `Invalid 'model': name the model in the path, /api/${route}/<model>`);
  if (model.length > 200) throw errors.badField('model', `Invalid 'model': at most 200 characters`);
  return model;
}

/** Picks which form was sent, so that a problem names a field of that form. */
function parsePrice(body: unknown): { input: number; output: number } {
  const b = body && typeof body === 'object' && !Array.isArray(body) ? (body as Record<string, unknown>) : {};
  const ratioForm = 'model_ratio' in b || 'completion_ratio' in b;
  if (ratioForm && ('input_price' in b || 'output_price' in b)) {
    throw errors.badField('model_ratio', `Invalid 'model_ratio': give either input_price and output_price, or model_ratio and completion_ratio`);
  }
  if (ratioForm) {
    const r = parseBody(ratioSchema, body);
    return ratioToPrice(r.model_ratio, r.completion_ratio ?? 1);
  }
  const d = parseBody(directSchema, body);
  return { input: d.input_price, output: d.output_price };
}

const onePrice = { 200: publicPriceSchema };

export const pricesPlugin: FastifyPluginAsync<{ services: GatewayServices }> = async (fastify, { services }) => {
  const app = fastify.withTypeProvider<ZodTypeProvider>();
  const { prices, config } = services;

  app.get('/prices', { schema: { response: { 200: pricesAnswerSchema } } }, async (): Promise<PricesAnswer> => {
    // Rows settled but not yet written count as traffic.
    await services.ledger.flush();
    const [channels, traffic] = await Promise.all([services.channels.list(), services.logsStore.rollups.modelsWithTraffic(MAX_UNPRICED)]);
    const served = new Set(channels.flatMap((c) => c.models));
    const seen = new Set(traffic);
    const unpriced = [...new Set([...served, ...seen])]
      .filter((m) => prices.chargedAs(m) !== 'set')
      .sort((a, b) => a.localeCompare(b))
      .slice(0, MAX_UNPRICED)
      .map((m) => ({
        ...publicPrice(prices.priceOf(m)),
        charged: prices.chargedAs(m) as 'default' | 'free',
        in_channels: served.has(m),
        has_traffic: seen.has(m),
      }));
    return {
      data: prices.list().map(publicPrice),
      default: { input_price: config.defaultInputPrice, output_price: config.defaultOutputPrice },
      unpriced,
    };
  });

  app.get('/prices/*', { schema: { response: onePrice } }, async (req): Promise<PublicPrice> => publicPrice(prices.priceOf(modelOf(req))));

  // parsePrice picks the form sent, after the model is read from the path: the union is the document's only.
  app.put('/prices/*', { schema: { body: priceBody, response: onePrice }, validatorCompiler: documentedOnly }, async (req) => {
    const model = modelOf(req);
    const { input, output } = parsePrice(req.body);
    await prices.set(model, unitsToMicros(input), unitsToMicros(output));
    return publicPrice(prices.priceOf(model));
  });

  app.delete('/prices/*', { schema: { response: { 200: priceDeletedSchema } } }, async (req) => {
    const model = modelOf(req);
    if (!(await prices.remove(model))) throw errors.notFound(`Price of ${model}`);
    return { deleted: true as const, model };
  });
};
