// The gateway's API documents: every route Fastify serves is in
// /openapi.json with its method (but the console's pages and files, and the
// docs page's own), and so are the relay's POSTs, which the fronts answer
// before Fastify; the document is valid OpenAPI 3.1 from the routes' own zod
// schemas (a body the route refuses, the document refuses too), and /docs is
// a page that needs nothing but the gateway. Every /api route declares its
// answer, and the answers the routes really give match the document's schemas,
// whose objects are closed (no key the document does not name).
import { ICON_PATHS, pagePaths } from '@kbchat/server-kit';
import { Ajv2020 } from 'ajv/dist/2020.js';
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
import { ROOT_PASSWORD, startTestGateway, type TestGateway } from './helpers.js';

const routes = vi.hoisted((): RecordedRoute[] => []);
vi.mock('fastify', async (importOriginal) => {
  const { recordingFastify } = await import('../../server-kit/test/api-docs-checks.js');
  return recordingFastify(await importOriginal<any>(), routes);
});

/** Not API: the console's pages and hashed files, and the docs page with its files. */
const PAGES = new Set(pagePaths({ html: 'console.html', paths: CONSOLE_PAGES }));
const notApi = (url: string) => PAGES.has(url) || ICON_PATHS.includes(url) || url === '/assets/*' || url === '/docs' || url.startsWith('/docs/');

/** /api operations that answer no JSON of a declared shape, with why (none today: every /api route answers JSON). */
const UNDECLARED_ANSWERS: Record<string, string> = {};
/** The /api operations whose success is 201 Created. */
const CREATED = new Set(['POST /api/users', 'POST /api/tokens', 'POST /api/channels', 'POST /api/redemptions']);

const answerSchemaOf = (doc: OpenApiDocument, method: string, path: string, status: number) =>
  doc.paths[path]?.[method]?.responses?.[status]?.content?.['application/json']?.schema;

let t: TestGateway;
let doc: OpenApiDocument;

