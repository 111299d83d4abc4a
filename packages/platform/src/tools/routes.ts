// /api/core/tool/source/*: the team's tool sources (general key or session;
// an application key is refused, another team's source is a 404). Headers
// are answered as hints only.
import type { FastifyPluginAsync } from 'fastify';
import {
  createToolSourceBody,
  envelopeOf,
  publicToolSourceSchema,
  refreshToolSourceBody,
  toolSourceDetailSchema,
  toolSourceIdQuery,
  type PublicToolSource,
  type ToolSourceDetail,
} from '@kbchat/contracts';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import type { RequestAuth } from '../accounts/request-auth.js';
import { done, ok } from '../datasets/routes.js';
import { authenticated } from '../http/caller.js';
import { shownUrl } from './fetch.js';
import type { ToolSources } from './service.js';
import type { ToolSourceRow } from './store.js';
import type { StoredTool } from './tables.js';

/** A pasted OpenAPI document may be large. */
const BODY_LIMIT = 3 * 1024 * 1024;

export function publicToolSource(s: ToolSourceRow): PublicToolSource {
  return {
    _id: s.id,
    id: s.id,
    type: s.type,
    name: s.name,
    // Shown without a user part or a query: a key is often put there.
    url: s.url ? shownUrl(s.url) : undefined,
    baseUrl: s.base_url ? shownUrl(s.base_url) : undefined,
    transport: (s.transport ?? undefined) as PublicToolSource['transport'],
    headers: JSON.parse(s.header_hints) as PublicToolSource['headers'],
    toolCount: (JSON.parse(s.tools) as unknown[]).length,
    listTime: new Date(Number(s.listed_at)).toISOString(),
    createTime: new Date(Number(s.created_at)).toISOString(),
    updateTime: new Date(Number(s.updated_at)).toISOString(),
  };
}

export function toolSourceDetail(s: ToolSourceRow): ToolSourceDetail {
  const tools = (JSON.parse(s.tools) as StoredTool[]).map((t) => ({ name: t.name, description: t.description, inputSchema: t.inputSchema }));
  return { ...publicToolSource(s), tools };
}

export const toolSourcesPlugin: FastifyPluginAsync<{ tools: ToolSources; auth: RequestAuth }> = async (fastify, { tools, auth }) => {
  const app = fastify.withTypeProvider<ZodTypeProvider>();
  app.addHook(
    'onRequest',
    authenticated((req) => auth.general(req)),
  );

  app.post(
    '/api/core/tool/source/create',
    {
      bodyLimit: BODY_LIMIT,
      schema: {
        description: 'Adds an MCP server or an OpenAPI-described HTTP API; its tools are listed at once, and a source that cannot be reached is not kept',
        body: createToolSourceBody,
        response: { 200: envelopeOf(z.string().describe("The new source's id")) },
      },
    },
    async (req) => ok(await tools.create(req.caller, req.body)),
  );
  app.get('/api/core/tool/source/list', { schema: { response: { 200: envelopeOf(z.array(publicToolSourceSchema)) } } }, async (req) =>
    ok((await tools.list(req.caller)).map(publicToolSource)),
  );
  app.get('/api/core/tool/source/detail', { schema: { querystring: toolSourceIdQuery, response: { 200: envelopeOf(toolSourceDetailSchema) } } }, async (req) =>
    ok(toolSourceDetail(await tools.detail(req.caller, req.query.id))),
  );
  app.post(
    '/api/core/tool/source/refresh',
    { schema: { description: "Lists the source's tools again", body: refreshToolSourceBody, response: { 200: envelopeOf(toolSourceDetailSchema) } } },
    async (req) => ok(toolSourceDetail(await tools.refresh(req.caller, req.body.id))),
  );
  app.delete('/api/core/tool/source/delete', { schema: { querystring: toolSourceIdQuery, response: done } }, async (req) => {
    await tools.delete(req.caller, req.query.id);
    return ok(null);
  });
};
