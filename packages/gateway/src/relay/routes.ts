// GET /v1/models on Fastify: the models the token may use (those its group's channels serve). The relay's POST
// endpoints are served in front of Fastify (http1/node-front.ts and
// http1/lean-front.ts), so the API document gets them from here: their wire
// schemas, which the relay checks bodies with (unknown fields pass through to
// the upstream).
import { chatRequestSchema, embeddingsRequestSchema, rerankRequestSchema } from '@kbchat/contracts/openai';
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { callerGroup, type TokenAuthenticator } from '../accounts/auth.js';
import { endpointOfModel } from '../providers/index.js';
import { anthropicRequestSchema } from '../providers/anthropic/inbound.js';
import type { RelayDeps } from './context.js';

/** The relay takes a gateway token only (never a console session). */
const TOKEN_ONLY = [{ token: [] }];

export function relayRoutes(app: FastifyInstance, deps: RelayDeps, auth: TokenAuthenticator): void {
  app.get(
    '/v1/models',
    { schema: { description: "The models this token may use (served by a channel of its group), OpenAI's list shape", security: TOKEN_ONLY } },
    async (req) => {
      const caller = await auth.authenticate(req.headers.authorization, req.ip);
      const group = callerGroup(caller);
      const data = [];
      for (const id of deps.registry.servedModels(group).sort()) {
        if (caller.models && !caller.models.has(id)) continue;
        const ch = deps.registry.channelOf(id, group);
        data.push({
          id,
          object: 'model',
          created: 0,
          owned_by: ch?.type ?? 'kbchat',
          endpoint: endpointOfModel(id, ch?.options),
          ...ch?.options.modelInfo?.[id],
        });
      }
      return { object: 'list', data };
    },
  );
}

const RELAYED: { path: string; schema: z.ZodType; description: string; answer?: string }[] = [
  {
    path: '/v1/chat/completions',
    schema: chatRequestSchema,
    description:
      "OpenAI's chat completion, relayed to a channel serving `model`; with `stream: true` the answer is text/event-stream (OpenAI's chunks, then `data: [DONE]`)",
  },
  {
    path: '/v1/messages',
    schema: anthropicRequestSchema,
    description:
      "Anthropic's Messages API, relayed to any channel serving `model` (translated to a chat completion and back); the token may also come in `x-api-key`; with `stream: true` the answer is Anthropic's events; errors are in Anthropic's envelope",
    answer: 'An Anthropic message (usage counted and logged); X-Request-Id names the log row',
  },
  { path: '/v1/embeddings', schema: embeddingsRequestSchema, description: "OpenAI's embeddings, relayed to a channel serving `model`" },
  { path: '/v1/rerank', schema: rerankRequestSchema, description: 'A rerank (Jina / Cohere shape), relayed to a channel serving `model`' },
];

/** The relay's POSTs as OpenAPI path items (they never reach Fastify's router, so its route list has them not). */
export function relayPathItems(): Record<string, Record<string, unknown>> {
  return Object.fromEntries(
    RELAYED.map(({ path, schema, description, answer }) => [
      path,
      {
        post: {
          tags: ['relay'],
          description,
          security: TOKEN_ONLY,
          requestBody: {
            required: true,
            content: { 'application/json': { schema: z.toJSONSchema(schema, { target: 'draft-2020-12', io: 'input', unrepresentable: 'any' }) } },
          },
          responses: { 200: { description: answer ?? "The upstream's answer, as it sent it (usage counted and logged); X-Request-Id names the log row" } },
        },
      },
    ]),
  );
}