beforeAll(async () => {
  // sim-400 fails upstream: its body is kept, to replay.
  t = await startTestGateway({ models: ['sim-chat', 'sim-embed-384', 'sim-400'] });
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

  it('declares the answer of every /api operation: its success status, with a schema', () => {
    const api = [...operations(doc)].filter((op) => op.split(' ')[1]!.startsWith('/api/'));
    expect(api.length).toBeGreaterThan(25);
    const undeclared = api.filter((op) => {
      const [method, path] = op.split(' ') as [string, string];
      return !(op in UNDECLARED_ANSWERS) && !answerSchemaOf(doc, method.toLowerCase(), path, CREATED.has(op) ? 201 : 200);
    });
    expect(undeclared, 'operations without a declared answer').toEqual([]);
    for (const op of CREATED) expect(doc.paths[op.split(' ')[1]!]!.post.responses['200'], op).toBeUndefined();
  });

  it("describes what the routes answer, key by key: each answer matches its operation's schema", async () => {
    const ajv = new Ajv2020({ strict: false, validateFormats: false });
    const checked = new Set<string>();
    /** The answer's body, after checking it against the document (what a client generated from it would expect). */
    const documented = async <T = any>(method: string, path: string, answer: Promise<Response>, status = 200): Promise<T> => {
      const r = await answer;
      const body = await r.json();
      expect(r.status, `${method} ${path}: ${JSON.stringify(body)}`).toBe(status);
      const validate = ajv.compile(answerSchemaOf(doc, method.toLowerCase(), path, status));
      expect(validate(body), `${method} ${path}: ${ajv.errorsText(validate.errors)} in ${JSON.stringify(body)}`).toBe(true);
      checked.add(`${method} ${path}`);
      return body as T;
    };
    const login = (cookie?: boolean) => t.api('/api/auth/login', { method: 'POST', json: { username: 'root', password: ROOT_PASSWORD, cookie } });
    const { session } = await documented<{ session: string }>('POST', '/api/auth/login', login());
    await documented('POST', '/api/auth/login', login(true));
    await documented('GET', '/api/auth/me', t.api('/api/auth/me'));
    await documented('POST', '/api/auth/logout', t.api('/api/auth/logout', { method: 'POST', token: session }));

    const user = await documented<{ id: number }>(
      'POST',
      '/api/users',
      t.api('/api/users', { method: 'POST', json: { username: 'doc-user', password: 'long-enough-password', balance: 2 } }),
      201,
    );
    await documented('GET', '/api/users', t.api('/api/users'));
    await documented('GET', '/api/users/{id}', t.api(`/api/users/${user.id}`));
    await documented('PATCH', '/api/users/{id}', t.api(`/api/users/${user.id}`, { method: 'PATCH', json: { balance_delta: 1 } }));
    const created = await documented<{ token: { id: number } }>(
      'POST',
      '/api/tokens',
      t.api('/api/tokens', { method: 'POST', json: { user_id: user.id, name: 'doc', quota_limit: 1, models: ['sim-chat'] } }),
      201,
    );
    await documented('GET', '/api/tokens', t.api('/api/tokens'));
    await documented('PATCH', '/api/tokens/{id}', t.api(`/api/tokens/${created.token.id}`, { method: 'PATCH', json: { ip_allow: '127.0.0.1' } }));
    await documented('GET', '/api/tokens/{id}', t.api(`/api/tokens/${created.token.id}`));

    const channels = await documented<{ data: { id: number }[] }>('GET', '/api/channels', t.api('/api/channels'));
    await documented('GET', '/api/channels', t.api('/api/channels?limit=1'));
    await documented('GET', '/api/channels/providers', t.api('/api/channels/providers'));
    const sim = channels.data[0]!.id;
    await documented('POST', '/api/channels/{id}/test', t.api(`/api/channels/${sim}/test`, { method: 'POST', json: { model: 'sim-chat' } }));
    await documented('GET', '/api/channels/{id}', t.api(`/api/channels/${sim}`));
    await documented('POST', '/api/channels/{id}/enable-models', t.api(`/api/channels/${sim}/enable-models`, { method: 'POST', json: {} }));
    const extra = await documented<{ id: number }>(
      'POST',
      '/api/channels',
      t.api('/api/channels', {
        method: 'POST',
        json: { type: 'openai', base_url: t.baseURL, key: 'k', models: ['x'], options: { streamUsage: false, note: 'kept' } },
      }),
      201,
    );
    await documented('PATCH', '/api/channels/{id}', t.api(`/api/channels/${extra.id}`, { method: 'PATCH', json: { status: 'disabled' } }));
    await documented(
      'PATCH',
      '/api/channels/{id}',
      t.api(`/api/channels/${extra.id}`, { method: 'PATCH', json: { key: 'k1\nk2', options: { keyStrategy: 'random' } } }),
    );
    await documented('POST', '/api/channels/{id}/keys/{index}/enable', t.api(`/api/channels/${extra.id}/keys/1/enable`, { method: 'POST' }));
    await documented('POST', '/api/channels/retest-disabled', t.api('/api/channels/retest-disabled', { method: 'POST' }));

    await documented('PUT', '/api/prices/{*}', t.api('/api/prices/sim-chat', { method: 'PUT', json: { model_ratio: 1 } }));
    await documented('GET', '/api/prices/{*}', t.api('/api/prices/sim-chat'));
    const chat = await t.api('/v1/chat/completions', { method: 'POST', json: { model: 'sim-chat', messages: [{ role: 'user', content: 'hi' }] } });
    expect(chat.status).toBe(200);
    const requestId = chat.headers.get('x-request-id')!;
    await documented('GET', '/api/prices', t.api('/api/prices'));
    await documented('DELETE', '/api/prices/{*}', t.api('/api/prices/sim-chat', { method: 'DELETE' }));
    await documented('GET', '/api/logs', t.api('/api/logs'));
    await documented('GET', '/api/logs/{requestId}', t.api(`/api/logs/${requestId}`));
    const failed = await t.api('/v1/chat/completions', { method: 'POST', json: { model: 'sim-400', messages: [{ role: 'user', content: 'hi' }] } });
    expect(failed.status).toBe(400);
    const failedId = failed.headers.get('x-request-id')!;
    await documented('GET', '/api/logs/{requestId}', t.api(`/api/logs/${failedId}`));
    await documented('POST', '/api/logs/{requestId}/replay', t.api(`/api/logs/${failedId}/replay`, { method: 'POST' }));
    await documented('POST', '/api/channels/test-all', t.api('/api/channels/test-all', { method: 'POST', json: {} }));
    const dashboard = await documented<{ disabled: { channels: unknown[] } }>('GET', '/api/dashboard', t.api('/api/dashboard?group_by=model'));
    expect(dashboard.disabled.channels).toHaveLength(1);
    const codes = await documented<{ keys: string[]; data: { id: number }[] }>(
      'POST',
      '/api/redemptions',
      t.api('/api/redemptions', { method: 'POST', json: { name: 'doc', quota: 1, count: 2 } }),
      201,
    );
    await documented('GET', '/api/redemptions', t.api('/api/redemptions'));
    await documented('PATCH', '/api/redemptions/{id}', t.api(`/api/redemptions/${codes.data[1]!.id}`, { method: 'PATCH', json: { status: 'disabled' } }));
    await documented('POST', '/api/user/topup', t.api('/api/user/topup', { method: 'POST', json: { key: codes.keys[0] } }));
    await documented('DELETE', '/api/redemptions/{id}', t.api(`/api/redemptions/${codes.data[1]!.id}`, { method: 'DELETE' }));
    await documented('PUT', '/api/fallbacks/{*}', t.api('/api/fallbacks/sim-chat', { method: 'PUT', json: { fallbacks: ['sim-embed-384'] } }));
    await documented('GET', '/api/fallbacks', t.api('/api/fallbacks'));
    await documented('DELETE', '/api/fallbacks/{*}', t.api('/api/fallbacks/sim-chat', { method: 'DELETE' }));
    await documented('PUT', '/api/rate-limits/{scope}/{*}', t.api('/api/rate-limits/model/sim-chat', { method: 'PUT', json: { rpm: 1000, tpm: 100000 } }));
    await documented('GET', '/api/rate-limits', t.api('/api/rate-limits'));
    await documented('DELETE', '/api/rate-limits/{scope}/{*}', t.api('/api/rate-limits/model/sim-chat', { method: 'DELETE' }));
    await documented('PUT', '/api/groups/{name}', t.api('/api/groups/doc-half', { method: 'PUT', json: { ratio: 0.5, description: 'Half price' } }));
    await documented('GET', '/api/groups', t.api('/api/groups'));
    await documented('GET', '/api/groups/{name}', t.api('/api/groups/doc-half'));
    await documented('DELETE', '/api/groups/{name}', t.api('/api/groups/doc-half', { method: 'DELETE' }));
    await documented('DELETE', '/api/channels/{id}', t.api(`/api/channels/${extra.id}`, { method: 'DELETE' }));
    await documented('DELETE', '/api/tokens/{id}', t.api(`/api/tokens/${created.token.id}`, { method: 'DELETE' }));
    await documented('DELETE', '/api/users/{id}', t.api(`/api/users/${user.id}`, { method: 'DELETE' }));
    expect([...operations(doc)].filter((op) => op.includes(' /api/') && !checked.has(op))).toEqual([]);
  });

  it('serves the same document to Swagger UI, and /docs needs nothing but the gateway', async () => {
    expect(await (await fetch(`${t.url}/docs/json`)).json()).toEqual(doc);
    await expectOfflineDocsPage(t.url);
  });
});
