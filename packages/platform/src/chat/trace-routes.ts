// GET /api/core/chat/modelCalls?appId=&chatId=&dataId=: the gateway's record
// of a stored answer's model calls, for the team's own people (general key or
// session; never a share link's visitor: channels and costs are the
// operator's business). The request ids are read from the answer the team
// owns, never taken from the caller: an id from another team's answer names
// nothing here.
import type { FastifyPluginAsync } from 'fastify';
import { envelopeOf, gatewayCallsSchema, modelCallsQuery as query } from '@kbchat/contracts';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import type { RequestAuth } from '../accounts/request-auth.js';
import type { AppsService } from '../apps/service.js';
import { ok } from '../datasets/routes.js';
import type { GatewayClient } from '../gateway-client/index.js';
import { errors } from '../http/errors.js';
import { authenticated } from '../http/caller.js';
import type { ChatHistoryStore } from './history-store.js';
import { gatewayCalls, requestIdsOf } from './model-calls.js';

/** General keys or a session (never a visitor), checked in onRequest. */
export const modelCallsPlugin: FastifyPluginAsync<{ auth: RequestAuth; apps: AppsService; history: ChatHistoryStore; gateway: GatewayClient }> = async (
  fastify,
  deps,
) => {
  const app = fastify.withTypeProvider<ZodTypeProvider>();
  app.addHook(
    'onRequest',
    authenticated((req) => deps.auth.general(req)),
  );

  app.get('/api/core/chat/modelCalls', { schema: { querystring: query, response: { 200: envelopeOf(gatewayCallsSchema) } } }, async (req) => {
    const caller = req.caller;
    const q = req.query;
    await deps.apps.app(caller, q.appId); // 404 for another team's app
    const item = await deps.history.item({ teamId: caller.teamId, appId: q.appId, chatId: q.chatId }, q.dataId);
    if (!item) throw errors.notFound(`Answer ${q.dataId} of chat ${q.chatId}`);
    return ok(await gatewayCalls(deps.gateway, requestIdsOf(item.response_data ? JSON.parse(item.response_data) : [])));
  });
};
