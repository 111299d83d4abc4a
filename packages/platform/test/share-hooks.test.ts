// A share link the operator controls, over HTTP with a real gateway in front
// of the upstream simulator and a real hook server: the hook lets a visitor
// in and names them (the same person on two devices sees one history), or
// refuses with its message, or stays silent past 5 s; no model is called for
// a visitor who is not let in. Usage points stop a link once its answers'
// gateway cost reaches them; the link QPM bounds all visitors together; the
// allowed origins become the share page's frame-ancestors.
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { apiKeyRow } from '../src/keys/auth.js';
import { callShareHook } from '../src/share/auth-hook.js';
import { startPlatformFixture, type PlatformFixture } from './platform-fixture.js';

const KEY = 'kbchat-test-share-hooks-key-0123456789';
const OTHER_TEAM_KEY = 'kbchat-test-share-hooks-other-0123456789';
const MEMBERS_ONLY = 'Members only: sign in at example.com';

interface HookCall {
  step: string;
  body: any;
}

/** The operator's server: tokens "good" and "good-phone" are member-7, "bad" is refused, "slow" never answered, "broken" a 500. */
async function startHookServer(): Promise<{ url: string; calls: HookCall[]; close(): Promise<void> }> {
  const calls: HookCall[] = [];
  const held: IncomingMessage[] = [];
  const server: Server = createServer((req, res) => {
    let raw = '';
    req.on('data', (c) => (raw += c));
    req.on('end', () => {
      const body = JSON.parse(raw || '{}');
      const step = (req.url ?? '').replace('/operator/shareAuth/', '');
      calls.push({ step, body });
      if (body.token === 'slow') return void held.push(req);
      if (body.token === 'broken') return void res.writeHead(500).end('oops');
      res.writeHead(200, { 'content-type': 'application/json' });
      if (body.token === 'good' || body.token === 'good-phone') res.end(JSON.stringify({ success: true, data: { uid: 'member-7' } }));
      else res.end(JSON.stringify({ success: false, message: MEMBERS_ONLY }));
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/operator`,
    calls,
    close: () => new Promise((r) => server.close(() => r())).then(() => server.closeAllConnections()),
  };
}

describe('share links the operator controls', () => {
  let f: PlatformFixture;
  let hook: Awaited<ReturnType<typeof startHookServer>>;
  let appId: string;

  const call = (path: string, json?: unknown, opts: { method?: string; key?: string | null } = {}) => f.call(path, { json, ...opts });
  const link = async (body: Record<string, unknown>) => {
    const r = await call('/api/support/outLink/create', { appId, name: 'link', ...body });
    expect(r.status, r.text).toBe(200);
    return r.body.data as string;
  };
  const visitorAsk = (shareId: string, who: Record<string, unknown>, content = 'When does the library open?', extra: Record<string, unknown> = {}) =>
    call('/api/v1/chat/completions', { shareId, ...who, messages: [{ role: 'user', content }], ...extra }, { key: null });
  const listed = async (shareId: string) => ((await call(`/api/support/outLink/list?appId=${appId}`)).body.data as any[]).find((l) => l.shareId === shareId);

  beforeAll(async () => {
    hook = await startHookServer();
    f = await startPlatformFixture({
      key: KEY,
      models: ['sim-chat'],
      config: { llmModels: [{ model: 'sim-chat' }], vectorModels: [] },
      overrides: { shareHookAllowPrivate: true },
    });
    appId = (await call('/api/core/app/create', { name: 'Library', model: 'sim-chat' })).body.data;
    await f.p.services.keys.insertTeam('othersharehooksteam00000', 'other');
    await f.p.services.keys.insertKey(apiKeyRow(OTHER_TEAM_KEY, { teamId: 'othersharehooksteam00000', appId: null, name: 'other', expiresAt: null }));
  }, 60_000);
  afterAll(async () => {
    await f?.close();
    await hook?.close();
  });

  it('keeps the new limits and origins, changes them with update, and names a bad field', async () => {
    const shareId = await link({
      limit: { QPM: 5, linkQPM: 50, maxUsagePoints: 2.5, hookUrl: hook.url },
      allowedOrigins: ['https://Shop.Example/', 'http://localhost:8080'],
    });
    const made = await listed(shareId);
    expect(made).toMatchObject({
      limit: { QPM: 5, linkQPM: 50, maxUsagePoints: 2.5, hookUrl: hook.url },
      usedPoints: 0,
      allowedOrigins: ['https://shop.example', 'http://localhost:8080'],
    });
    const updated = await call('/api/support/outLink/update', { id: made.id, name: 'renamed', limit: { hookUrl: null, linkQPM: null } }, { method: 'PUT' });
    expect(updated.status, updated.text).toBe(200);
    expect(updated.body.data).toMatchObject({
      name: 'renamed',
      limit: { QPM: 5, maxUsagePoints: 2.5 },
      allowedOrigins: ['https://shop.example', 'http://localhost:8080'],
    });
    expect(updated.body.data.limit.hookUrl).toBeUndefined();
    expect(updated.body.data.limit.linkQPM).toBeUndefined();

    const badOrigin = await call('/api/support/outLink/update', { id: made.id, allowedOrigins: ['https://shop.example/path'] }, { method: 'PUT' });
    expect(badOrigin.status).toBe(400);
    expect(badOrigin.body.message).toMatch(/'allowedOrigins\.0'|'allowedOrigins\[0\]'/);
    const badHook = await call('/api/support/outLink/create', { appId, name: 'x', limit: { hookUrl: 'ftp://hooks.example' } });
    expect(badHook.body.message).toMatch(/'limit\.hookUrl'/);
    const badPoints = await call('/api/support/outLink/create', { appId, name: 'x', limit: { maxUsagePoints: -1 } });
    expect(badPoints.body.message).toMatch(/'limit\.maxUsagePoints'/);
    expect((await call('/api/support/outLink/update', { id: made.id, name: 'mine now' }, { method: 'PUT', key: OTHER_TEAM_KEY })).status).toBe(404);
    expect((await listed(shareId)).name).toBe('renamed');
  });

  it('lets a visitor in as the hook names them, reports the answer, and shows their chats on another device', async () => {
    const shareId = await link({ limit: { hookUrl: hook.url } });
    hook.calls.length = 0;
    const init = await call(`/api/support/outLink/init?shareId=${shareId}&authToken=good`, undefined, { key: null });
    expect(init.status, init.text).toBe(200);
    expect(init.body.data).toMatchObject({ uid: 'member-7', authRequired: true, allowedOrigins: [] });
    expect(hook.calls).toEqual([{ step: 'init', body: { token: 'good' } }]);

    // The outLinkUid the page sends is not who the visitor is: the hook says so.
    const asked = await visitorAsk(shareId, { authToken: 'good', outLinkUid: 'someone-else' }, 'When does the library open?', {
      chatId: 'lib-1',
      detail: true,
    });
    expect(asked.status, asked.text).toBe(200);
    expect(hook.calls[1]).toEqual({ step: 'start', body: { token: 'good', question: 'When does the library open?' } });
    await expect.poll(() => hook.calls.find((c) => c.step === 'finish')?.body, { timeout: 10_000 }).toMatchObject({ token: 'good' });
    expect(Array.isArray(hook.calls.find((c) => c.step === 'finish')!.body.responseData)).toBe(true);

    // The same person on a phone (another token, the same uid) sees the chat; nobody reads it without a token.
    const histories = await call('/api/core/chat/getHistories', { shareId, authToken: 'good-phone' }, { key: null });
    expect(histories.status, histories.text).toBe(200);
    expect(histories.body.data.list.map((c: any) => c.chatId)).toEqual(['lib-1']);
    const spoofed = await call('/api/core/chat/getHistories', { shareId, outLinkUid: 'member-7' }, { key: null });
    expect(spoofed.status).toBe(401);
    expect(spoofed.body.message).toMatch(/authToken/);
    const logs = (await call('/api/core/app/getChatLogs', { appId, shareId })).body.data.list;
    // Kept as the hook's: marked, so that no visitor of a link without a hook can claim it as their own id.
    expect(logs).toMatchObject([{ chatId: 'lib-1', outLinkUid: 'hook:member-7' }]);
    const hookless = await link({});
    const claimed = await visitorAsk(hookless, { outLinkUid: 'hook:member-7' });
    expect(claimed.status).toBe(400);
    expect(claimed.body.message).toMatch(/'outLinkUid'/);
  });

  it('refuses with the hook’s message, or after 5 s of silence, and no model is called', async () => {
    const shareId = await link({ limit: { hookUrl: hook.url } });
    const from = Date.now();
    const refused = await visitorAsk(shareId, { authToken: 'bad' });
    expect(refused.status).toBe(403);
    expect(refused.body.message).toBe(MEMBERS_ONLY);
    expect(refused.body.error.code).toBe('share_auth_refused');
    const init = await call(`/api/support/outLink/init?shareId=${shareId}&authToken=bad`, undefined, { key: null });
    expect(init.status).toBe(403);
    expect(init.body.message).toBe(MEMBERS_ONLY);
    const noToken = await visitorAsk(shareId, { outLinkUid: 'v1' });
    expect(noToken.status).toBe(401);
    expect(noToken.body.error.code).toBe('share_auth_required');
    const broken = await visitorAsk(shareId, { authToken: 'broken' });
    expect(broken.status).toBe(403);
    // The visitor learns that the check failed, never the hook's address (it may hold a secret) or why: that is for the log.
    expect(broken.body.error.code).toBe('share_auth_failed');
    expect(broken.body.message).toMatch(/sign-in check of this share link failed; the team that shared it can find why in the platform's log/);
    expect(broken.text).not.toContain(hook.url);
    expect(broken.text).not.toContain('127.0.0.1');

    const started = Date.now();
    const slow = await visitorAsk(shareId, { authToken: 'slow' });
    const waited = Date.now() - started;
    expect(slow.status).toBe(403);
    expect(slow.body.error.code).toBe('share_auth_timeout');
    expect(slow.body.message).toMatch(/did not answer within 5 s/);
    expect(waited).toBeGreaterThanOrEqual(4_900);
    expect(waited).toBeLessThan(15_000);
    expect(await f.gatewayLogs(from)).toEqual([]);
  }, 30_000);

  it('calls a hook on a private address only where the operator allows it', async () => {
    const refused = callShareHook(hook.url, 'init', { token: 'good' }, { allowPrivate: false });
    await expect(refused).rejects.toMatchObject({
      status: 403,
      statusText: 'share_auth_failed',
      detail: expect.stringMatching(/loopback address.*SHARE_HOOK_ALLOW_PRIVATE=true/),
    });
    await expect(callShareHook(hook.url, 'init', { token: 'good' }, { allowPrivate: true })).resolves.toBe('member-7');
  });

  it('stops a link once its answers cost its usage points, saying so', async () => {
    const shareId = await link({ limit: { maxUsagePoints: 0.000001 } });
    expect((await visitorAsk(shareId, { outLinkUid: 'v-points' })).status).toBe(200);
    // The cost is read from the gateway's log a moment after the answer.
    await expect.poll(async () => (await listed(shareId)).usedPoints, { timeout: 15_000 }).toBeGreaterThan(0);
    const from = Date.now();
    const spent = await visitorAsk(shareId, { outLinkUid: 'v-points' });
    expect(spent.status).toBe(403);
    expect(spent.body.error.code).toBe('share_link_usage_exhausted');
    expect(spent.body.message).toMatch(/used its 0\.000001 usage points/);
    expect(await f.gatewayLogs(from)).toEqual([]);
    // Raised by the team: the link works again.
    const id = (await listed(shareId)).id;
    await call('/api/support/outLink/update', { id, limit: { maxUsagePoints: 1000 } }, { method: 'PUT' });
    expect((await visitorAsk(shareId, { outLinkUid: 'v-points' })).status).toBe(200);
  });

  it('bounds all visitors of a link together with its link QPM', async () => {
    const shareId = await link({ limit: { linkQPM: 2 } });
    expect((await visitorAsk(shareId, { outLinkUid: 'a' })).status).toBe(200);
    expect((await visitorAsk(shareId, { outLinkUid: 'b' })).status).toBe(200);
    const third = await visitorAsk(shareId, { outLinkUid: 'c' });
    expect(third.status).toBe(429);
    expect(third.body.message).toMatch(/allows 2 requests per minute in all/);
  });

  it('refuses a hook address with a query, a fragment or credentials, naming the field', async () => {
    for (const hookUrl of ['https://hooks.example/auth?key=1', 'https://hooks.example/auth#x', 'https://user:pass@hooks.example/auth']) {
      const r = await call('/api/support/outLink/create', { appId, name: 'x', limit: { hookUrl } });
      expect(r.status, hookUrl).toBe(400);
      expect(r.body.message).toMatch(/'limit\.hookUrl'/);
    }
  });

  it('lets only the allowed origins frame the share page', async () => {
    const open = await link({});
    const guarded = await link({ allowedOrigins: ['https://shop.example'] });
    const page = (shareId: string) => fetch(`${f.p.url}/chat/share?shareId=${shareId}`);
    const guardedPage = await page(guarded);
    expect(guardedPage.status).toBe(200);
    expect(guardedPage.headers.get('content-security-policy')).toBe("frame-ancestors 'self' https://shop.example");
    expect((await page(open)).headers.get('content-security-policy')).toBeNull();
    // The page reads the first shareId of its address: a repeated one gets the same rule.
    const repeated = await fetch(`${f.p.url}/chat/share?shareId=${guarded}&shareId=${guarded}`);
    expect(repeated.headers.get('content-security-policy')).toBe("frame-ancestors 'self' https://shop.example");
    // The embed script on the operator's site reads them cross-origin, refusals included.
    const init = await call(`/api/support/outLink/init?shareId=${guarded}`, undefined, { key: null });
    expect(init.body.data.allowedOrigins).toEqual(['https://shop.example']);
    expect(init.headers.get('access-control-allow-origin')).toBe('*');
    const gone = await call('/api/support/outLink/init?shareId=no-such-link', undefined, { key: null });
    expect(gone.status).toBe(404);
    expect(gone.headers.get('access-control-allow-origin')).toBe('*');
  });
});
