// What the chat does with input that is too large, end to end through a real
// gateway and the upstream simulator: a body over the chat's limit is a 413
// naming it; a question the answering model cannot read is refused before any
// model call; a long question that it can read is cut for the search and the
// helper steps (each record says how much was sent), never sent whole to be
// refused; a failed call's logged body is capped. And GET /api/v1/models lists
// the application for OpenAI clients.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROOT_TOKEN, startTestGateway, type TestGateway } from '../../gateway/test/helpers.js';
import { APP_KEY_REQUIRED, CHAT_BODY_LIMIT } from '../src/chat/routes.js';
import { GatewayError, LOGGED_BODY_CHARS } from '../src/gateway-client/index.js';
import { loadPlatformConfig, startPlatform, type RunningPlatform } from '../src/index.js';
import { sendLarge } from './fixtures/large-body.js';
import { apiCaller } from './api-caller.js';

const KEY = 'kbchat-test-chat-limits-key-0123456789';

describe('oversized chat input', () => {
  let gw: TestGateway;
  let p: RunningPlatform;
  let datasetId: string;
  const call = apiCaller(() => p.url, KEY);
  const makeApp = async (settings: Record<string, unknown>) => {
    const appId = (await call('/api/core/app/create', { name: 'limits', ...settings })).body.data as string;
    const key = (await call('/api/support/openapi/create', { name: 'k', appId })).body.data as string;
    return { appId, key, client: new OpenAI({ apiKey: key, baseURL: `${p.url}/api/v1`, maxRetries: 0 }) };
  };
  const chat = async (key: string, body: unknown) => {
    const res = await fetch(`${p.url}/api/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    return { status: res.status, body: (await res.json()) as any };
  };
  /** The gateway's log rows since `from` (ms), once its batched writes are in. */
  const gatewayCallsSince = async (from: number) => {
    await new Promise((r) => setTimeout(r, 150));
    return ((await (await gw.api(`/api/logs?from=${from}&limit=500`)).json()) as any).data as { model: string; prompt_tokens: number; request_id: string }[];
  };

  beforeAll(async () => {
    gw = await startTestGateway();
    const dir = mkdtempSync(join(tmpdir(), 'kbchat-chat-limits-'));
    const configPath = join(dir, 'config.json');
    writeFileSync(
      configPath,
      JSON.stringify({
        llmModels: [
          // No maxContext: 16,000 assumed.
          { model: 'sim-chat' },
          { model: 'sim-echo-prompt', maxContext: 400_000 },
          { model: 'sim-tools', toolChoice: true, maxContext: 4_000 },
          { model: 'sim-500' },
        ],
        vectorModels: [{ model: 'sim-embed-384', defaultToken: 100, maxToken: 256 }],
      }),
    );
    p = await startPlatform(
      loadPlatformConfig(
        { INITIAL_API_KEY: KEY },
        { host: '127.0.0.1', port: 0, dataDir: dir, databaseUrl: 'pglite:memory', configPath, gatewayUrl: gw.url, gatewayToken: ROOT_TOKEN },
      ),
    );
    datasetId = (await call('/api/core/dataset/create', { name: 'geo', vectorModel: 'sim-embed-384' })).body.data;
    const made = await call('/api/core/dataset/collection/create/text', {
      datasetId,
      name: 'geo.md',
      text: '# Glaciers\n\nThe Aletsch glacier is the largest glacier in the Alps.\n\n# Volcanoes\n\nMount Etna is an active volcano on Sicily.',
      chunkSize: 40,
    });
    for (const until = Date.now() + 30_000; ;) {
      const d = (await call(`/api/core/dataset/collection/trainingDetail?collectionId=${made.body.data.collectionId}`)).body.data;
      if (d.total > 0 && d.done === d.total) break;
      if (Date.now() > until) throw new Error(`indexing did not finish: ${JSON.stringify(d)}`);
      await new Promise((r) => setTimeout(r, 100));
    }
  }, 90_000);
  afterAll(async () => {
    await p?.close();
    await gw?.close();
  });

  it('refuses a chat body over its limit with a 413 that names it, and a 60 MB one before reading it', async () => {
    const { key } = await makeApp({ model: 'sim-chat' });
    // Refused on its Content-Length, before a byte of it is read.
    const over = await sendLarge(p.url, { path: '/api/v1/chat/completions', key, contentLength: CHAT_BODY_LIMIT + 1, sendBytes: 0 });
    expect(over.status).toBe(413);
    expect(JSON.parse(over.body).message).toMatch(/\b20 MB\b/);
    expect((await sendLarge(p.url, { path: '/api/v1/chat/completions', key, contentLength: 60 * 1024 * 1024, sendBytes: 0 })).status).toBe(413);
    // Chunked, the size is known only as it comes: refused at the byte past 20 MB.
    expect((await sendLarge(p.url, { path: '/api/v1/chat/completions', key, sendBytes: CHAT_BODY_LIMIT + 1 })).status).toBe(413);
  });

  it('checks the key before reading a chat body: no key, no byte read', async () => {
    // The head announces 10 MB and none of it is sent: the answer comes anyway.
    // Without a key it could only be a share link's visitor: a body that large is not read to look for the link.
    const none = await sendLarge(p.url, { path: '/api/v1/chat/completions', contentLength: 10 * 1024 * 1024, sendBytes: 0 });
    expect(none.status).toBe(413);
    expect(JSON.parse(none.body).message).toMatch(/Authorization: Bearer <app key>/);
    const general = await sendLarge(p.url, { path: '/api/v1/chat/completions', key: KEY, contentLength: 10 * 1024 * 1024, sendBytes: 0 });
    expect(general.status).toBe(403);
    expect(JSON.parse(general.body).message).toBe(APP_KEY_REQUIRED);
  });

  it('refuses a question longer than the answering model reads before any model call, with the numbers', async () => {
    const { client } = await makeApp({ model: 'sim-chat', datasets: [datasetId], search: { queryExtension: { enabled: true, model: 'sim-chat' } } });
    const from = Date.now();
    const question = 'glacier ice flows slowly down the valley '.repeat(3000); // ~21,000 tokens; sim-chat reads 14,000 of its assumed 16,000
    const err = await client.chat.completions.create({ model: 'x', messages: [{ role: 'user', content: question }] }).catch((e) => e);
    expect(err).toBeInstanceOf(OpenAI.BadRequestError);
    expect(err.code).toBe('context_length_exceeded');
    expect(err.message).toMatch(
      /sim-chat can read: at most 14000 tokens \(16000 in all, config\.json gives no maxContext for it: 16000 assumed; 2000 kept for the answer\)/,
    );
    expect(await gatewayCallsSince(from)).toEqual([]);
  });

  it('cuts a long question for the search and the helper steps, says so in each record, and answers with the whole question', async () => {
    const { key } = await makeApp({
      model: 'sim-echo-prompt',
      datasets: [datasetId],
      search: { searchMode: 'mixedRecall', queryExtension: { enabled: true, model: 'sim-chat' } },
      classify: {
        model: 'sim-tools',
        categories: [
          { id: 'glaciers', description: 'glacier questions' },
          { id: 'other', description: 'anything else' },
        ],
      },
    });
    const question = 'Where is the Aletsch glacier? ' + 'glacier ice flows slowly down the valley '.repeat(5000).trim(); // ~205,000 characters
    const from = Date.now();
    const res = await chat(key, { detail: true, messages: [{ role: 'user', content: question }] });
    expect(res.status, JSON.stringify(res.body).slice(0, 500)).toBe(200);
    const [classify, extension, search] = res.body.responseData;
    expect(classify.moduleType).toBe('classifyQuestion');
    expect(classify.inputCut).toMatchObject({ questionChars: question.length, maxContext: 4000 });
    expect(classify.inputCut.sentChars).toBeLessThan(question.length / 10);
    expect(extension.moduleType).toBe('queryExtension');
    expect(extension.inputCut).toMatchObject({ questionChars: question.length, maxContext: 16000 });
    expect(search.moduleType).toBe('datasetSearchNode');
    expect(search.questionCut).toMatchObject({ questionChars: question.length, vectorModel: 'sim-embed-384', maxToken: 256 });
    expect(search.questionCut.embeddedChars).toBeLessThan(search.questionCut.searchedChars);
    expect(search.questionCut.searchedChars).toBeLessThan(20_000);
    expect(search.note).toMatch(/sim-embed-384 embedded its first \d+ \(256 tokens, its maxToken in config\.json\)/);
    expect(search.quoteList.some((q: any) => q.q.includes('Aletsch'))).toBe(true);
    // What reached the gateway: every helper call within its model's limit (the simulator counts 1.3 tokens a word).
    const calls = await gatewayCallsSince(from);
    const maxTokens = (model: string) => Math.max(...calls.filter((c) => c.model === model).map((c) => c.prompt_tokens));
    expect(maxTokens('sim-embed-384')).toBeLessThan(256 * 1.5);
    expect(maxTokens('sim-tools')).toBeLessThan(4000 * 1.3);
    expect(maxTokens('sim-chat')).toBeLessThan(16000 * 1.3);
    // The answer read the whole question.
    expect(maxTokens('sim-echo-prompt')).toBeGreaterThan(40_000);
  }, 60_000);

  it('logs a failed call with its body capped to 16 KB, its size, and where the whole body is', async () => {
    const { appId, key } = await makeApp({ model: 'sim-500' });
    const question = 'why does the glacier move '.repeat(2000); // 52,000 characters, within sim-500's assumed context
    expect((await chat(key, { messages: [{ role: 'user', content: question }] })).status).toBe(500);
    // The same turn through the service, to see the error the route logs.
    const app = await p.services.apps.app({ keyId: 0, teamId: p.services.rootTeamId, appId: null }, appId);
    const failures: GatewayError[] = [];
    await p.services.chat
      .run(
        { keyId: 0, teamId: p.services.rootTeamId, appId },
        app,
        { question, history: [], variables: {}, stream: false, onModelFailure: (_step, e) => failures.push(e) },
        { status() {}, answer() {}, fastAnswer() {}, variables() {} },
      )
      .catch(() => {});
    const logged = failures[0]!.forLog();
    expect(failures[0]!.requestBody!.length).toBeGreaterThan(52_000);
    expect(logged.requestBodyChars).toBe(failures[0]!.requestBody!.length);
    expect(logged.requestBody!.startsWith(failures[0]!.requestBody!.slice(0, LOGGED_BODY_CHARS))).toBe(true);
    expect(logged.requestBody!.length).toBeLessThan(LOGGED_BODY_CHARS + 200);
    expect(logged.requestBody).toMatch(new RegExp(`more characters not logged; the gateway's request log keeps it under ${logged.gatewayRequestId}\\]$`));
    // And it does: the gateway's log has the whole body, to replay.
    const row = (await (await gw.api(`/api/logs/${logged.gatewayRequestId}`)).json()) as any;
    expect(row.request_body).toBe(failures[0]!.requestBody);
  });

  it('lists the application as the one model for its key (GET /api/v1/models), and that id chats with it', async () => {
    const { appId, client } = await makeApp({ model: 'sim-chat' });
    const list = await client.models.list();
    expect(list.data).toEqual([{ id: appId, object: 'model', created: expect.any(Number), owned_by: 'kbchat', name: 'limits' }]);
    expect(Math.abs(list.data[0]!.created - Date.now() / 1000)).toBeLessThan(60);
    const r = await client.chat.completions.create({ model: list.data[0]!.id, messages: [{ role: 'user', content: 'hello there' }] });
    expect(r.choices[0]!.message.content).toContain('hello there');
    // A general key opens no chat, so it lists none: the chat's own 403.
    const general = new OpenAI({ apiKey: KEY, baseURL: `${p.url}/api/v1`, maxRetries: 0 });
    const err = await general.models.list().catch((e) => e);
    expect(err).toBeInstanceOf(OpenAI.PermissionDeniedError);
    expect(err.message).toContain(APP_KEY_REQUIRED);
    expect(await new OpenAI({ apiKey: 'kbchat-nope', baseURL: `${p.url}/api/v1`, maxRetries: 0 }).models.list().catch((e) => e.status)).toBe(401);
  });
});
