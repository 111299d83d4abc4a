// A team's tool sources over HTTP, against real servers in the test: the MCP
// SDK's own McpServer over Streamable HTTP and over the older HTTP+SSE
// transport (both insisting on their Authorization header), and a node:http
// API described by an OpenAPI document (pasted as YAML, and fetched by URL).
// Sources are added (their tools listed at once; one that cannot be reached is
// a 4xx and not kept), listed, read, refreshed and deleted; their headers are
// stored sealed and answered as hints; tools are called through the
// ToolRunner the chat uses: a result, a tool's own error, a hang past the
// timeout, an answer too large, a result cut for the model.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stringify as toYaml } from 'yaml';
import { apiKeyRow } from '../src/keys/auth.js';
import { PlatformError } from '../src/http/errors.js';
import { SecretBox } from '../src/tools/secret-box.js';
import { RESULT_MAX_CHARS, ToolSources } from '../src/tools/service.js';
import { ToolSourcesStore } from '../src/tools/store.js';
import type { ToolSpec } from '../src/tools/runner.js';
import { startPlatformFixture, type PlatformFixture } from './platform-fixture.js';
import { API_TOKEN, apiDocument, listen, MCP_TOKEN, startApiServer, startMcpServer } from './tool-servers.js';

const KEY = 'kbchat-test-tool-sources-key-0123456789';
const OTHER_TEAM_KEY = 'kbchat-test-tool-sources-other-0123456789';
const APP_KEY = 'kbchat-test-tool-sources-app-key-0123456789';
const TIMEOUT_MS = 2000;

