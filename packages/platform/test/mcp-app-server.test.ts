// The application as an MCP server (POST /api/mcp/app/:appId), end to end:
// the official SDK's client, unchanged, against a real platform in front of a
// real gateway and the upstream simulator. It lists `ask` (and `search` where
// the application has a knowledge base), asks and gets the simulator's answer
// with the quotes it was given, searches, stores a turn with chatId, turns a
// failing model into a tool error with the request id, and is refused in the
// platform's envelope to no key, a general key and another application's key.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { apiKeyRow } from '../src/keys/auth.js';
import { startPlatformFixture, type PlatformFixture } from './platform-fixture.js';

const KEY = 'kbchat-test-mcp-app-server-key-0123456789';
const OTHER_TEAM_KEY = 'kbchat-test-mcp-app-server-other-0123456789';
const TEXT =
  '# Volcanoes\n\nMount Etna is an active volcano on the east coast of Sicily.\n\n# Glaciers\n\nThe Aletsch glacier is the largest glacier in the Alps.';

type Tool = { name: string; inputSchema: { properties?: Record<string, unknown>; required?: string[] }; outputSchema?: unknown };
type ToolResult = { content: { type: string; text?: string }[]; structuredContent?: any; isError?: boolean };

describe('the application as an MCP server', () => {
  let f: PlatformFixture;
  const apps: Record<'kb' | 'plain' | 'broken' | 'otherTeam', { id: string; key: string }> = {} as never;
  const clients: Client[] = [];

  const call = (path: string, json?: unknown, opts: { method?: string; key?: string | null } = {}) => f.call(path, { json, ...opts });
  const makeApp = async (settings: Record<string, unknown>, key = KEY) => {
    const made = await call('/api/core/app/create', settings, { key });
    expect(made.status, made.text).toBe(200);
    const id = made.body.data as string;
    return { id, key: (await call('/api/support/openapi/create', { name: 'mcp key', appId: id }, { key })).body.data as string };
  };
  const url = (appId: string) => new URL(`${f.p.url}/api/mcp/app/${appId}`);
  /** The SDK's client as any MCP host uses it: only the URL and the Authorization header are kbchat's. */
  const connect = async (appId: string, key: string) => {
    const client = new Client({ name: 'kbchat-test', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(url(appId), { requestInit: { headers: { Authorization: `Bearer ${key}` } } }));
    clients.push(client);
    return client;
  };
  const tools = async (client: Client) => (await client.listTools()).tools as Tool[];
  const callTool = async (client: Client, name: string, args: Record<string, unknown>) => (await client.callTool({ name, arguments: args })) as ToolResult;
  /** A raw POST of one JSON-RPC message, as the transport sends it. */
  const post = (appId: string, key: string | null, message: unknown = initialize) =>
    fetch(url(appId), {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        ...(key ? { authorization: `Bearer ${key}` } : {}),
      },
      body: JSON.stringify(message),
    });
  const initialize = {
    jsonrpc: '2.0',
    id: 1,
    method: 'initialize',
    params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
  };

  beforeAll(async () => {
    f = await startPlatformFixture({
      key: KEY,
      models: ['sim-echo-prompt', 'sim-500', 'sim-embed-384'],
      config: { llmModels: [{ model: 'sim-echo-prompt' }, { model: 'sim-500' }], vectorModels: [{ model: 'sim-embed-384' }] },
    });
    const datasetId = (await call('/api/core/dataset/create', { name: 'geo', vectorModel: 'sim-embed-384' })).body.data as string;
    const made = await call('/api/core/dataset/collection/create/text', { datasetId, name: 'geo.md', text: TEXT, chunkSize: 40 });
    expect(made.status, made.text).toBe(200);
    const until = Date.now() + 30_000;
    for (;;) {
      const d = (await call(`/api/core/dataset/collection/trainingDetail?collectionId=${made.body.data.collectionId}`)).body.data;
      if (d.total > 0 && d.done === d.total) break;
      if (d.failed > 0 || Date.now() > until) throw new Error(`indexing did not finish: ${JSON.stringify(d)}`);
      await new Promise((r) => setTimeout(r, 100));
    }
    apps.kb = await makeApp({ name: 'Geography', intro: 'Answers about volcanoes and glaciers.', model: 'sim-echo-prompt', datasets: [datasetId] });
    apps.plain = await makeApp({ name: 'Plain', model: 'sim-echo-prompt' });
    apps.broken = await makeApp({ name: 'Broken', model: 'sim-500' });
    // Another team, with its own application and key.
    await f.p.services.keys.insertTeam('othermcpteam000000000000', 'other');
    await f.p.services.keys.insertKey(apiKeyRow(OTHER_TEAM_KEY, { teamId: 'othermcpteam000000000000', appId: null, name: 'other', expiresAt: null }));
    apps.otherTeam = await makeApp({ name: 'Theirs', model: 'sim-echo-prompt' }, OTHER_TEAM_KEY);
  }, 90_000);
  afterAll(async () => {
    for (const c of clients) await c.close();
    await f?.close();
  });

  it('lists ask and search for an application with a knowledge base, and only ask without one', async () => {
    const client = await connect(apps.kb.id, apps.kb.key);
    expect(client.getServerVersion()).toMatchObject({ name: 'kbchat', title: 'Geography' });
    expect(client.getInstructions()).toBe('Answers about volcanoes and glaciers.');
    const listed = await tools(client);
    expect(listed.map((t) => t.name).sort()).toEqual(['ask', 'search']);
    const ask = listed.find((t) => t.name === 'ask')!;
    expect(Object.keys(ask.inputSchema.properties ?? {}).sort()).toEqual(['chatId', 'question']);
    expect(ask.inputSchema.required).toEqual(['question']);
    expect(ask.outputSchema).toBeDefined();
    expect(listed.find((t) => t.name === 'search')!.inputSchema.required).toEqual(['query']);

    const plain = await connect(apps.plain.id, apps.plain.key);
    expect((await tools(plain)).map((t) => t.name)).toEqual(['ask']);
    const missing = await callTool(plain, 'search', { query: 'Etna' });
    expect(missing.isError).toBe(true);
    expect(missing.content[0]!.text).toMatch(/search not found/);
  });

  it('asks: the answer of the application (its model given the quotes), with the quotes as citations', async () => {
    const client = await connect(apps.kb.id, apps.kb.key);
    const r = await callTool(client, 'ask', { question: 'Which volcano is on Sicily?' });
    expect(r.isError).toBeFalsy();
    // sim-echo-prompt repeats its prompt: the question and the quote reached the model.
    const answer = r.content[0]!.text!;
    expect(answer).toContain('Question: Which volcano is on Sicily?');
    expect(answer).toContain('Mount Etna is an active volcano');
    expect(r.structuredContent.answer).toBe(answer);
    expect(r.structuredContent.requestId).toMatch(/\S/);
    expect(r.structuredContent.chatId).toBeUndefined();
    const citations = r.structuredContent.citations as { sourceName: string; text: string; id: string }[];
    expect(citations.length).toBeGreaterThan(0);
    expect(citations.every((c) => c.sourceName === 'geo.md')).toBe(true);
    expect(citations.some((c) => c.text.includes('Mount Etna is an active volcano'))).toBe(true);
    // The same citations as text, for a client or model that reads content only.
    expect(r.content[1]!.text).toMatch(/^Sources:\n\[1\] geo\.md: /);
    // Not stored without a chatId.
    expect((await call('/api/core/chat/getHistories', { appId: apps.kb.id })).body.data.total).toBe(0);
  });

  it('searches the knowledge base with the application settings: the quotes, with their scores', async () => {
    const client = await connect(apps.kb.id, apps.kb.key);
    const r = await callTool(client, 'search', { query: 'Mount Etna volcano Sicily' });
    expect(r.isError).toBeFalsy();
    const quotes = r.structuredContent.quotes as { sourceName: string; text: string; score: { type: string; value: number }[] }[];
    expect(quotes[0]).toMatchObject({ sourceName: 'geo.md' });
    expect(quotes[0]!.text).toContain('Mount Etna');
    expect(quotes[0]!.score.length).toBeGreaterThan(0);
    expect(r.content[0]!.text).toContain('Mount Etna');
  });

  it('stores the turn in the chat a chatId names, whose earlier turns are the history', async () => {
    const client = await connect(apps.plain.id, apps.plain.key);
    const first = await callTool(client, 'ask', { question: 'My name is Ada.', chatId: 'mcp-chat-1' });
    expect(first.structuredContent).toMatchObject({ chatId: 'mcp-chat-1', citations: [] });
    const second = await callTool(client, 'ask', { question: 'What is my name?', chatId: 'mcp-chat-1' });
    // The stored first turn is in the second prompt.
    expect(second.content[0]!.text).toContain('My name is Ada.');
    const records = (await call('/api/core/chat/getPaginationRecords', { appId: apps.plain.id, chatId: 'mcp-chat-1' })).body.data;
    expect(records.total).toBe(4);
    expect(records.list.map((i: any) => i.obj)).toEqual(['Human', 'AI', 'Human', 'AI']);
    expect(records.list[2].value[0].text.content).toBe('What is my name?');
    expect(records.list[3].value[0].text.content).toBe(second.content[0]!.text);
    // Made with the application's key: the chat log says 'api'.
    const histories = (await call('/api/core/chat/getHistories', { appId: apps.plain.id, source: 'api' })).body.data;
    expect(histories.list.map((c: any) => c.chatId)).toEqual(['mcp-chat-1']);
  });

  it('turns a failing model into a tool error with the request id, and records it on a stored turn', async () => {
    const client = await connect(apps.broken.id, apps.broken.key);
    const r = await callTool(client, 'ask', { question: 'hi', chatId: 'mcp-broken' });
    expect(r.isError).toBe(true);
    expect(r.structuredContent).toBeUndefined();
    const text = r.content[0]!.text!;
    const requestId = /request id ([\w-]+)\)$/.exec(text)?.[1];
    expect(requestId, text).toBeDefined();
    // The gateway's call carries the platform's request id (<id>-<n>), and its message says so.
    expect(text).toContain(`${requestId}-`);
    const logs = await f.gatewayLogs(Date.now() - 60_000);
    expect(logs.some((l) => l.model === 'sim-500' && l.request_id.startsWith(`${requestId}-`))).toBe(true);
    const records = (await call('/api/core/chat/getPaginationRecords', { appId: apps.broken.id, chatId: 'mcp-broken' })).body.data;
    expect(records.list.map((i: any) => i.obj)).toEqual(['Human', 'AI']);
    expect(JSON.stringify(records.list[1])).toContain(requestId);
  });

  it('refuses bad arguments as a tool error naming the field', async () => {
    const client = await connect(apps.plain.id, apps.plain.key);
    const empty = await callTool(client, 'ask', { question: '   ' });
    expect(empty.isError).toBe(true);
    expect(empty.content[0]!.text).toMatch(/question/);
    const long = await callTool(client, 'ask', { question: 'hi', chatId: 'x'.repeat(65) });
    expect(long.isError).toBe(true);
    expect(long.content[0]!.text).toMatch(/chatId/);
  });

  it('refuses no key, a general key, another application key and an unknown application, before any MCP', async () => {
    const refused = async (appId: string, key: string | null, status: number, statusText: string) => {
      const r = await post(appId, key);
      const body = (await r.json()) as { code: number; statusText: string; message: string };
      expect({ status: r.status, statusText: body.statusText }).toEqual({ status, statusText });
      expect(body.code).toBe(status);
      expect(r.headers.get('x-request-id')).toMatch(/\S/);
      return body.message;
    };
    await refused(apps.kb.id, null, 401, 'unauthorized');
    await refused(apps.kb.id, 'kbchat-not-a-key', 401, 'unauthorized');
    expect(await refused(apps.kb.id, KEY, 403, 'app_key_required')).toMatch(/general key/);
    expect(await refused(apps.kb.id, apps.plain.key, 403, 'wrong_app_key')).toMatch(/another application/);
    // Another team's application key: this team's application is not found for it.
    await refused(apps.kb.id, apps.otherTeam.key, 404, 'not_found');
    await refused('no-such-app', apps.kb.key, 404, 'not_found');
    // The SDK's client sees the same refusal.
    const client = new Client({ name: 'kbchat-test', version: '1.0.0' });
    const transport = new StreamableHTTPClientTransport(url(apps.kb.id), { requestInit: { headers: { Authorization: `Bearer ${KEY}` } } });
    await expect(client.connect(transport)).rejects.toThrow(/403/);
  });

  it('answers its own key as JSON with the request id, and GET and DELETE with 405 (stateless)', async () => {
    const r = await post(apps.kb.id, apps.kb.key);
    expect(r.status).toBe(200);
    expect(r.headers.get('content-type')).toMatch(/application\/json/);
    expect(r.headers.get('x-request-id')).toMatch(/\S/);
    expect(r.headers.get('mcp-session-id')).toBeNull();
    expect(((await r.json()) as any).result.serverInfo).toMatchObject({ name: 'kbchat', title: 'Geography' });
    // A notification is accepted without an answer.
    expect((await post(apps.kb.id, apps.kb.key, { jsonrpc: '2.0', method: 'notifications/initialized' })).status).toBe(202);
    for (const method of ['GET', 'DELETE']) {
      const res = await fetch(url(apps.kb.id), { method, headers: { authorization: `Bearer ${apps.kb.key}`, accept: 'text/event-stream' } });
      expect(res.status).toBe(405);
      expect(res.headers.get('allow')).toBe('POST');
      expect(((await res.json()) as any).statusText).toBe('method_not_allowed');
    }
  });
});
