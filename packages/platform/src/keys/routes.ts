// /api/support/openapi/*: API keys, managed with a general key.
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { createKeyBody as createKey, deleteKeyQuery as deleteQuery, listKeysQuery as listQuery, type PublicKey } from '@kbchat/contracts';
import { ok } from '../datasets/routes.js';
import { parseInput } from '../http/validate.js';
import type { RequestAuth } from '../accounts/request-auth.js';
import type { KeysService } from './service.js';
import type { ApiKeyRow } from './store.js';

/** These bodies are a few short fields: more is not read. */
const BODY_LIMIT = 64 * 1024;

export function publicKey(k: ApiKeyRow): PublicKey {
  return {
    _id: String(k.id), id: String(k.id), name: k.name, appId: k.app_id ?? undefined, apiKey: `${k.key_prefix}…`,
    createTime: new Date(Number(k.created_at)).toISOString(), lastUsedTime: k.last_used_at ? new Date(Number(k.last_used_at)).toISOString() : undefined,
    limit: { expiredTime: k.expires_at ? new Date(Number(k.expires_at)).toISOString() : undefined },
  };
}

export function keyRoutes(app: FastifyInstance, keys: KeysService, auth: RequestAuth): void {
  const caller = (req: FastifyRequest) => auth.general(req);

  // The key itself is in this answer and nowhere else, ever.
  app.post('/api/support/openapi/create', { bodyLimit: BODY_LIMIT, schema: { body: createKey } }, async (req) => {
    const who = await caller(req);
    const b = parseInput(createKey, req.body);
    const { key } = await keys.create(who, { name: b.name, appId: b.appId, expiresAt: b.expiredTime ?? b.limit?.expiredTime });
    return ok(key);
  });
  app.get('/api/support/openapi/list', { schema: { querystring: listQuery } }, async (req) => {
    const who = await caller(req);
    const { appId } = parseInput(listQuery, req.query);
    return ok((await keys.list(who, appId)).map(publicKey));
  });
  app.delete('/api/support/openapi/delete', { bodyLimit: BODY_LIMIT, schema: { querystring: deleteQuery } }, async (req) => {
    const who = await caller(req);
    const { id } = parseInput(deleteQuery, req.query);
    await keys.revoke(who, id);
    return ok(null);
  });
}
