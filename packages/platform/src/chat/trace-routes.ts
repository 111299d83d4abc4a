// GET /api/core/chat/modelCalls?requestIds=a,b: the gateway's record of an
// answer's (or a search's) model calls, for the team's own people (general
// key or session; never a share link's visitor: channels and costs are the
// operator's business). Request ids are random and appear only in the
// answers that made them.
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import type { RequestAuth } from '../accounts/request-auth.js';
import { ok } from '../datasets/routes.js';
import type { GatewayClient } from '../gateway-client/index.js';
import { parseInput } from '../http/validate.js';
import { gatewayCalls } from './model-calls.js';

/** The calls of one answer: a handful; a whole search with extension and rerank stays well below. */
export const MAX_TRACED_CALLS = 32;

const query = z.object({
  requestIds: z
    .string()
    .min(1)
    .transform((s) => [...new Set(s.split(',').map((id) => id.trim()).filter(Boolean))])
    .pipe(z.array(z.string().regex(/^[A-Za-z0-9_-]{1,64}$/, 'request ids are letters, digits, - and _')).min(1).max(MAX_TRACED_CALLS)),
});

export function traceRoutes(app: FastifyInstance, deps: { auth: RequestAuth; gateway: GatewayClient }): void {
  app.get('/api/core/chat/modelCalls', async (req) => {
    await deps.auth.general(req);
    const { requestIds } = parseInput(query, req.query);
    return ok(await gatewayCalls(deps.gateway, requestIds));
  });
}
