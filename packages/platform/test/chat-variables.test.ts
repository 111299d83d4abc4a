// A chat keeps its variables (FastGPT's chat.variables): the first turn's are
// stored with the chat, a later turn that sends none is answered with them, a
// turn that sends some overrides those by name, and GET /api/core/chat/init
// gives them back to a page that reopens the chat. Over HTTP, with a real
// gateway in front of the simulator's sim-echo-prompt (its answer is the
// prompt it was sent, so the test reads what the model saw). A share link's
// visitor reads only their own chat's; another team's app is a 404.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROOT_TOKEN, startTestGateway, type TestGateway } from '../../gateway/test/helpers.js';
import { apiKeyRow } from '../src/keys/auth.js';
import { loadPlatformConfig, startPlatform, type RunningPlatform } from '../src/index.js';

const KEY = 'kbchat-test-variables-key-0123456789';
const OTHER_TEAM_KEY = 'kbchat-test-variables-other-team-0123456789';

describe('chat variables', () => {
  let gw: TestGateway;
  let p: RunningPlatform;
  let appId: string;
  let shareId: string;
  let appKey: string;

  const call = async (path: string, json?: unknown, key: string | null = KEY) => {
    const headers: Record<string, string> = json === undefined ? {} : { 'content-type': 'application/json' };
    if (key) headers.authorization = `Bearer ${key}`;
    const res = await fetch(`${p.url}${path}`, {
      method: json === undefined ? 'GET' : 'POST',
      headers,
      body: json === undefined ? undefined : JSON.stringify(json),
    });
    return { status: res.status, body: (await res.json()) as any };
  };
  /** The prompt the model saw (sim-echo-prompt answers with it). */
  const ask = async (body: Record<string, unknown>, visitor = false) => {
    const r = await call(
      visitor ? `/api/v1/chat/completions?shareId=${shareId}` : '/api/v1/chat/completions',
      { messages: [{ role: 'user', content: 'hello' }], ...body },
      visitor ? null : appKey,
    );
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    return String(r.body.choices[0].message.content);
  };
  const init = (query: Record<string, string>, key: string | null = KEY) => call(`/api/core/chat/init?${new URLSearchParams(query)}`, undefined, key);

  beforeAll(async () => {
    gw = await startTestGateway({ models: ['sim-echo-prompt'] });
    const dir = mkdtempSync(join(tmpdir(), 'kbchat-variables-'));
    writeFileSync(join(dir, 'config.json'), JSON.stringify({ llmModels: [{ model: 'sim-echo-prompt' }], vectorModels: [] }));
    p = await startPlatform(
      loadPlatformConfig(
        { INITIAL_API_KEY: KEY },
        {
          host: '127.0.0.1',
          port: 0,
          dataDir: dir,
          databaseUrl: 'pglite:memory',
          configPath: join(dir, 'config.json'),
          gatewayUrl: gw.url,
          gatewayToken: ROOT_TOKEN,
        },
      ),
      () => {},
    );
    appId = (await call('/api/core/app/create', { name: 'Desk', model: 'sim-echo-prompt', systemPrompt: 'You serve {{city}} for {{team}}.' })).body.data;
    shareId = (await call('/api/support/outLink/create', { appId, name: 'public' })).body.data;
    appKey = (await call('/api/support/openapi/create', { name: 'app key', appId })).body.data;
    await p.services.keys.insertTeam('othervariablesteam000000', 'other');
    await p.services.keys.insertKey(apiKeyRow(OTHER_TEAM_KEY, { teamId: 'othervariablesteam000000', appId: null, name: 'other', expiresAt: null }));
  }, 60_000);
  afterAll(async () => {
    await p?.close();
    await gw?.close();
  });

  it('answers a later turn with the variables the chat was started with, and lets a turn override them by name', async () => {
    expect(await ask({ chatId: 'v-1', variables: { city: 'Lyon', team: 'Support' } })).toContain('You serve Lyon for Support.');
    expect(await ask({ chatId: 'v-1' })).toContain('You serve Lyon for Support.');
    expect(await ask({ chatId: 'v-1', variables: { city: 'Nice' } })).toContain('You serve Nice for Support.');
    expect(await ask({ chatId: 'v-1' })).toContain('You serve Nice for Support.');
    // Without a chatId nothing is stored, and nothing is carried over.
    expect(await ask({ variables: { city: 'Paris', team: 'Sales' } })).toContain('You serve Paris for Sales.');
    expect(await ask({})).not.toContain('Paris');
  });

  it('gives a reopened chat its variables (init), and a new chat none', async () => {
    await ask({ chatId: 'v-2', variables: { city: 'Oslo', team: 'Ops' } });
    const r = await init({ appId, chatId: 'v-2' });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    expect(r.body.data).toMatchObject({ chatId: 'v-2', appId, variables: { city: 'Oslo', team: 'Ops' } });
    expect(r.body.data.title).toBe('hello');
    expect((await init({ appId, chatId: 'never-used' })).body.data).toMatchObject({ chatId: 'never-used', title: '', variables: {} });
  });

  it("keeps a share link's visitors' variables apart", async () => {
    await ask({ chatId: 'visit-1', shareId, outLinkUid: 'visitor-a', variables: { city: 'Rome', team: 'A' } }, true);
    const own = await init({ shareId, outLinkUid: 'visitor-a', chatId: 'visit-1' }, null);
    expect(own.body.data.variables).toEqual({ city: 'Rome', team: 'A' });
    const other = await init({ shareId, outLinkUid: 'visitor-b', chatId: 'visit-1' }, null);
    expect(other.status).toBe(200);
    expect(other.body.data.variables).toEqual({});
    // The team reads every chat of its app.
    expect((await init({ appId, chatId: 'visit-1' })).body.data.variables).toEqual({ city: 'Rome', team: 'A' });
  });

  it('refuses bad input and other teams', async () => {
    const noChat = await init({ appId });
    expect(noChat.status).toBe(400);
    expect(JSON.stringify(noChat.body)).toContain('chatId');
    expect((await init({ appId, chatId: 'v-2' }, OTHER_TEAM_KEY)).status).toBe(404);
    expect((await init({ chatId: 'v-2' }, null)).status).toBe(401);
  });
});
