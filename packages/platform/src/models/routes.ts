// GET /api/core/ai/model/list: the models config.json offers and, for each,
// whether the gateway serves it now, so that a missing channel is seen on the
// models page before anyone chats (or creates a knowledge base on it).
import { envelopeOf, modelListSchema, type ModelKind, type ModelStatus, type ModelList } from '@kbchat/contracts';
import type { FastifyPluginAsync } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import type { RequestAuth } from '../accounts/request-auth.js';
import { ok } from '../datasets/routes.js';
import { authenticated } from '../http/caller.js';
import { isGatewayError, type GatewayClient } from '../gateway-client/index.js';
import type { ModelConfig } from './config-file.js';

export type { ModelKind, ModelStatus, ModelList };

export async function modelStatus(models: ModelConfig, gateway: GatewayClient): Promise<ModelList> {
  let served: Set<string> | undefined;
  let failure: string | undefined;
  try {
    served = new Set(await gateway.models());
  } catch (err) {
    failure = gatewayFailure(gateway.url, err);
  }
  const status = (kind: ModelKind, m: { model: string; name?: string }, extra: Partial<ModelStatus> = {}): ModelStatus => {
    const isServed = served?.has(m.model) ?? false;
    const message =
      failure ??
      (isServed
        ? undefined
        : `No available channel for model ${m.model}: the gateway has no enabled channel that serves it (add one in the gateway, or remove the model from config.json)`);
    const failing = isServed ? gateway.failures.failing(m.model) : undefined;
    return { kind, model: m.model, name: m.name ?? m.model, served: isServed, ...(message ? { message } : {}), ...(failing ? { failing } : {}), ...extra };
  };
  return {
    gateway: { url: gateway.url, reachable: !failure, ...(failure ? { message: failure } : {}) },
    models: [
      ...models.llmModels.map((m) => status('llm', m, { maxContext: m.maxContext, maxResponse: m.maxResponse, maxTemperature: m.maxTemperature })),
      ...models.vectorModels.map((m) => status('embedding', m, { defaultToken: m.defaultToken })),
      ...models.reRankModels.map((m) => status('rerank', m)),
    ],
  };
}

/** One sentence that names the gateway and what went wrong (the client's own message names the address too: said once). */
function gatewayFailure(url: string, err: unknown): string {
  const message = (err as Error).message.replace(`${url}: `, '');
  if (isGatewayError(err) && (err.code === 'connection_error' || err.code === 'timeout')) return `The gateway at ${url} did not answer: ${message}`;
  return `The gateway at ${url} refused the model list: ${message}`;
}

/** General keys or a session, checked in onRequest. */
export const modelsPlugin: FastifyPluginAsync<{ models: ModelConfig; gateway: GatewayClient; auth: RequestAuth }> = async (scope, deps) => {
  const app = scope.withTypeProvider<ZodTypeProvider>();
  app.addHook(
    'onRequest',
    authenticated((req) => deps.auth.general(req)),
  );
  app.get('/api/core/ai/model/list', { schema: { response: { 200: envelopeOf(modelListSchema) } } }, async () =>
    ok(await modelStatus(deps.models, deps.gateway)),
  );
};