describe('tool sources', () => {
  let f: PlatformFixture;
  let mcp: Awaited<ReturnType<typeof startMcpServer>>;
  let api: Awaited<ReturnType<typeof startApiServer>>;
  let teamId: string;
  const ids: Record<string, string> = {};

  const call = (path: string, json?: unknown, opts: { method?: string; key?: string | null } = {}) => f.call(path, { json, ...opts });
  const create = (body: Record<string, unknown>) => call('/api/core/tool/source/create', body);
  const detail = async (id: string) => {
    const r = await call(`/api/core/tool/source/detail?id=${id}`);
    expect(r.status, r.text).toBe(200);
    return r.body.data;
  };
  const tool = async (sourceId: string, name: string): Promise<ToolSpec> => {
    const { tools, missing } = await f.p.services.tools.resolve(teamId, [{ sourceId, name }]);
    expect(missing).toEqual([]);
    return tools[0]!;
  };
  const run = async (sourceId: string, name: string, args: unknown = {}) => f.p.services.tools.call(teamId, await tool(sourceId, name), args);

  beforeAll(async () => {
    [mcp, api] = await Promise.all([startMcpServer(), startApiServer()]);
    f = await startPlatformFixture({
      key: KEY,
      models: ['sim-chat'],
      config: { llmModels: [{ model: 'sim-chat' }], vectorModels: [] },
      overrides: { toolAllowPrivate: true, toolTimeoutMs: TIMEOUT_MS },
    });
    teamId = f.p.services.rootTeamId;
    await f.p.services.keys.insertTeam('othertoolsourcesteam0000', 'other');
    await f.p.services.keys.insertKey(apiKeyRow(OTHER_TEAM_KEY, { teamId: 'othertoolsourcesteam0000', appId: null, name: 'other', expiresAt: null }));
    const appId = (await call('/api/core/app/create', { name: 'Pets', model: 'sim-chat' })).body.data;
    await f.p.services.keys.insertKey(apiKeyRow(APP_KEY, { teamId, appId, name: 'app', expiresAt: null }));
  }, 60_000);
  afterAll(async () => {
    await f?.close();
    await Promise.all([mcp?.close(), api?.close()]);
  });

  it('adds an MCP server over Streamable HTTP, listing its tools, with its Authorization kept sealed and shown as a hint', async () => {
    const r = await create({ type: 'mcp', name: 'Weather', url: `${mcp.url}/mcp`, headers: { Authorization: `Bearer ${MCP_TOKEN}` } });
    expect(r.status, r.text).toBe(200);
    ids.mcp = r.body.data;
    const d = await detail(ids.mcp);
    expect(d).toMatchObject({ type: 'mcp', name: 'Weather', url: `${mcp.url}/mcp`, transport: 'streamableHttp', toolCount: 3 });
    expect(d.headers).toEqual([{ name: 'Authorization', hint: 'Bearer …wxyz' }]);
    const forecast = d.tools.find((t: any) => t.name === 'forecast');
    expect(forecast.description).toBe("Tomorrow's weather in a city");
    expect(forecast.inputSchema).toMatchObject({ type: 'object', properties: { city: { type: 'string' } }, required: ['city'] });
    // Never whole: not in the answers, not in the store.
    const list = await call('/api/core/tool/source/list');
    expect(list.text).not.toContain(MCP_TOKEN);
    expect(JSON.stringify(d)).not.toContain(MCP_TOKEN);
    const row = await f.p.services.store.db.selectFrom('tool_sources').selectAll().where('id', '=', ids.mcp).executeTakeFirstOrThrow();
    expect(row.headers_sealed).toMatch(/^v1:/);
    expect(JSON.stringify(row)).not.toContain(MCP_TOKEN.slice(0, 12));
  });

  it('calls an MCP tool with its arguments through the ToolRunner', async () => {
    const r = await run(ids.mcp!, 'forecast', { city: 'Paris' });
    expect(r).toMatchObject({ ok: true, text: 'Sunny in Paris, 21 °C' });
    expect(r.error).toBeUndefined();
    expect(r.ms).toBeGreaterThanOrEqual(0);
    // Arguments as the model's JSON text are read too.
    expect((await run(ids.mcp!, 'forecast', '{"city":"Oslo"}')).text).toBe('Sunny in Oslo, 21 °C');
  });

  it('falls back to the older HTTP+SSE transport when the server does not speak Streamable HTTP, and calls over it', async () => {
    const r = await create({ type: 'mcp', name: 'Weather (SSE)', url: `${mcp.url}/sse`, headers: { Authorization: `Bearer ${MCP_TOKEN}` } });
    expect(r.status, r.text).toBe(200);
    ids.sse = r.body.data;
    expect(await detail(ids.sse)).toMatchObject({ transport: 'sse', toolCount: 3 });
    expect(await run(ids.sse, 'forecast', { city: 'Rome' })).toMatchObject({ ok: true, text: 'Sunny in Rome, 21 °C' });
    expect(await run(ids.sse, 'broken')).toMatchObject({ ok: false, error: expect.stringContaining('the weather station is offline') });
  });

  it('refuses a server that refuses the headers, or cannot be reached, with a 4xx that says why, and keeps nothing', async () => {
    const before = (await call('/api/core/tool/source/list')).body.data.length;
    const refused = await create({ type: 'mcp', name: 'No key', url: `${mcp.url}/mcp` });
    expect(refused.status).toBe(422);
    expect(refused.body.statusText).toBe('tool_source_unreachable');
    expect(refused.body.message).toMatch(/HTTP 401.*check the headers/);
    const wrong = await create({ type: 'mcp', name: 'Wrong key', url: `${mcp.url}/mcp`, headers: { Authorization: 'Bearer nope' } });
    expect(wrong.status).toBe(422);
    // A port nothing listens on.
    const gone = await listen(() => {});
    await gone.close();
    const closed = await create({ type: 'mcp', name: 'Gone', url: `${gone.url}/mcp` });
    expect(closed.status).toBe(422);
    expect(closed.body.message).toContain(`${gone.url}/mcp`);
    expect(closed.body.message).toMatch(/ECONNREFUSED/);
    expect((await call('/api/core/tool/source/list')).body.data.length).toBe(before);
  });

  it("gives a failing MCP tool and a hanging one as ok: false with the reason, and throws only when the caller's signal aborts", async () => {
    const broken = await run(ids.mcp!, 'broken');
    expect(broken.ok).toBe(false);
    expect(broken.error).toContain('the weather station is offline');
    expect(broken.text).toContain('The tool broken failed');
    const hang = await run(ids.mcp!, 'hang');
    expect(hang).toMatchObject({ ok: false, error: 'no answer within 2 s' });
    expect(hang.ms).toBeGreaterThanOrEqual(TIMEOUT_MS - 50);
    expect(hang.ms).toBeLessThan(TIMEOUT_MS + 3000);
    const stop = new AbortController();
    setTimeout(() => stop.abort(new Error('the chat was stopped')), 200);
    await expect(f.p.services.tools.call(teamId, await tool(ids.mcp!, 'hang'), {}, stop.signal)).rejects.toThrow('the chat was stopped');
  });

  it('adds an OpenAPI document pasted as YAML: each operation a tool, its parameters and body the input schema', async () => {
    const r = await create({ type: 'openapi', name: 'Pets', document: toYaml(apiDocument(api.url)), headers: { Authorization: `Bearer ${API_TOKEN}` } });
    expect(r.status, r.text).toBe(200);
    ids.pasted = r.body.data;
    const d = await detail(ids.pasted);
    expect(d).toMatchObject({ type: 'openapi', baseUrl: `${api.url}/v1`, headers: [{ name: 'Authorization', hint: 'Bearer …abcd' }] });
    expect(d.tools.map((t: any) => t.name)).toEqual(['getPet', 'post_pets', 'failing', 'slow', 'big', 'long']);
    expect(d.tools[0].inputSchema).toEqual({
      type: 'object',
      properties: {
        petId: { type: 'string', description: "The pet's id" },
        verbose: { type: 'boolean' },
        'X-Trace': { type: 'string' },
      },
      required: ['petId'],
    });
    // The body's schema inlined, its reference to itself left open.
    expect(d.tools[1].inputSchema).toEqual({
      type: 'object',
      properties: { body: { type: 'object', required: ['name'], properties: { name: { type: 'string' }, parent: {} }, description: 'The JSON body' } },
      required: ['body'],
    });
  });

  it('calls OpenAPI operations with their path, query, header and body arguments and the source headers', async () => {
    const got = await run(ids.pasted!, 'getPet', { petId: 'a/7', verbose: true, 'X-Trace': 't-1' });
    expect(got.ok).toBe(true);
    expect(JSON.parse(got.text)).toEqual({ id: 'a/7', name: 'Rex', verbose: 'true', trace: 't-1' });
    const made = await run(ids.pasted!, 'post_pets', { body: { name: 'Tom' } });
    expect(made).toMatchObject({ ok: true, text: '{"made":{"name":"Tom"}}' });
    expect(await run(ids.pasted!, 'getPet', {})).toMatchObject({ ok: false, error: "the argument 'petId' (path) is required" });
    // '..' would move the call within the API's host, with its credentials: refused.
    expect(await run(ids.pasted!, 'getPet', { petId: '..' })).toMatchObject({ ok: false, error: "the argument 'petId' (path) cannot be '..'" });
  });

  it('gives up on an SSE server that opens its stream and never names its endpoint, and never shows a key put in the URL', async () => {
    const stalled = await listen((req, res) => {
      // Not Streamable HTTP (a 404 to the POST): the client falls back to SSE, whose stream then says nothing.
      if (req.method === 'POST') return void res.writeHead(404).end();
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write(': hello\n\n');
    });
    try {
      const started = Date.now();
      const r = await create({ type: 'mcp', name: 'Stalled', url: `${stalled.url}/sse?key=stalled-secret-123` });
      expect(r.status, r.text).toBe(422);
      expect(Date.now() - started).toBeLessThan(2 * TIMEOUT_MS + 3000);
      expect(r.text).toContain('did not answer within');
      expect(r.text).not.toContain('stalled-secret-123');
    } finally {
      await stalled.close();
    }
    const keyed = await create({ type: 'mcp', name: 'Keyed', url: `${mcp.url}/mcp?key=url-secret-456`, headers: { Authorization: `Bearer ${MCP_TOKEN}` } });
    expect(keyed.status, keyed.text).toBe(200);
    const shown = await detail(keyed.body.data);
    expect(shown.url).toBe(`${mcp.url}/mcp?…`);
    expect(JSON.stringify((await call('/api/core/tool/source/list')).body)).not.toContain('url-secret-456');
    expect(await run(keyed.body.data, 'forecast', { city: 'Paris' })).toMatchObject({ ok: true });
    expect((await call(`/api/core/tool/source/delete?id=${keyed.body.data}`, undefined, { method: 'DELETE' })).status).toBe(200);
  });

  it('gives an operation that fails, hangs or answers too much as ok: false, and cuts a long result for the model, saying so', async () => {
    const failing = await run(ids.pasted!, 'failing');
    expect(failing).toMatchObject({ ok: false, error: 'HTTP 500' });
    expect(failing.text).toContain('database down');
    const slow = await run(ids.pasted!, 'slow');
    expect(slow).toMatchObject({ ok: false, error: 'no answer within 2 s' });
    const big = await run(ids.pasted!, 'big');
    expect(big.ok).toBe(false);
    expect(big.error).toMatch(/more than 1000000 bytes/);
    const long = await run(ids.pasted!, 'long');
    expect(long.ok).toBe(true);
    expect(long.text.startsWith('y'.repeat(RESULT_MAX_CHARS))).toBe(true);
    expect(long.text).toContain(`[The result was cut: it has ${RESULT_MAX_CHARS + 500} characters, the first ${RESULT_MAX_CHARS} are shown.]`);
  });

  it('adds an OpenAPI document by URL, and a refresh lists what changed since', async () => {
    const r = await create({ type: 'openapi', name: 'Pets by URL', url: `${api.url}/openapi.json`, headers: { Authorization: `Bearer ${API_TOKEN}` } });
    expect(r.status, r.text).toBe(200);
    ids.byUrl = r.body.data;
    const first = await detail(ids.byUrl);
    expect(first.toolCount).toBe(6);
    expect(await run(ids.byUrl, 'getPet', { petId: '3' })).toMatchObject({ ok: true });
    api.addExtra();
    mcp.addExtra();
    const refreshed = await call('/api/core/tool/source/refresh', { id: ids.byUrl });
    expect(refreshed.status, refreshed.text).toBe(200);
    expect(refreshed.body.data.tools.map((t: any) => t.name)).toContain('extraOp');
    expect(Date.parse(refreshed.body.data.listTime)).toBeGreaterThan(Date.parse(first.listTime));
    const mcpRefreshed = await call('/api/core/tool/source/refresh', { id: ids.mcp });
    expect(mcpRefreshed.body.data).toMatchObject({ toolCount: 4, transport: 'streamableHttp' });
    expect(await run(ids.mcp!, 'extra')).toMatchObject({ ok: true, text: 'extra' });
  });

  it('refuses a document that is not OpenAPI 3, naming what is wrong', async () => {
    const swagger = await create({ type: 'openapi', name: 'Old', document: { swagger: '2.0', paths: {} }, baseUrl: api.url });
    expect(swagger.status).toBe(422);
    expect(swagger.body).toMatchObject({ statusText: 'invalid_openapi', message: expect.stringContaining('Swagger 2.0') });
    const noServer = await create({ type: 'openapi', name: 'No server', document: { ...apiDocument(api.url), servers: [] } });
    expect(noServer.status).toBe(422);
    expect(noServer.body.message).toContain("give 'baseUrl'");
  });

  it('names the field of bad input', async () => {
    const cases: [Record<string, unknown>, string][] = [
      [{ type: 'ftp', name: 'x', url: mcp.url }, 'type'],
      [{ type: 'mcp', name: 'x' }, 'url'],
      [{ type: 'mcp', name: '', url: mcp.url }, 'name'],
      [{ type: 'mcp', name: 'x', url: 'file:///etc/passwd' }, 'url'],
      [{ type: 'openapi', name: 'x' }, 'document'],
      [{ type: 'mcp', name: 'x', url: mcp.url, headers: { 'Bad Name': 'v' } }, 'headers'],
      [{ type: 'mcp', name: 'x', url: mcp.url, headers: { Authorization: 'a\r\nX-Injected: 1' } }, 'headers'],
    ];
    for (const [body, field] of cases) {
      const r = await create(body);
      expect(r.status, JSON.stringify(body)).toBe(400);
      expect(r.body.message, JSON.stringify(body)).toMatch(new RegExp(`^Invalid '${field}`));
    }
    expect((await call('/api/core/tool/source/detail')).body.message).toMatch(/^Invalid 'id'/);
  });

  it("keeps each team's sources its own: another team's is a 404, and an application key is refused", async () => {
    const other = { key: OTHER_TEAM_KEY };
    expect((await f.call('/api/core/tool/source/list', other)).body.data).toEqual([]);
    expect((await f.call(`/api/core/tool/source/detail?id=${ids.mcp}`, other)).status).toBe(404);
    expect((await f.call('/api/core/tool/source/refresh', { ...other, json: { id: ids.mcp } })).status).toBe(404);
    expect((await f.call(`/api/core/tool/source/delete?id=${ids.mcp}`, { ...other, method: 'DELETE' })).status).toBe(404);
    const { tools, missing } = await f.p.services.tools.resolve('othertoolsourcesteam0000', [{ sourceId: ids.mcp!, name: 'forecast' }]);
    expect(tools).toEqual([]);
    expect(missing).toEqual([`${ids.mcp}/forecast`]);
    const app = await f.call('/api/core/tool/source/list', { key: APP_KEY });
    expect(app.status).toBe(403);
    expect(app.body.statusText).toBe('app_key_not_allowed');
    expect((await f.call('/api/core/tool/source/list', { key: null })).status).toBe(401);
  });

  it('resolves the tools an application names, returning those not found as missing', async () => {
    const { tools, missing } = await f.p.services.tools.resolve(teamId, [
      { sourceId: ids.mcp!, name: 'forecast' },
      { sourceId: ids.pasted!, name: 'getPet' },
      { sourceId: ids.mcp!, name: 'nope' },
      { sourceId: 'nosuchsource', name: 'forecast' },
    ]);
    expect(tools.map((t) => [t.sourceName, t.name])).toEqual([
      ['Weather', 'forecast'],
      ['Pets', 'getPet'],
    ]);
    expect(missing).toEqual([`${ids.mcp}/nope`, 'nosuchsource/forecast']);
  });

  it('refuses private addresses when TOOL_ALLOW_PRIVATE is off: an address, a name that resolves to one, and a call', async () => {
    const strict = new ToolSources(new ToolSourcesStore(f.p.services.store.db), new SecretBox('another secret'), {
      allowPrivate: false,
      timeoutMs: TIMEOUT_MS,
      // A public-looking name that resolves to loopback (DNS rebinding's first step).
      resolve: async () => [{ address: '127.0.0.1', family: 4 }],
    });
    const caller = { teamId, keyId: null, appId: null };
    for (const url of [`${mcp.url}/mcp`, 'http://169.254.169.254/latest', `http://tools.example.com:${new URL(mcp.url).port}/mcp`]) {
      const err = await strict.create(caller, { type: 'mcp', name: 'x', url }).catch((e: unknown) => e);
      expect(err, url).toBeInstanceOf(PlatformError);
      expect((err as PlatformError).status).toBe(400);
      expect((err as PlatformError).statusText).toBe('forbidden_address');
      expect((err as PlatformError).message).toContain('TOOL_ALLOW_PRIVATE=true');
    }
    const err = await strict.create(caller, { type: 'openapi', name: 'x', document: apiDocument(api.url) }).catch((e: unknown) => e);
    expect((err as PlatformError).statusText).toBe('forbidden_address');
    // A source kept while they were allowed is not called once they are not.
    const strictOpen = new ToolSources(new ToolSourcesStore(f.p.services.store.db), new SecretBox('x'), { allowPrivate: false, timeoutMs: TIMEOUT_MS });
    const noHeaders = await create({ type: 'openapi', name: 'Open pets', document: apiDocument(api.url) });
    const call = await strictOpen.call(teamId, { ...(await tool(noHeaders.body.data, 'getPet')) }, { petId: '1' });
    expect(call).toMatchObject({ ok: false, error: expect.stringContaining('TOOL_ALLOW_PRIVATE=true') });
  });

  it('deletes a source: gone from the list, its detail a 404, its tools missing', async () => {
    const r = await call(`/api/core/tool/source/delete?id=${ids.sse}`, undefined, { method: 'DELETE' });
    expect(r.status, r.text).toBe(200);
    expect((await call(`/api/core/tool/source/detail?id=${ids.sse}`)).status).toBe(404);
    expect((await call('/api/core/tool/source/list')).body.data.map((s: any) => s.id)).not.toContain(ids.sse);
    expect((await f.p.services.tools.resolve(teamId, [{ sourceId: ids.sse!, name: 'forecast' }])).missing).toEqual([`${ids.sse}/forecast`]);
    expect((await call(`/api/core/tool/source/delete?id=${ids.sse}`, undefined, { method: 'DELETE' })).status).toBe(404);
  });
});
