// Feedback on answers and the application's chat log, end to end over HTTP
// with a real gateway in front of the upstream simulator: feedback set,
// replaced and cleared on the caller's own answers and read back with the
// records; the chat log with every chat of the app (application key, signed
// in, a share link's visitor) and where it came from, its counts, server-side
// pages and dates; a chatId that is another owner's refused before any model
// call; other teams' ids 404; bad input 400 naming the field.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROOT_TOKEN, startTestGateway, type TestGateway } from '../../gateway/test/helpers.js';
import { apiKeyRow } from '../src/keys/auth.js';
import { loadPlatformConfig, startPlatform, type RunningPlatform } from '../src/index.js';

const KEY = 'kbchat-test-feedback-key-0123456789';
const OTHER_TEAM_KEY = 'kbchat-test-feedback-other-team-0123456789';
const ROOT_PASSWORD = 'feedback-root-password';

describe('feedback and chat logs', () => {
  let gw: TestGateway;
  let p: RunningPlatform;
  let appId: string;
  let appKey: string;
  let shareId: string;
  let cookie: string;
  let csrf: string;

  /** key: a bearer key; 'session': the signed-in cookie with its CSRF token; null: nothing (a visitor). */
  const call = async (path: string, json?: unknown, opts: { method?: string; key?: string | null | 'session' } = {}) => {
    const key = opts.key === undefined ? KEY : opts.key;
    const headers: Record<string, string> = json === undefined ? {} : { 'content-type': 'application/json' };
    if (key === 'session') Object.assign(headers, { cookie, 'x-csrf-token': csrf });
    else if (key) headers.authorization = `Bearer ${key}`;
    const res = await fetch(`${p.url}${path}`, {
      method: opts.method ?? (json === undefined ? 'GET' : 'POST'),
      headers,
      body: json === undefined ? undefined : JSON.stringify(json),
    });
    return { status: res.status, body: (await res.json()) as any };
  };
  const ask = (key: string | null | 'session', body: Record<string, unknown>, path = '/api/v1/chat/completions') => call(path, body, { key });
  const records = async (chatId: string, who: Record<string, unknown> = { appId }, key: string | null = KEY) => {
    const r = await call('/api/core/chat/getPaginationRecords', { ...who, chatId }, { key });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    return r.body.data.list as any[];
  };
  const feedback = (body: Record<string, unknown>, key: string | null = KEY) => call('/api/core/chat/feedback/updateUserFeedback', body, { key });
  const logs = (body: Record<string, unknown>, key: string | null | 'session' = KEY) => call('/api/core/app/getChatLogs', body, { key });
  const gatewayCallsSince = async (from: number) => {
    await new Promise((r) => setTimeout(r, 150));
    return ((await (await gw.api(`/api/logs?from=${from}&limit=500`)).json()) as any).data as unknown[];
  };

  beforeAll(async () => {
    gw = await startTestGateway({ models: ['sim-chat'] });
    const dir = mkdtempSync(join(tmpdir(), 'kbchat-feedback-'));
    writeFileSync(join(dir, 'config.json'), JSON.stringify({ llmModels: [{ model: 'sim-chat' }], vectorModels: [] }));
    p = await startPlatform(
      loadPlatformConfig(
        { INITIAL_API_KEY: KEY, ROOT_PASSWORD },
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
    appId = (await call('/api/core/app/create', { name: 'Help', model: 'sim-chat' })).body.data;
    appKey = (await call('/api/support/openapi/create', { name: 'app key', appId })).body.data;
    shareId = (await call('/api/support/outLink/create', { appId, name: 'public' })).body.data;
    const login = await fetch(`${p.url}/api/auth/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ username: 'root', password: ROOT_PASSWORD }),
    });
    cookie = login.headers.getSetCookie()[0]!.split(';')[0]!;
    csrf = ((await login.json()) as any).data.csrfToken;
    await p.services.keys.insertTeam('otherfeedbackteam0000000', 'other');
    await p.services.keys.insertKey(apiKeyRow(OTHER_TEAM_KEY, { teamId: 'otherfeedbackteam0000000', appId: null, name: 'other', expiresAt: null }));
  }, 60_000);
  afterAll(async () => {
    await p?.close();
    await gw?.close();
  });

  it("sets, replaces and clears the feedback on the caller's own answer, shown with the records", async () => {
    const r = await ask(appKey, { chatId: 'fb-1', responseChatItemId: 'answer-1', messages: [{ role: 'user', content: 'how long is the warranty?' }] });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    const [question, answer] = await records('fb-1');
    expect(answer).toMatchObject({ dataId: 'answer-1', obj: 'AI' });
    expect(answer.userGoodFeedback).toBeUndefined();

    expect((await feedback({ appId, chatId: 'fb-1', dataId: 'answer-1', userGoodFeedback: 'clear and right' })).status).toBe(200);
    expect((await records('fb-1'))[1]).toMatchObject({ userGoodFeedback: 'clear and right' });
    expect((await records('fb-1'))[1].userBadFeedback).toBeUndefined();
    // The application key reaches its own app's chats without naming it.
    expect((await feedback({ chatId: 'fb-1', dataId: 'answer-1', userGoodFeedback: '', userBadFeedback: 'the warranty is two years' }, appKey)).status).toBe(
      200,
    );
    let item = (await records('fb-1'))[1];
    expect(item.userBadFeedback).toBe('the warranty is two years');
    expect(item.userGoodFeedback).toBeUndefined();
    // Neither given: both cleared.
    expect((await feedback({ appId, chatId: 'fb-1', dataId: 'answer-1' })).status).toBe(200);
    item = (await records('fb-1'))[1];
    expect(item.userGoodFeedback).toBeUndefined();
    expect(item.userBadFeedback).toBeUndefined();

    // Not an answer, not this chat's, not this team's: 404.
    expect((await feedback({ appId, chatId: 'fb-1', dataId: question.dataId, userGoodFeedback: 'x' })).status).toBe(404);
    expect((await feedback({ appId, chatId: 'fb-1', dataId: 'no-such-answer', userGoodFeedback: 'x' })).status).toBe(404);
    expect((await feedback({ appId, chatId: 'no-such-chat', dataId: 'answer-1', userGoodFeedback: 'x' })).status).toBe(404);
    expect((await feedback({ appId, chatId: 'fb-1', dataId: 'answer-1', userGoodFeedback: 'x' }, OTHER_TEAM_KEY)).status).toBe(404);
    expect((await records('fb-1'))[1].userGoodFeedback).toBeUndefined();
    // Bad input names the field.
    const bad = await feedback({ appId, chatId: 'fb-1', userGoodFeedback: 'x' });
    expect(bad.status).toBe(400);
    expect(bad.body.message).toMatch(/'dataId'/);
    expect((await feedback({ appId, chatId: 'fb-1', dataId: 'answer-1', userGoodFeedback: 7 })).body.message).toMatch(/'userGoodFeedback'/);
  });

  it("keeps a visitor's feedback the visitor's: the team cannot set it, another visitor cannot either", async () => {
    const visitor = { shareId, outLinkUid: 'visitor-fb' };
    expect(
      (await ask(null, { ...visitor, chatId: 'v-chat', responseChatItemId: 'v-answer', messages: [{ role: 'user', content: 'opening hours?' }] })).status,
    ).toBe(200);
    expect((await feedback({ ...visitor, chatId: 'v-chat', dataId: 'v-answer', userBadFeedback: 'not what I asked' }, null)).status).toBe(200);
    expect((await records('v-chat', visitor, null))[1]).toMatchObject({ dataId: 'v-answer', userBadFeedback: 'not what I asked' });
    expect((await feedback({ appId, chatId: 'v-chat', dataId: 'v-answer', userGoodFeedback: 'overruled' })).status).toBe(404);
    expect((await feedback({ shareId, outLinkUid: 'someone-else', chatId: 'v-chat', dataId: 'v-answer', userGoodFeedback: 'x' }, null)).status).toBe(404);
    const kept = (await records('v-chat', visitor, null))[1];
    expect(kept.userBadFeedback).toBe('not what I asked');
    expect(kept.userGoodFeedback).toBeUndefined();
  });

  it("refuses to continue another owner's chatId before any model call, and its answer reads nothing of it", async () => {
    const visitor = { shareId, outLinkUid: 'visitor-own' };
    expect((await ask(null, { ...visitor, chatId: 'owned', messages: [{ role: 'user', content: 'my secret order number is 4711' }] })).status).toBe(200);
    const from = Date.now();
    for (const [key, body] of [
      [appKey, {}],
      ['session', {}],
      [null, { shareId, outLinkUid: 'visitor-other' }],
    ] as const) {
      const path = key === 'session' ? `/api/v1/chat/completions?appId=${appId}` : '/api/v1/chat/completions';
      const r = await ask(key, { ...body, chatId: 'owned', messages: [{ role: 'user', content: 'what was my order number?' }] }, path);
      expect(r.status, JSON.stringify(r.body)).toBe(409);
      expect(r.body.message).toMatch(/chatId owned belongs to another chat/);
    }
    expect(await gatewayCallsSince(from)).toEqual([]);
    expect(await records('owned', visitor, null)).toHaveLength(2);
  });

  it('lists every chat of the app in the chat log with its source and counts, newest first, paged and bounded by date', async () => {
    const logApp = (await call('/api/core/app/create', { name: 'Logged', model: 'sim-chat' })).body.data as string;
    const logKey = (await call('/api/support/openapi/create', { name: 'k', appId: logApp })).body.data as string;
    const logShare = (await call('/api/support/outLink/create', { appId: logApp, name: 'site' })).body.data as string;
    const turn = async (key: string | null | 'session', chatId: string, content: string, extra: Record<string, unknown> = {}) => {
      const path = key === 'session' ? `/api/v1/chat/completions?appId=${logApp}` : '/api/v1/chat/completions';
      const r = await ask(key, { chatId, messages: [{ role: 'user', content }], ...extra }, path);
      expect(r.status, JSON.stringify(r.body)).toBe(200);
      await new Promise((res) => setTimeout(res, 5)); // distinct update times
    };
    const start = Date.now();
    await turn(logKey, 'api-1', 'first question', { responseChatItemId: 'api-1-a1' });
    await turn(logKey, 'api-1', 'second question', { responseChatItemId: 'api-1-a2' });
    await turn('session', 'web-1', 'from the browser', { responseChatItemId: 'web-1-a1' });
    await turn(null, 'shared-1', 'from a visitor', { shareId: logShare, outLinkUid: 'visitor-log', responseChatItemId: 'shared-1-a1' });
    // Without a chatId nothing is stored, so nothing is logged.
    await turn(logKey, '', 'not kept');
    const mid = Date.now();
    await new Promise((res) => setTimeout(res, 5));
    await turn(logKey, 'api-2', 'latest', { responseChatItemId: 'api-2-a1' });
    expect((await feedback({ appId: logApp, chatId: 'api-1', dataId: 'api-1-a1', userGoodFeedback: 'yes' })).status).toBe(200);
    expect((await feedback({ appId: logApp, chatId: 'api-1', dataId: 'api-1-a2', userBadFeedback: 'no' })).status).toBe(200);
    expect(
      (await feedback({ shareId: logShare, outLinkUid: 'visitor-log', chatId: 'shared-1', dataId: 'shared-1-a1', userGoodFeedback: 'thanks' }, null)).status,
    ).toBe(200);
    // Feedback does not move a chat in the log (it is not a new turn).

    const all = await logs({ appId: logApp, offset: 0, pageSize: 10 });
    expect(all.status, JSON.stringify(all.body)).toBe(200);
    expect(all.body.data.total).toBe(4);
    const list = all.body.data.list as any[];
    expect(list.map((c) => c.chatId)).toEqual(['api-2', 'shared-1', 'web-1', 'api-1']);
    expect(list.map((c) => c.source)).toEqual(['api', 'share', 'online', 'api']);
    expect(list[3]).toMatchObject({ title: 'first question', messageCount: 4, userGoodFeedbackCount: 1, userBadFeedbackCount: 1 });
    expect(list[1]).toMatchObject({ shareId: logShare, outLinkUid: 'visitor-log', messageCount: 2, userGoodFeedbackCount: 1, userBadFeedbackCount: 0 });
    expect(list[2]).toMatchObject({ messageCount: 2, userGoodFeedbackCount: 0, userBadFeedbackCount: 0 });
    expect(list[2].shareId).toBeUndefined();
    expect(Date.parse(list[0].updateTime)).toBeGreaterThanOrEqual(Date.parse(list[1].updateTime));
    // The team's getHistories gives the same sources.
    const histories = (await call('/api/core/chat/getHistories', { appId: logApp })).body.data.list as any[];
    expect(Object.fromEntries(histories.map((h) => [h.chatId, h.source]))).toEqual({ 'api-1': 'api', 'web-1': 'online', 'shared-1': 'share', 'api-2': 'api' });
    // Only one source, as the web app's chat page asks (the team's own chats, not its visitors').
    const online = (await call('/api/core/chat/getHistories', { appId: logApp, source: 'online' })).body.data;
    expect([online.list.map((h: any) => h.chatId), online.total]).toEqual([['web-1'], 1]);
    expect((await call('/api/core/chat/getHistories', { appId: logApp, source: 'web' })).body.message).toMatch(/'source'/);

    // Pages come from the server.
    const page1 = await logs({ appId: logApp, offset: 0, pageSize: 3 });
    const page2 = await logs({ appId: logApp, offset: 3, pageSize: 3 });
    expect(page1.body.data.list.map((c: any) => c.chatId)).toEqual(['api-2', 'shared-1', 'web-1']);
    expect(page2.body.data.list.map((c: any) => c.chatId)).toEqual(['api-1']);
    expect(page2.body.data.total).toBe(4);
    // Dates bound the last update: ISO strings or epoch ms.
    const before = await logs({ appId: logApp, offset: 0, pageSize: 10, dateStart: new Date(start).toISOString(), dateEnd: mid });
    expect(before.body.data.list.map((c: any) => c.chatId)).toEqual(['shared-1', 'web-1', 'api-1']);
    expect(before.body.data.total).toBe(3);
    const after = await logs({ appId: logApp, offset: 0, pageSize: 10, dateStart: mid });
    expect(after.body.data.list.map((c: any) => c.chatId)).toEqual(['api-2']);
    expect((await logs({ appId: logApp, dateStart: Date.now() + 60_000 })).body.data).toEqual({ list: [], total: 0 });
    // Signed in works as a general key does.
    expect((await logs({ appId: logApp, pageSize: 1 }, 'session')).body.data.total).toBe(4);
  });

  it('refuses another team, application keys and visitors, and names the bad field', async () => {
    expect((await logs({ appId }, OTHER_TEAM_KEY)).status).toBe(404);
    expect((await logs({ appId: 'no-such-app' })).status).toBe(404);
    expect((await logs({ appId }, appKey)).status).toBe(403);
    expect((await logs({ appId }, null)).status).toBe(401);
    const cases: [Record<string, unknown>, RegExp][] = [
      [{}, /'appId'/],
      [{ appId, pageSize: 0 }, /'pageSize'/],
      [{ appId, offset: -1 }, /'offset'/],
      [{ appId, dateStart: 'last tuesday' }, /'dateStart'/],
      [{ appId, dateStart: Date.now(), dateEnd: Date.now() - 1000 }, /'dateEnd'.*before dateStart/],
    ];
    for (const [body, message] of cases) {
      const r = await logs(body);
      expect(r.status, JSON.stringify(body)).toBe(400);
      expect(r.body.message).toMatch(message);
    }
  });
});
