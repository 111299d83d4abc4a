// GET /api/core/ai/model/list: the models config.json offers and, for each,
// whether the gateway serves it now, so that a missing channel is seen on the
// models page before anyone chats (or creates a knowledge base on it).
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { RequestAuth } from '../accounts/request-auth.js';
import { ok } from '../datasets/routes.js';
import type { GatewayClient } from '../gateway-client/index.js';
import type { ModelConfig } from './config-file.js';

export type ModelKind = 'llm' | 'embedding' | 'rerank';

export interface ModelStatus {
  kind: ModelKind;
  model: string;
  name: string;
  /** The gateway lists it for the platform's token. */
  served: boolean;
  /** Why not, in the gateway's own words where it gave some. */
  message?: string;
  maxContext?: number;
  maxResponse?: number;
  /** LLMs: the highest temperature the chat sends it (a higher setting is capped there). */
  maxTemperature?: number;
  /** Embedding models: chunk size of new knowledge bases, in tokens. */
  defaultToken?: number;
}

export interface ModelList {
  gateway: { url: string; reachable: boolean; message?: string };
  models: ModelStatus[];
}

export async function modelStatus(models: ModelConfig, gateway: GatewayClient): Promise<ModelList> {
  let served: Set<string> | undefined;
  let failure: string | undefined;
  try {
    served = new Set(await gateway.models());
  } catch (err) {
    failure = `The gateway at ${gateway.url} did not answer: ${(err as Error).message}`;
  }
  const status = (kind: ModelKind, m: { model: string; name?: string }, extra: Partial<ModelStatus> = {}): ModelStatus => {
    const isServed = served?.has(m.model) ?? false;
    const message = failure ?? (isServed ? undefined : `No available channel for model ${m.model}: the gateway has no enabled channel that serves it (add one in the gateway, or remove the model from config.json)`);
    return { kind, model: m.model, name: m.name ?? m.model, served: isServed, ...(message ? { message } : {}), ...extra };
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

export function modelRoutes(app: FastifyInstance, deps: { models: ModelConfig; gateway: GatewayClient; auth: RequestAuth }): void {
  const caller = (req: FastifyRequest) => deps.auth.general(req);
  app.get('/api/core/ai/model/list', async (req) => {
    await caller(req);
    return ok(await modelStatus(deps.models, deps.gateway));
  });
}
