// The gateway's API documents: every route Fastify serves is in
// /openapi.json with its method (but the console's pages and files, and the
// docs page's own), and so are the relay's POSTs, which the fronts answer
// before Fastify; the document is valid OpenAPI 3.1 from the routes' own zod
// schemas (a body the route refuses, the document refuses too), and /docs is
// a page that needs nothing but the gateway.
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
import { RELAY_PATHS, relayRoute } from '../src/relay/front-serve.js';
import { CONSOLE_PAGES } from '../src/server.js';
import { startTestGateway, type TestGateway } from './helpers.js';

const routes = vi.hoisted((): RecordedRoute[] => []);
vi.mock('fastify', async (importOriginal) => {
  const { recordingFastify } = await import('../../server-kit/test/api-docs-checks.js');
  return recordingFastify(await importOriginal<any>(), routes);
});

/** Not API: the console's pages and hashed files, and the docs page with its files. */
const PAGES = new Set(pagePaths({ html: 'console.html', paths: CONSOLE_PAGES }));
const notApi = (url: string) => PAGES.has(url) || ICON_PATHS.includes(url) || url === '/assets/*' || url === '/docs' || url.startsWith('/docs/');

let t: TestGateway;
let doc: OpenApiDocument;

beforeAll(async () => {
  t = await startTestGateway({ models: ['sim-chat', 'sim-embed-384'] });
  const r = await fetch(`${t.url}/openapi.json`);
  expect(r.status).toBe(200);
  doc = (await r.json()) as OpenApiDocument;
});
afterAll(async () => {
  await t?.close();
});

describe('the gateway API document', () => {
  it('has every route Fastify serves and every relay POST, with its method, and nothing else', () => {
    const served = apiRoutes(routes, notApi);
    expect(served.size).toBeGreaterThan(25);
    expect(served).toContain('PATCH /api/users/{id}');
    expect(served).toContain('PUT /api/prices/{*}');
    // The relay's POSTs never reach Fastify's router: the fronts' own list.
    expect(RELAY_PATHS.length).toBe(4);
    for (const path of RELAY_PATHS) served.add(`POST ${path}`);
    const documented = operations(doc);
    expect(
      [...served].filter((op) => !documented.has(op)),
      'routes missing from /openapi.json',
    ).toEqual([]);
    expect(
      [...documented].filter((op) => !served.has(op)),
      'documented operations nothing serves',
    ).toEqual([]);
    for (const op of documented) if (op.startsWith('POST /v1/')) expect(relayRoute(op.slice(5)), op).toBeDefined();
  });

  it('is valid OpenAPI 3.1, with the security schemes and the error envelope', async () => {
    await expectValidDocument(doc);
    expect(Object.keys(doc.components.securitySchemes).sort()).toEqual(['admin', 'session', 'token']);
    expect(doc.components.securitySchemes.session).toMatchObject({ type: 'apiKey', in: 'cookie', name: 'kbchat_gateway_session' });
    // The relay takes a token only; log-in is open; the admin API takes the default (a session or an admin's token).
    expect(doc.paths['/v1/chat/completions']!.post.security).toEqual([{ token: [] }]);
    expect(doc.paths['/v1/models']!.get.security).toEqual([{ token: [] }]);
    expect(doc.paths['/api/auth/login']!.post.security).toEqual([]);
    expect(doc.paths['/api/users']!.post.security).toBeUndefined();
    expect(doc.paths['/v1/embeddings']!.post.responses['5XX']).toEqual({ $ref: '#/components/responses/Error' });
    expect(doc.components.schemas.Error.properties.error.required).toEqual(expect.arrayContaining(['message', 'type', 'code', 'param']));
  });

  it('takes its schemas from the routes: a body the route refuses, the document refuses', async () => {
    const validate = bodySchema(doc, 'post', '/api/users');
    expect(validate({ username: 'ana', password: 'long-enough-password' })).toBe(true);
    const refused = { username: 'ana', password: 'short' };
    expect(validate(refused)).toBe(false);
    expect(validate.errors?.[0]?.instancePath).toBe('/password');
    const answer = await t.api('/api/users', { method: 'POST', json: refused });
    expect(answer.status).toBe(400);
    expect(((await answer.json()) as { error: { message: string } }).error.message).toMatch(/^Invalid 'password': at least 8 characters/);
    // The admin schemas are strict: an unknown field is refused by both.
    expect(validate({ username: 'ana', password: 'long-enough-password', colour: 'red' })).toBe(false);
    // The relay's wire schema: messages must be a non-empty array, by the document and by the relay.
    const chat = bodySchema(doc, 'post', '/v1/chat/completions');
    expect(chat({ model: 'sim-chat', messages: [{ role: 'user', content: 'hi' }], anything_else: 1 })).toBe(true);
    expect(chat({ model: 'sim-chat', messages: [] })).toBe(false);
    const relayed = await t.api('/v1/chat/completions', { method: 'POST', json: { model: 'sim-chat', messages: [] } });
    expect(relayed.status).toBe(400);
  });

  it('still authenticates before it validates: no session is a 401 even with a bad body', async () => {
    const answer = await fetch(`${t.url}/api/users`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"password":"x"}' });
    expect(answer.status).toBe(401);
  });

  it('serves the same document to Swagger UI, and /docs needs nothing but the gateway', async () => {
    expect(await (await fetch(`${t.url}/docs/json`)).json()).toEqual(doc);
    await expectOfflineDocsPage(t.url);
  });
});
