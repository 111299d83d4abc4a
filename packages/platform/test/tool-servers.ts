// Servers for the tool tests, real ones: the MCP SDK's own McpServer over
// Streamable HTTP (/mcp, stateless) and the older HTTP+SSE transport (/sse and
// /messages), both insisting on `Authorization: Bearer MCP_TOKEN`; and a
// node:http API described by apiDocument() (its calls need API_TOKEN).
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { SSEServerTransport } from '@modelcontextprotocol/sdk/server/sse.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { z } from 'zod';
import { RESULT_MAX_CHARS } from '../src/tools/service.js';

export const MCP_TOKEN = 'mcp-secret-token-0123456789-wxyz';
export const API_TOKEN = 'api-secret-token-0123456789-abcd';

export interface TestServer {
  url: string;
  close(): Promise<void>;
}

export async function listen(handler: (req: IncomingMessage, res: ServerResponse) => void, onClose: () => void = () => {}): Promise<TestServer> {
  const server: Server = createServer(handler);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    async close() {
      onClose();
      server.closeAllConnections();
      await new Promise((r) => server.close(() => r(null)));
    },
  };
}

/** An MCP server (Streamable HTTP at /mcp, stateless; HTTP+SSE at /sse and /messages): forecast, broken, hang, and `extra` once added. */
export async function startMcpServer(): Promise<TestServer & { addExtra(): void }> {
  let extra = false;
  const hung: (() => void)[] = [];
  const sse = new Map<string, SSEServerTransport>();
  const build = () => {
    const server = new McpServer({ name: 'weather', version: '1.0.0' });
    server.registerTool('forecast', { description: "Tomorrow's weather in a city", inputSchema: { city: z.string() } }, async ({ city }) => ({
      content: [{ type: 'text', text: `Sunny in ${city}, 21 °C` }],
    }));
    server.registerTool('broken', { description: 'Always fails' }, async () => {
      throw new Error('the weather station is offline');
    });
    server.registerTool('hang', { description: 'Never answers' }, () => new Promise((resolve) => hung.push(() => resolve({ content: [] }))));
    if (extra) server.registerTool('extra', { description: 'Added later' }, async () => ({ content: [{ type: 'text', text: 'extra' }] }));
    return server;
  };
  const s = await listen(
    (req, res) => {
      const path = (req.url ?? '').split('?')[0];
      if (req.headers.authorization !== `Bearer ${MCP_TOKEN}`)
        return void res.writeHead(401, { 'content-type': 'application/json' }).end('{"error":"unauthorized"}');
      if (path === '/mcp' && req.method === 'POST') {
        const server = build();
        const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined });
        res.on('close', () => void transport.close().then(() => server.close()));
        void server.connect(transport).then(() => transport.handleRequest(req, res));
        return;
      }
      if (path === '/sse' && req.method === 'GET') {
        const transport = new SSEServerTransport('/messages', res);
        sse.set(transport.sessionId, transport);
        transport.onclose = () => sse.delete(transport.sessionId);
        void build().connect(transport);
        return;
      }
      if (path === '/messages' && req.method === 'POST') {
        const transport = sse.get(new URL(req.url!, 'http://x').searchParams.get('sessionId') ?? '');
        if (!transport) return void res.writeHead(404).end('no session');
        void transport.handlePostMessage(req, res);
        return;
      }
      res.writeHead(path === '/mcp' ? 405 : 404).end();
    },
    () => hung.splice(0).forEach((release) => release()),
  );
  return { ...s, addExtra: () => (extra = true) };
}

/** The API's document: getPet (path, query and header parameters), a POST without an operationId whose body refers to itself, and operations that fail, hang, answer too much or a long text. */
export function apiDocument(serverUrl: string, withExtra = false) {
  const op = (operationId: string, summary: string) => ({ operationId, summary, responses: { 200: { description: 'ok' } } });
  return {
    openapi: '3.0.3',
    info: { title: 'Pets', version: '1' },
    servers: [{ url: `${serverUrl}/{version}`, variables: { version: { default: 'v1' } } }],
    paths: {
      '/pets/{petId}': {
        parameters: [{ name: 'petId', in: 'path', required: true, schema: { type: 'string' }, description: "The pet's id" }],
        get: {
          ...op('getPet', 'One pet'),
          parameters: [
            { name: 'verbose', in: 'query', schema: { type: 'boolean' } },
            { name: 'X-Trace', in: 'header', schema: { type: 'string' } },
          ],
        },
      },
      '/pets': {
        post: {
          summary: 'Adds a pet',
          requestBody: { required: true, content: { 'application/json': { schema: { $ref: '#/components/schemas/Pet' } } } },
          responses: { 201: { description: 'made' } },
        },
      },
      '/fail': { get: op('failing', 'Fails') },
      '/slow': { get: op('slow', 'Never answers') },
      '/big': { get: op('big', 'Answers 2 MB') },
      '/long': { get: op('long', 'Answers a long text') },
      ...(withExtra ? { '/extra': { get: op('extraOp', 'Added later') } } : {}),
    },
    components: {
      schemas: { Pet: { type: 'object', required: ['name'], properties: { name: { type: 'string' }, parent: { $ref: '#/components/schemas/Pet' } } } },
    },
  };
}

export async function startApiServer(): Promise<TestServer & { addExtra(): void }> {
  let withExtra = false;
  const held: ServerResponse[] = [];
  const s = await listen(
    (req, res) => {
      const url = new URL(req.url!, 'http://x');
      if (url.pathname === '/openapi.json')
        return void res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(apiDocument(s.url, withExtra)));
      if (req.headers.authorization !== `Bearer ${API_TOKEN}`) return void res.writeHead(401).end('who are you?');
      let raw = '';
      req.on('data', (c) => (raw += c));
      req.on('end', () => {
        const json = (status: number, body: unknown) => res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
        const pet = /^\/v1\/pets\/([^/]+)$/.exec(url.pathname);
        if (pet && req.method === 'GET')
          return json(200, { id: decodeURIComponent(pet[1]!), name: 'Rex', verbose: url.searchParams.get('verbose'), trace: req.headers['x-trace'] ?? null });
        if (url.pathname === '/v1/pets' && req.method === 'POST') return json(201, { made: JSON.parse(raw) });
        if (url.pathname === '/v1/fail') return json(500, { error: 'database down' });
        if (url.pathname === '/v1/slow') return void held.push(res);
        if (url.pathname === '/v1/big') return void res.writeHead(200, { 'content-type': 'text/plain' }).end('x'.repeat(2_000_000));
        if (url.pathname === '/v1/long') return void res.writeHead(200, { 'content-type': 'text/plain' }).end('y'.repeat(RESULT_MAX_CHARS + 500));
        json(404, { error: 'no such path' });
      });
    },
    () => held.splice(0).forEach((r) => r.destroy()),
  );
  return { ...s, addExtra: () => (withExtra = true) };
}
