// Share links (FastGPT's outLink) end to end over HTTP, a real gateway in front
// of the upstream simulator: made, listed and deleted by the team; chatted
// through with no key (shareId in the body or the query, stream or not); each
// visitor's chats apart from the others' and listed for the team with their
// source; a deleted link refused at once, an expired one refused, a visitor
// over the link's QPM told when to come back; an anonymous body without a
// shareId in the query read only up to 1 MB; the public init with no prompt;
// feedback on answers; another team's ids 404; bad input 400 naming the field.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROOT_TOKEN, startTestGateway, type TestGateway } from '../../gateway/test/helpers.js';
import { apiKeyRow } from '../src/keys/auth.js';
import { loadPlatformConfig, startPlatform, type RunningPlatform } from '../src/index.js';

const KEY = 'kbchat-test-share-key-0123456789';
const OTHER_TEAM_KEY = 'kbchat-test-share-other-team-0123456789';

describe('share links', () => {
  let gw: TestGateway;
  let p: RunningPlatform;
  let appId: string;
  const call = async (path: string, json?: unknown, method = json === undefined ? 'GET' : 'POST', key: string | null = KEY) => {
    const res = await fetch(`${p.url}${path}`, {
      method,
      headers: { ...(key ? { authorization: `Bearer ${key}` } : {}), ...(json === undefined ? {} : { 'content-type': 'application/json' }) },
      body: json === undefined ? undefined : JSON.stringify(json),
    });
    return { status: res.status, body: (await res.json()) as any, headers: res.headers };
  };
  const visit = (path: string, json?: unknown, method?: string) => call(path, json, method, null);
  const ask = (shareId: string, outLinkUid: string, chatId: string, content: string, extra: Record<string, unknown> = {}) =>
    visit('/api/v1/chat/completions', { shareId, outLinkUid, chatId, messages: [{ role: 'user', content }], ...extra });

  beforeAll(async () => {
    gw = await startTestGateway();
    const dir = mkdtempSync(join(tmpdir(), 'kbchat-share-'));
    writeFileSync(join(dir, 'config.json'), JSON.stringify({ llmModels: [{ model: 'sim-chat' }], vectorModels: [] }));
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
    appId = (
      await call('/api/core/app/create', {
        name: 'Front desk',
        intro: 'Ask about opening hours',
        model: 'sim-chat',
        systemPrompt: 'SECRET PROMPT for {{city}} and {{team}}.',
      })
    ).body.data;
    await p.services.keys.insertTeam('othershareteam0000000000', 'other');
    await p.services.keys.insertKey(apiKeyRow(OTHER_TEAM_KEY, { teamId: 'othershareteam0000000000', appId: null, name: 'other', expiresAt: null }));
  }, 60_000);
  afterAll(async () => {
    await p?.close();
    await gw?.close();
  });

  it('is made, listed and deleted by the team; bad input names the field; other teams get 404', async () => {
    const made = await call('/api/support/outLink/create', { appId, name: 'website', limit: { QPM: 100 } });
    expect(made.status).toBe(200);
    const shareId = made.body.data as string;
    expect(shareId).toMatch(/^[\w-]{24,}$/);
    const list = await call(`/api/support/outLink/list?appId=${appId}`);
    expect(list.body.data).toHaveLength(1);
    expect(list.body.data[0]).toMatchObject({ shareId, appId, name: 'website', limit: { QPM: 100 } });

    expect((await call('/api/support/outLink/create', { appId, name: '' })).body.message).toMatch(/'name'/);
    expect((await call('/api/support/outLink/create', { appId, name: 'x', limit: { expiredTime: '2001-01-01T00:00:00Z' } })).body.message).toMatch(
      /'limit\.expiredTime'.*future/,
    );
    expect((await call('/api/support/outLink/create', { appId, name: 'x', limit: { QPM: 0 } })).status).toBe(400);
    expect((await call('/api/support/outLink/create', { appId, name: 'x' }, 'POST', OTHER_TEAM_KEY)).status).toBe(404);
    expect((await call(`/api/support/outLink/list?appId=${appId}`, undefined, 'GET', OTHER_TEAM_KEY)).status).toBe(404);
    expect((await call(`/api/support/outLink/delete?id=${list.body.data[0].id}`, undefined, 'DELETE', OTHER_TEAM_KEY)).status).toBe(404);
    expect((await visit('/api/support/outLink/create', { appId, name: 'x' })).status).toBe(401);

    // Public init: the name, intro and variables; never the prompt.
    const init = await visit(`/api/support/outLink/init?shareId=${shareId}`);
    expect(init.body.data).toEqual({
      app: { name: 'Front desk', intro: 'Ask about opening hours', variables: ['city', 'team'] },
      authRequired: false,
      allowedOrigins: [],
    });
    expect(JSON.stringify(init.body)).not.toContain('SECRET');

    expect((await call(`/api/support/outLink/delete?id=${list.body.data[0].id}`, undefined, 'DELETE')).status).toBe(200);
    expect((await call(`/api/support/outLink/list?appId=${appId}`)).body.data).toEqual([]);
    const gone = await visit(`/api/support/outLink/init?shareId=${shareId}`);
    expect(gone.status).toBe(404);
    expect(gone.body.message).toContain('share link not found');
  });

  it("chats with no key, keeps each visitor's chats apart, and shows them to the team", async () => {
    const shareId = (await call('/api/support/outLink/create', { appId, name: 'visitors' })).body.data as string;
    const a = await ask(shareId, 'visitor-a', 'chat-a', 'hello from alice');
    expect(a.status, JSON.stringify(a.body)).toBe(200);
    expect(a.body.choices[0].message.content).toContain('alice');
    expect((await ask(shareId, 'visitor-a', 'chat-a', 'second question')).status).toBe(200);

    // Streamed, with the shareId in the query only.
    const streamed = await fetch(`${p.url}/api/v1/chat/completions?shareId=${shareId}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ outLinkUid: 'visitor-b', chatId: 'chat-b', stream: true, detail: true, messages: [{ role: 'user', content: 'hello from bob' }] }),
    });
    expect(streamed.status).toBe(200);
    const text = await streamed.text();
    expect(text).toContain('event: answer');
    expect(text).toContain('bob');

    // Bob can neither read nor append to Alice's chat.
    const stolen = await visit('/api/core/chat/getPaginationRecords', { shareId, outLinkUid: 'visitor-b', chatId: 'chat-a' });
    expect(stolen.body.data.list).toEqual([]);
    const appended = await ask(shareId, 'visitor-b', 'chat-a', 'let me in');
    expect(appended.status).toBe(409);
    expect(appended.body.message).toContain('belongs to another chat');
    expect((await visit(`/api/core/chat/delHistory?shareId=${shareId}&outLinkUid=visitor-b&chatId=chat-a`, undefined, 'DELETE')).status).toBe(404);
    // The team cannot append to a visitor's chat either, nor a visitor to the team's.
    const teamKey = (await call('/api/support/openapi/create', { name: 'app', appId })).body.data as string;
    const teamChat = await fetch(`${p.url}/api/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${teamKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ chatId: 'chat-a', messages: [{ role: 'user', content: 'x' }] }),
    });
    expect(teamChat.status).toBe(409);

    const aliceSees = await visit('/api/core/chat/getHistories', { shareId, outLinkUid: 'visitor-a' });
    expect(aliceSees.body.data.list.map((c: any) => c.chatId)).toEqual(['chat-a']);
    const aliceItems = await visit('/api/core/chat/getPaginationRecords', { shareId, outLinkUid: 'visitor-a', chatId: 'chat-a' });
    expect(aliceItems.body.data.list).toHaveLength(4);
    const bobSees = await visit('/api/core/chat/getHistories', { shareId, outLinkUid: 'visitor-b' });
    expect(bobSees.body.data.list.map((c: any) => c.chatId)).toEqual(['chat-b']);

    const team = await call('/api/core/chat/getHistories', { appId });
    const byId = Object.fromEntries(team.body.data.list.map((c: any) => [c.chatId, c]));
    expect(byId['chat-a']).toMatchObject({ source: 'share', shareId, outLinkUid: 'visitor-a' });
    expect(byId['chat-b']).toMatchObject({ source: 'share', outLinkUid: 'visitor-b' });

    // Feedback on Alice's answer, by Alice; Bob cannot.
    const answer = aliceItems.body.data.list.find((i: any) => i.obj === 'AI');
    const fb = { shareId, chatId: 'chat-a', dataId: answer.dataId };
    expect((await visit('/api/core/chat/feedback/updateUserFeedback', { ...fb, outLinkUid: 'visitor-b', userBadFeedback: 'bad' })).status).toBe(404);
    expect((await visit('/api/core/chat/feedback/updateUserFeedback', { ...fb, outLinkUid: 'visitor-a', userBadFeedback: 'too short' })).status).toBe(200);
    const withFeedback = await call('/api/core/chat/getPaginationRecords', { appId, chatId: 'chat-a' });
    expect(withFeedback.body.data.list.find((i: any) => i.dataId === answer.dataId).userBadFeedback).toBe('too short');
    await visit('/api/core/chat/feedback/updateUserFeedback', { ...fb, outLinkUid: 'visitor-a' });
    const cleared = await call('/api/core/chat/getPaginationRecords', { appId, chatId: 'chat-a' });
    expect(cleared.body.data.list.find((i: any) => i.dataId === answer.dataId).userBadFeedback).toBeUndefined();

    // Missing pieces are named.
    expect((await ask(shareId, '', 'c', 'x')).body.message).toMatch(/outLinkUid/);
    expect((await visit('/api/v1/chat/completions', { messages: [{ role: 'user', content: 'x' }] })).status).toBe(401);
    expect((await visit('/api/core/chat/getHistories', { shareId })).body.message).toMatch(/outLinkUid/);
  });

  it('stops at once when deleted, refuses an expired link, and holds a visitor to its QPM', async () => {
    const shareId = (await call('/api/support/outLink/create', { appId, name: 'short-lived', limit: { QPM: 2 } })).body.data as string;
    expect((await ask(shareId, 'v1', 'q1', 'one')).status).toBe(200);
    expect((await ask(shareId, 'v1', 'q1', 'two')).status).toBe(200);
    const third = await ask(shareId, 'v1', 'q1', 'three');
    expect(third.status).toBe(429);
    expect(Number(third.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(third.body.message).toMatch(/2 requests per minute/);
    // Another visitor has their own allowance.
    expect((await ask(shareId, 'v2', 'q2', 'one')).status).toBe(200);

    const id = (await call(`/api/support/outLink/list?appId=${appId}`)).body.data.find((l: any) => l.shareId === shareId).id;
    await call(`/api/support/outLink/delete?id=${id}`, undefined, 'DELETE');
    const after = await ask(shareId, 'v2', 'q2', 'still there?');
    expect(after.status).toBe(404);
    expect(after.body.message).toContain('share link not found');
    expect((await visit('/api/core/chat/getHistories', { shareId, outLinkUid: 'v2' })).status).toBe(404);

    const expiring = (await call('/api/support/outLink/create', { appId, name: 'expiring', limit: { expiredTime: Date.now() + 400 } })).body.data as string;
    expect((await ask(expiring, 'v3', 'e1', 'quick')).status).toBe(200);
    await new Promise((r) => setTimeout(r, 500));
    const expired = await ask(expiring, 'v3', 'e1', 'too late');
    expect(expired.status).toBe(403);
    expect(expired.body.message).toMatch(/expired at \d{4}-/);
  });

  it('reads no large anonymous body unless the share link is in the query', async () => {
    const shareId = (await call('/api/support/outLink/create', { appId, name: 'big' })).body.data as string;
    const big = 'x'.repeat(1_200_000);
    const refused = await ask(shareId, 'v', 'big1', big);
    expect(refused.status).toBe(413);
    expect(refused.body.message).toMatch(/1 MB.*\?shareId=/);
    // Named in the query, the link is checked first and the body is then read up to the chat's limit.
    const named = await fetch(`${p.url}/api/v1/chat/completions?shareId=${shareId}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ outLinkUid: 'v', chatId: 'big2', messages: [{ role: 'user', content: `${big.slice(0, 1_100_000)} tail` }] }),
    });
    expect(named.status).not.toBe(413);
    // An unknown link in the query is refused before the body.
    const unknown = await fetch(`${p.url}/api/v1/chat/completions?shareId=nope-nope-nope`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ outLinkUid: 'v', messages: [{ role: 'user', content: 'x' }] }),
    });
    expect(unknown.status).toBe(404);
  });
});
