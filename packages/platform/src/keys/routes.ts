// /api/support/openapi/*: API keys, managed with a general key.
import type { FastifyPluginAsync } from 'fastify';
import {
  createKeyBody as createKey,
  deleteKeyQuery as deleteQuery,
  envelopeOf,
  listKeysQuery as listQuery,
  publicKeySchema,
  type PublicKey,
} from '@kbchat/contracts';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { done, ok } from '../datasets/routes.js';
import { authenticated } from '../http/caller.js';
import type { RequestAuth } from '../accounts/request-auth.js';
import type { KeysService } from './service.js';
import type { ApiKeyRow } from './store.js';

/** These bodies are a few short fields: more is not read. */
const BODY_LIMIT = 64 * 1024;

export function publicKey(k: ApiKeyRow): PublicKey {
  return {
    _id: String(k.id),
    id: String(k.id),
    name: k.name,
    appId: k.app_id ?? undefined,
    apiKey: `${k.key_prefix}…`,
    createTime: new Date(Number(k.created_at)).toISOString(),
    lastUsedTime: k.last_used_at ? new Date(Number(k.last_used_at)).toISOString() : undefined,
    limit: { expiredTime: k.expires_at ? new Date(Number(k.expires_at)).toISOString() : undefined },
  };
}

/** General keys or a session, checked before the body is read. */
export const keysPlugin: FastifyPluginAsync<{ keys: KeysService; auth: RequestAuth }> = async (scope, { keys, auth }) => {
  const app = scope.withTypeProvider<ZodTypeProvider>();
  app.addHook(
    'onRequest',
    authenticated((req) => auth.general(req)),
  );

  // The key itself is in this answer and nowhere else, ever.
  app.post(
    '/api/support/openapi/create',
    { bodyLimit: BODY_LIMIT, schema: { body: createKey, response: { 200: envelopeOf(z.string().describe('The key itself, shown this once')) } } },
    async (req) => {
      const b = req.body;
      const { key } = await keys.create(req.caller, { name: b.name, appId: b.appId, expiresAt: b.expiredTime ?? b.limit?.expiredTime });
      return ok(key);
    },
  );
  app.get('/api/support/openapi/list', { schema: { querystring: listQuery, response: { 200: envelopeOf(z.array(publicKeySchema)) } } }, async (req) =>
    ok((await keys.list(req.caller, req.query.appId)).map(publicKey)),
  );
  app.delete('/api/support/openapi/delete', { bodyLimit: BODY_LIMIT, schema: { querystring: deleteQuery, response: done } }, async (req) => {
    await keys.revoke(req.caller, req.query.id);
    return ok(null);
  });
};
