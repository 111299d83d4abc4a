// GET /v1/models on Fastify: the models the token may use. The relay's POST
// endpoints are served in front of Fastify (http-front.ts).
import type { FastifyInstance } from 'fastify';
import type { TokenAuthenticator } from '../accounts/auth.js';
import { endpointOfModel } from '../providers/index.js';
import type { RelayDeps } from './context.js';

export function relayRoutes(app: FastifyInstance, deps: RelayDeps, auth: TokenAuthenticator): void {
  app.get('/v1/models', async (req) => {
    const caller = await auth.authenticate(req.headers.authorization, req.ip);
    const data = [];
    for (const id of deps.registry.servedModels().sort()) {
      if (caller.models && !caller.models.has(id)) continue;
      const ch = deps.registry.all().find((c) => c.enabled && c.models.includes(id));
      data.push({ id, object: 'model', created: 0, owned_by: ch?.type ?? 'kbchat', endpoint: endpointOfModel(id, ch?.options), ...ch?.options.modelInfo?.[id] });
    }
    return { object: 'list', data };
  });
}
