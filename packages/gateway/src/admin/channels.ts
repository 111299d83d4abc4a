// /api/channels: upstream channels (create, read, edit, delete; listed in
// pages), the provider types and presets a form offers, channel tests (one
// model, a channel, every channel), and re-enabling auto-disabled models and
// keys. No response ever carries a channel's key: ChannelsService.toPublic
// shows whether one is set and each key of a pool by its hint.
import type { ChannelProviders } from '@kbchat/contracts';
import type { FastifyPluginAsync, FastifyReply } from 'fastify';
import {
  channelBody as channelSchema,
  channelModelBody as modelSchema,
  channelPageSchema,
  channelProvidersSchema,
  channelTestAnswerSchema,
  enableKeyAnswerSchema,
  enableModelsAnswerSchema,
  gatewayDeletedSchema,
  publicChannelSchema,
  retestDisabledAnswerSchema,
  testAllBody as testAllSchema,
  testAllResultSchema,
} from '@kbchat/contracts';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { errors } from '../errors.js';
import type { GatewayServices } from '../gateway.js';
import { presets, providerOf, providerTypes } from '../providers/index.js';
import { DEFAULT_TEST_ALL_CONCURRENCY } from '../channels/testing.js';
import { MAX_INT32, paging, pathId, queryInt, queryOf, queryString } from './input.js';

export type { ChannelProviders };

const LIST_STATUSES = ['enabled', 'disabled', 'auto_disabled'] as const;
type ListStatus = (typeof LIST_STATUSES)[number];

/** Aborts when the client goes away before the answer is sent: a long test run then stops starting requests. */
function abortOnHangUp(reply: FastifyReply): AbortSignal {
  const abort = new AbortController();
  reply.raw.once('close', () => {
    if (!reply.raw.writableFinished) abort.abort();
  });
  return abort.signal;
}

const oneChannel = { 200: publicChannelSchema };

export const channelsPlugin: FastifyPluginAsync<{ services: GatewayServices }> = async (fastify, { services }) => {
  const app = fastify.withTypeProvider<ZodTypeProvider>();
  const { channels, health } = services;
  const idOf = (req: { params: unknown }) => pathId((req.params as { id: string }).id);
  /** The path's id is checked before the body (a bad id is named first, as when the handler parsed both). */
  const idFirst = { preValidation: async (req: { params: unknown }) => void idOf(req) };

  // Without offset or limit: every channel, as before paging (older clients); the page always asks for one.
  app.get('/channels', { schema: { response: { 200: channelPageSchema } } }, async (req) => {
    const query = queryOf(req);
    const q = queryString(query.q, 'q');
    const status = queryString(query.status, 'status');
    if (status !== undefined && !LIST_STATUSES.includes(status as ListStatus)) {
      throw errors.badField('status', `Invalid 'status': one of ${LIST_STATUSES.join(', ')}`);
    }
    const filter = { q: q?.trim() || undefined, status: status as ListStatus | undefined };
    const all = query.offset === undefined && query.limit === undefined;
    const { offset, limit } = all ? { offset: 0, limit: MAX_INT32 } : paging(query, 500, 50);
    const page = await channels.page(filter, offset, limit);
    return all ? { ...page, limit: page.total } : page;
  });

  // What a channel form offers: the provider types this gateway relays to, and the presets of <PROVIDER>_API_KEY.
  app.get('/channels/providers', { schema: { response: { 200: channelProvidersSchema } } }, async (): Promise<ChannelProviders> => ({
    types: providerTypes().map((type) => {
      const p = providerOf(type)!;
      return {
        type,
        label: p.label,
        default_base_url: p.defaultBaseUrl ?? null,
        key_required: p.keyRequired,
        stream_usage_default: p.streamUsageDefault,
        endpoints: p.endpoints,
      };
    }),
    presets: presets.map((p) => ({ env: p.env, type: p.type, base_url: p.baseUrl ?? null, models: p.models })),
  }));

  app.post('/channels', { schema: { body: channelSchema, response: { 201: publicChannelSchema } } }, async (req, reply) => {
    const channel = await channels.create(req.body);
    reply.code(201);
    return channel;
  });

  // Static path: registered before the parametric ones for readability; the router prefers it anyway.
  app.post('/channels/retest-disabled', { schema: { response: { 200: retestDisabledAnswerSchema } } }, async () => ({ data: await channels.retestDisabled() }));

  app.post('/channels/test-all', { schema: { body: testAllSchema, response: { 200: testAllResultSchema } } }, async (req, reply) => {
    const { concurrency } = req.body;
    return channels.testAll(concurrency ?? DEFAULT_TEST_ALL_CONCURRENCY, abortOnHangUp(reply));
  });

  app.get('/channels/:id', { schema: { response: oneChannel } }, async (req) => channels.get(idOf(req)));

  app.patch('/channels/:id', { schema: { body: channelSchema, response: oneChannel }, ...idFirst }, async (req) => {
    const id = idOf(req);
    return channels.update(id, req.body);
  });

  app.delete('/channels/:id', { schema: { response: { 200: gatewayDeletedSchema } } }, async (req) => {
    const id = idOf(req);
    await channels.delete(id);
    return { deleted: true as const, id };
  });

  app.post('/channels/:id/test', { schema: { body: modelSchema, response: { 200: channelTestAnswerSchema } }, ...idFirst }, async (req, reply) => {
    const id = idOf(req);
    const { model } = req.body;
    const channel = await channels.get(id);
    if (model !== undefined && !channel.models.includes(model)) {
      throw errors.badField('model', `Invalid 'model': channel ${id} does not serve ${model}`);
    }
    return { channel_id: id, data: await channels.test(id, model, abortOnHangUp(reply)) };
  });

  app.post('/channels/:id/enable-models', { schema: { body: modelSchema, response: { 200: enableModelsAnswerSchema } }, ...idFirst }, async (req) => {
    const id = idOf(req);
    const { model } = req.body;
    const before = await channels.get(id);
    await health.enable(id, model);
    const enabled = before.disabled_models.filter((d) => model === undefined || d.model === model).map((d) => d.model);
    return { channel_id: id, enabled, channel: await channels.get(id) };
  });

  // A disabled key of a pool enabled by hand (the re-test loop does it when the key answers again).
  app.post('/channels/:id/keys/:index/enable', { schema: { response: { 200: enableKeyAnswerSchema } } }, async (req) => {
    const id = idOf(req);
    const index = queryInt((req.params as { index: string }).index, 'index', { min: 0, max: MAX_INT32 })!;
    const enabled = await channels.enableKey(id, index);
    return { channel_id: id, index, enabled, channel: await channels.get(id) };
  });
};
