// The web app chats as the signed-in user: a session stands in for the
// application key on POST /api/v1/chat/completions, for its own team's
// applications named by ?appId=, with the CSRF token; its histories read the
// same way. A general key is still refused there, as FastGPT does.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROOT_TOKEN, startTestGateway, type TestGateway } from '../../gateway/test/helpers.js';
import { loadPlatformConfig, startPlatform, type RunningPlatform } from '../src/index.js';

const KEY = 'kbchat-test-chat-session-key-0123456789';
const ROOT_PASSWORD = 'chat-session-root-password';

describe('chatting signed in', () => {
  let gw: TestGateway;
  let p: RunningPlatform;
  let cookie: string;
  let csrf: string;
  let appId: string;

  const call = async (path: string, init: { json?: unknown; csrf?: string | null; key?: string } = {}) => {
    const headers: Record<string, string> = { 'content-type': 'application/json' };
    if (init.key) headers.authorization = `Bearer ${init.key}`;
    else headers.cookie = cookie;
    const token = init.csrf === undefined ? csrf : init.csrf;
    if (token && !init.key) headers['x-csrf-token'] = token;
    const res = await fetch(`${p.url}${path}`, { method: 'POST', headers, body: JSON.stringify(init.json ?? {}) });
    return { status: res.status, type: res.headers.get('content-type') ?? '', text: await res.text() };
  };

  beforeAll(async () => {
    gw = await startTestGateway({ models: ['sim-chat'] });
    const dir = mkdtempSync(join(tmpdir(), 'kbchat-chat-session-'));
    const configPath = join(dir, 'config.json');
    writeFileSync(configPath, JSON.stringify({ llmModels: [{ model: 'sim-chat' }], vectorModels: [] }));
    p = await startPlatform(
      loadPlatformConfig(
        { INITIAL_API_KEY: KEY, ROOT_PASSWORD, CONFIG_PATH: configPath },
        { host: '127.0.0.1', port: 0, dataDir: dir, databaseUrl: 'pglite:memory', gatewayUrl: gw.url, gatewayToken: ROOT_TOKEN },
      ),
      () => {},
    );
    const login = await fetch(`${p.url}/api/auth/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ username: 'root', password: ROOT_PASSWORD }),
    });
    cookie = login.headers.getSetCookie()[0]!.split(';')[0]!;
    csrf = ((await login.json()) as any).data.csrfToken;
    const made = await call('/api/core/app/create', { json: { name: 'web helper', model: 'sim-chat', datasets: [] } });
    expect(made.status, made.text).toBe(200);
    appId = JSON.parse(made.text).data;
  }, 60_000);
  afterAll(async () => {
    await p?.close();
    await gw?.close();
  });

  it("answers the team's own application, streamed with detail, and keeps the chat in its history", async () => {
    const r = await call(`/api/v1/chat/completions?appId=${appId}`, {
      json: { chatId: 'web-1', stream: true, detail: true, messages: [{ role: 'user', content: 'hello from the browser' }] },
    });
    expect(r.status, r.text).toBe(200);
    expect(r.type).toMatch(/^text\/event-stream/);
    expect(r.text).toContain('event: answer');
    const answer = [...r.text.matchAll(/^event: answer\ndata: (.+)$/gm)]
      .map((m) => (m[1] === '[DONE]' ? '' : (JSON.parse(m[1]!).choices[0]?.delta?.content ?? '')))
      .join('');
    expect(answer).toMatch(/^Echo: hello from the browser/);
    expect(r.text).toContain('event: flowResponses'); // detail: the steps, for the web app's trace
    const plain = await call(`/api/v1/chat/completions?appId=${appId}`, { json: { messages: [{ role: 'user', content: 'and once more' }] } });
    expect(JSON.parse(plain.text).choices[0].message.content).toMatch(/^Echo: and once more/);
    const histories = await call('/api/core/chat/getHistories', { json: { appId } });
    expect(histories.status, histories.text).toBe(200);
    expect(JSON.parse(histories.text).data.list.map((h: any) => h.chatId)).toEqual(['web-1']);
  });

  it('refuses a session without the CSRF token, without ?appId=, or with an application not of its team; a general key is still refused', async () => {
    const body = { messages: [{ role: 'user', content: 'x' }] };
    const forged = await call(`/api/v1/chat/completions?appId=${appId}`, { json: body, csrf: null });
    expect(forged.status).toBe(403);
    expect(JSON.parse(forged.text).statusText ?? JSON.parse(forged.text).error?.code).toBe('csrf_failed');
    const unnamed = await call('/api/v1/chat/completions', { json: body });
    expect(unnamed.status).toBe(400);
    expect(unnamed.text).toMatch(/'appId'/);
    expect((await call('/api/v1/chat/completions?appId=not-an-app-of-ours', { json: body })).status).toBe(404);
    const general = await call(`/api/v1/chat/completions?appId=${appId}`, { json: body, key: KEY });
    expect(general.status).toBe(403);
    expect(general.text).toContain('You need to use the app key rather than the account key.');
  });
});
