// The platform's API documents: every route Fastify serves is in
// /openapi.json with its method (but the web app's pages and files, and the
// docs page's own), the document is valid OpenAPI 3.1 generated from the
// routes' own zod schemas (a body the route refuses, the document refuses
// too), and /docs is a page that needs nothing but the platform.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ICON_PATHS, pagePaths } from '@kbchat/server-kit';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import {
  apiRoutes,
  bodySchema,
  expectOfflineDocsPage,
  expectValidDocument,
  operations,
  type OpenApiDocument,
  type RecordedRoute,
} from '../../server-kit/test/api-docs-checks.js';
import { loadPlatformConfig, startPlatform } from '../src/index.js';
import { APP_PAGES, SHARE_PAGE } from '../src/http/web-app.js';

const routes = vi.hoisted((): RecordedRoute[] => []);
vi.mock('fastify', async (importOriginal) => {
  const { recordingFastify } = await import('../../server-kit/test/api-docs-checks.js');
  return recordingFastify(await importOriginal<any>(), routes);
});

const KEY = 'kbchat-openapi-test-key-0123456789';
/** Not API: the web app's pages and hashed files, the embed script, the public folder's files (PUBLIC_DIR), and the docs page with its files. */
const WEB_PAGES = new Set([...pagePaths({ html: 'index.html', paths: APP_PAGES }), SHARE_PAGE]);
const notApi = (url: string) =>
  WEB_PAGES.has(url) ||
  ICON_PATHS.includes(url) ||
  url === '/assets/*' ||
  url === '/embed.js' ||
  url === '/:name' ||
  url === '/docs' ||
  url.startsWith('/docs/');

let platform: Awaited<ReturnType<typeof startPlatform>>;
let doc: OpenApiDocument;

beforeAll(async () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'kbchat-openapi-'));
  platform = await startPlatform(loadPlatformConfig({ INITIAL_API_KEY: KEY }, { host: '127.0.0.1', port: 0, dataDir, databaseUrl: 'pglite:memory' }), () => {});
  const r = await fetch(`${platform.url}/openapi.json`);
  expect(r.status).toBe(200);
  doc = (await r.json()) as OpenApiDocument;
});
afterAll(async () => {
  await platform?.close();
});

describe('the platform API document', () => {
  it('has every route the platform serves, with its method, and nothing it does not', () => {
    const served = apiRoutes(routes, notApi);
    // The recorder saw the whole app, not a part of it.
    expect(served.size).toBeGreaterThan(60);
    expect(served).toContain('POST /api/v1/chat/completions');
    expect(served).toContain('PATCH /api/core/dataset/collection/upload/tus/{uploadId}');
    const documented = operations(doc);
    expect(
      [...served].filter((op) => !documented.has(op)),
      'routes missing from /openapi.json',
    ).toEqual([]);
    expect(
      [...documented].filter((op) => !served.has(op)),
      'documented operations no route serves',
    ).toEqual([]);
    // The pages are routes, but not in the document.
    expect(routes.some((r) => r.url === '/datasets/*')).toBe(true);
    expect(Object.keys(doc.paths).some((p) => p.startsWith('/datasets') || p.startsWith('/docs'))).toBe(false);
  });

  it('is valid OpenAPI 3.1, with the security schemes and the error envelope', async () => {
    await expectValidDocument(doc);
    expect(Object.keys(doc.components.securitySchemes).sort()).toEqual(['apiKey', 'session']);
    expect(doc.components.securitySchemes.session).toMatchObject({ type: 'apiKey', in: 'cookie', name: 'kbchat_session' });
    // Open routes say so; the rest take the document's default (a key or the session).
    expect(doc.paths['/api/auth/login']!.post.security).toEqual([]);
    expect(doc.paths['/api/support/outLink/init']!.get.security).toEqual([]);
    expect(doc.paths['/api/core/dataset/create']!.post.security).toBeUndefined();
    expect(doc.paths['/api/core/dataset/create']!.post.responses['4XX']).toEqual({ $ref: '#/components/responses/Error' });
    expect(doc.components.schemas.Error.required).toEqual(expect.arrayContaining(['code', 'statusText', 'message', 'data']));
    // Management routes answer the envelope with their own data; the OpenAI-compatible chat answers as OpenAI does.
    const created = doc.paths['/api/core/dataset/create']!.post.responses['200'];
    expect(created.description).toBe('The envelope, with the answer in data');
    expect(created.content['application/json'].schema).toMatchObject({
      required: ['code', 'statusText', 'message', 'data'],
      properties: { code: { enum: [200] }, data: { type: 'string' } },
    });
    const chat = doc.paths['/api/v1/chat/completions']!.post.responses['200'];
    expect(chat.description).toBe('The answer');
    expect(chat.content['application/json'].schema).toMatchObject({ properties: { object: { enum: ['chat.completion'] }, choices: { type: 'array' } } });
  });

  it("declares every API route's answer, but the tus protocol's (headers and bytes), the files' (CSV, JSON Lines) and the MCP server's 405s", () => {
    const tus = '/api/core/dataset/collection/upload/tus';
    const exceptions = [
      `POST ${tus}`,
      `HEAD ${tus}/{uploadId}`,
      `PATCH ${tus}/{uploadId}`,
      `DELETE ${tus}/{uploadId}`,
      'GET /api/core/app/exportChatLogs',
      'GET /api/core/app/annotation/export',
      // The MCP server is stateless: no stream to GET, no session to DELETE (405 only).
      'GET /api/mcp/app/{appId}',
      'DELETE /api/mcp/app/{appId}',
    ];
    const undeclared: string[] = [];
    for (const [path, item] of Object.entries(doc.paths)) {
      if (!path.startsWith('/api/')) continue;
      for (const [method, operation] of Object.entries(item)) {
        const schema = operation.responses?.['200']?.content?.['application/json']?.schema;
        if (!schema || schema.$ref === '#/components/schemas/Envelope') undeclared.push(`${method.toUpperCase()} ${path}`);
      }
    }
    expect(undeclared.sort()).toEqual(exceptions.sort());
  });

  it('takes its schemas from the routes: a body the route refuses, the document refuses', async () => {
    const validate = bodySchema(doc, 'post', '/api/core/dataset/create');
    const refused = { name: '', intro: 'x' };
    expect(validate({ name: 'manuals' })).toBe(true);
    expect(validate(refused)).toBe(false);
    expect(validate.errors?.[0]?.instancePath).toBe('/name');
    const answer = await fetch(`${platform.url}/api/core/dataset/create`, {
      method: 'POST',
      headers: { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' },
      body: JSON.stringify(refused),
    });
    expect(answer.status).toBe(400);
    expect(((await answer.json()) as { message: string }).message).toMatch(/^Invalid 'name': /);
    // Query strings too: detail's id is required and at most 64 characters.
    const id = doc.paths['/api/core/dataset/detail']!.get.parameters.find((p: { name: string }) => p.name === 'id');
    expect(id).toMatchObject({ in: 'query', required: true, schema: { type: 'string', maxLength: 64 } });
  });

  it('still authenticates before it validates: no key is a 401 even with a bad body', async () => {
    const answer = await fetch(`${platform.url}/api/core/dataset/create`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{"name":""}',
    });
    expect(answer.status).toBe(401);
  });

  it('serves the same document to Swagger UI, and /docs needs nothing but the platform', async () => {
    expect(await (await fetch(`${platform.url}/docs/json`)).json()).toEqual(doc);
    await expectOfflineDocsPage(platform.url);
  });
});
