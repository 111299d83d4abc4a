// POST /api/mcp/app/:appId: the application as an MCP server (Streamable
// HTTP, stateless). Its own application key is checked before the body is
// read, and a refusal is the platform's 401/403/404 in its envelope; then the
// request goes to the official SDK's transport, with a server and transport
// made for it and closed when it ends. GET (a server-sent stream) and DELETE
// (a session's end) are 405: there are no sessions, and nothing to push.
import { mcpAnswerSchema, mcpAppParams, mcpRequestBody } from '@kbchat/contracts';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import type { FastifyPluginAsync, FastifyRequest } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import type { App, AppsService } from '../apps/service.js';
import { chatError } from '../chat/routes.js';
import type { AppCaller } from '../chat/turn.js';
import { PlatformError } from '../http/errors.js';
import type { KeyAuthenticator } from '../keys/auth.js';
import type { AppMcpService } from './service.js';

export const MCP_APP_PATH = '/api/mcp/app/:appId';
/** JSON-RPC messages are text: a question longer than the model reads is refused by name anyway (chat checkQuestion). */
const BODY_LIMIT = 4 * 1024 * 1024;

export interface McpServerRouteDeps {
  keys: KeyAuthenticator;
  apps: AppsService;
  mcp: AppMcpService;
}

/**
 * The key must be the application's own: a general key is refused (403), as
 * the chat endpoint refuses it, and so is another application's key (403);
 * an application the key's team does not have is a 404.
 */
async function appOf(deps: McpServerRouteDeps, req: FastifyRequest): Promise<{ caller: AppCaller; app: App }> {
  const caller = await deps.keys.authenticate(req.headers.authorization);
  if (!caller.appId)
    throw new PlatformError(
      403,
      'app_key_required',
      "This is a general key: an application's MCP server takes that application's own key (an application key)",
    );
  const { appId } = req.params as { appId: string };
  const app = await deps.apps.app(caller, appId);
  if (caller.appId !== app.id)
    throw new PlatformError(403, 'wrong_app_key', `This key is another application's: the MCP server of application ${appId} takes that application's own key`);
  return { caller: { ...caller, appId: app.id }, app };
}

export const mcpServerPlugin: FastifyPluginAsync<McpServerRouteDeps> = async (fastify, deps) => {
  const scope = fastify.withTypeProvider<ZodTypeProvider>();
  const callers = new WeakMap<FastifyRequest, { caller: AppCaller; app: App }>();
  scope.post(
    MCP_APP_PATH,
    {
      bodyLimit: BODY_LIMIT,
      schema: {
        summary: 'The application as an MCP server (Streamable HTTP, stateless)',
        description:
          "JSON-RPC 2.0 messages of the Model Context Protocol, with the application's own key as Bearer: initialize, tools/list, tools/call. " +
          'Tools: `ask` ({question, chatId?}: the answer and its citations; a chatId stores the turn in that chat) and, where the application ' +
          'has knowledge bases, `search` ({query}: the quotes). A request is answered as JSON (Accept must name application/json and ' +
          'text/event-stream, as MCP clients send); a notification is 202 without a body. No sessions: every request stands alone.',
        params: mcpAppParams,
        body: mcpRequestBody,
        security: [{ apiKey: [] }],
        response: { 200: mcpAnswerSchema },
      },
      onRequest: async (req) => {
        callers.set(req, await appOf(deps, req));
      },
    },
    async (req, reply) => {
      const { caller, app } = callers.get(req)!;
      const gone = new AbortController();
      const server = deps.mcp.server(caller, app, { requestId: req.id, toError: (err) => chatError(err, req), log: req.log, gone: gone.signal });
      // JSON answers, not a stream: the tools send no progress, and one JSON answer is what proxies and simple clients read best.
      const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
      reply.hijack();
      reply.raw.setHeader('x-request-id', req.id);
      reply.raw.on('close', () => {
        if (!reply.raw.writableFinished) {
          gone.abort();
          // A half-closed socket would otherwise wait for an answer nobody reads (and hold up shutdown).
          reply.raw.socket?.destroy();
        }
        // Closing the server closes its transport.
        void server.close();
      });
      try {
        await server.connect(transport);
        await transport.handleRequest(req.raw, reply.raw, req.body);
      } catch (err) {
        // The SDK answers a bad message itself: this is the transport failing, answered in the envelope while nothing is written.
        const e = chatError(err, req);
        if (reply.raw.headersSent) reply.raw.destroy();
        else reply.raw.writeHead(e.status, { 'content-type': 'application/json; charset=utf-8' }).end(JSON.stringify(e.toBody()));
      }
    },
  );
  scope.route({
    method: ['GET', 'DELETE'],
    url: MCP_APP_PATH,
    schema: {
      summary: 'Not offered: 405 (the MCP server is stateless)',
      description:
        'GET would open a stream of server messages and DELETE end a session: this server has neither, so both answer 405 (MCP clients go on with POST).',
      params: mcpAppParams,
      security: [],
    },
    handler: async () => {
      throw new PlatformError(
        405,
        'method_not_allowed',
        'This MCP server is stateless: it has no stream to GET and no session to DELETE; send JSON-RPC messages with POST',
        {
          allow: 'POST',
        },
      );
    },
  });
};
