// Platform users and sessions over HTTP on a real embedded store: root made at
// first start, sign-in with an httpOnly SameSite=Lax cookie, CSRF on every
// change a cookie authenticates, team scoping as with general keys, members
// added and removed by root, sign-out and expiry, and guessing slowed down.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadPlatformConfig, startPlatform, type RunningPlatform } from '../src/index.js';

const KEY = 'kbchat-test-accounts-key-0123456789';
const ROOT_PASSWORD = 'root-password-for-tests';

interface Session {
  cookie: string;
  csrf: string;
}

describe('platform accounts', () => {
  let p: RunningPlatform;

  const call = async (path: string, init: { method?: string; json?: unknown; session?: Session; csrf?: string | null; key?: string } = {}) => {
    const headers: Record<string, string> = {};
    if (init.json !== undefined) headers['content-type'] = 'application/json';
    if (init.key) headers.authorization = `Bearer ${init.key}`;
    if (init.session) headers.cookie = init.session.cookie;
    const csrf = init.csrf === undefined ? init.session?.csrf : init.csrf;
    if (csrf) headers['x-csrf-token'] = csrf;
    const res = await fetch(`${p.url}${path}`, {
      method: init.method ?? (init.json === undefined ? 'GET' : 'POST'),
      headers,
      body: init.json === undefined ? undefined : JSON.stringify(init.json),
    });
    return { status: res.status, body: (await res.json()) as any, setCookie: res.headers.getSetCookie() };
  };

  const signIn = async (username: string, password: string): Promise<Session> => {
    const r = await call('/api/auth/login', { json: { username, password } });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    return { cookie: r.setCookie[0]!.split(';')[0]!, csrf: r.body.data.csrfToken };
  };

  beforeAll(async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'kbchat-platform-accounts-'));
    p = await startPlatform(loadPlatformConfig({ INITIAL_API_KEY: KEY, ROOT_PASSWORD }, { host: '127.0.0.1', port: 0, dataDir, databaseUrl: 'pglite:memory' }));
  }, 60_000);
  afterAll(async () => p?.close());

  it('signs root in with an httpOnly, SameSite=Lax session cookie, and says who is signed in', async () => {
    expect(p.services.startupNotes).toContain('root user created (password from ROOT_PASSWORD)');
    const wrong = await call('/api/auth/login', { json: { username: 'root', password: 'not-it' } });
    expect(wrong.status).toBe(401);
    expect(wrong.body).toMatchObject({ statusText: 'invalid_credentials' });
    expect(wrong.setCookie).toEqual([]);
    const r = await call('/api/auth/login', { json: { username: 'Root', password: ROOT_PASSWORD } });
    expect(r.status).toBe(200);
    expect(r.setCookie).toHaveLength(1);
    expect(r.setCookie[0]).toMatch(/^kbchat_session=kbs-[\w-]+; Path=\/; Expires=.+; HttpOnly; SameSite=Lax$/);
    expect(r.body.data.user).toMatchObject({ username: 'root', role: 'root', teamId: p.services.rootTeamId });
    expect(JSON.stringify(r.body)).not.toContain(r.setCookie[0]!.split(';')[0]!.split('=')[1]); // the session token is only in the cookie
    const me = await call('/api/auth/me', { session: { cookie: r.setCookie[0]!.split(';')[0]!, csrf: '' } });
    expect(me.body.data).toMatchObject({ user: { username: 'root' }, csrfToken: r.body.data.csrfToken });
    expect((await call('/api/auth/me')).status).toBe(401);
  });

  it('refuses a change that a cookie alone asks for (CSRF), and does it with the token, in the team a general key sees', async () => {
    const s = await signIn('root', ROOT_PASSWORD);
    const forged = await call('/api/core/dataset/create', { json: { name: 'forged' }, session: s, csrf: null });
    expect(forged.status).toBe(403);
    expect(forged.body).toMatchObject({ statusText: 'csrf_failed' });
    expect((await call('/api/core/dataset/create', { json: { name: 'forged' }, session: s, csrf: 'x'.repeat(s.csrf.length) })).status).toBe(403);
    const made = await call('/api/core/dataset/create', { json: { name: 'from the browser' }, session: s });
    expect(made.status, JSON.stringify(made.body)).toBe(200);
    // Reads need no token; the general key of the same team sees the same dataset.
    const viaSession = await call(`/api/core/dataset/detail?id=${made.body.data}`, { session: { ...s, csrf: '' } });
    expect(viaSession.body.data).toMatchObject({ name: 'from the browser' });
    const viaKey = await call(`/api/core/dataset/detail?id=${made.body.data}`, { key: KEY });
    expect(viaKey.body.data).toMatchObject({ name: 'from the browser' });
    // A key in Authorization is a key, whatever cookie comes along.
    expect((await call('/api/core/dataset/list', { json: {}, key: 'kbchat-unknown', session: s })).status).toBe(401);
  });

  it('lets root add members who sign in and work in the team, and remove them, which ends their sessions at once', async () => {
    const root = await signIn('root', ROOT_PASSWORD);
    const bad = await call('/api/team/members', { json: { username: 'ann', password: 'short' }, session: root });
    expect(bad.status).toBe(400);
    expect(bad.body.message).toMatch(/'password'/);
    const added = await call('/api/team/members', { json: { username: 'ann', password: 'ann-password-1' }, session: root });
    expect(added.status).toBe(200);
    expect(added.body.data).toMatchObject({ username: 'ann', role: 'member', teamId: p.services.rootTeamId });
    expect(JSON.stringify(added.body)).not.toMatch(/ann-password-1|scrypt/);
    expect((await call('/api/team/members', { json: { username: 'ANN', password: 'another-password' }, session: root })).status).toBe(409);

    const ann = await signIn('ann', 'ann-password-1');
    const list = await call('/api/core/dataset/list', { json: {}, session: ann });
    expect(list.body.data.map((d: any) => d.name)).toContain('from the browser');
    const refused = await call('/api/team/members', { json: { username: 'bob', password: 'bob-password-1' }, session: ann });
    expect(refused.status).toBe(403);
    const members = await call('/api/team/members', { session: root });
    expect(members.body.data.map((m: any) => m.username)).toEqual(['root', 'ann']);

    expect((await call(`/api/team/members?id=${added.body.data.id}`, { method: 'DELETE', session: root })).status).toBe(200);
    expect((await call('/api/core/dataset/list', { json: {}, session: ann })).status).toBe(401);
    expect((await call(`/api/team/members?id=${root.cookie}`, { method: 'DELETE', session: root })).status).toBe(404);
  });

  it('ends a session at sign-out and at expiry', async () => {
    const s = await signIn('root', ROOT_PASSWORD);
    const out = await call('/api/auth/logout', { method: 'POST', session: s });
    expect(out.status).toBe(200);
    expect(out.setCookie[0]).toMatch(/^kbchat_session=; .*Expires=Thu, 01 Jan 1970/);
    expect((await call('/api/auth/me', { session: s })).status).toBe(401);

    const t = await signIn('root', ROOT_PASSWORD);
    await p.services.store.db
      .updateTable('sessions' as never)
      .set({ expires_at: Date.now() - 1 } as never)
      .execute();
    expect((await call('/api/auth/me', { session: t })).status).toBe(401);
  });

  it('names the field of a bad sign-in, and slows down guessing: 10 failures for a name, then 429 for a while', async () => {
    const missing = await call('/api/auth/login', { json: { password: 'x' } });
    expect(missing.status).toBe(400);
    expect(missing.body.message).toMatch(/'username'/);
    for (let i = 0; i < 10; i++) expect((await call('/api/auth/login', { json: { username: 'nobody', password: `guess-${i}` } })).status).toBe(401);
    const slowed = await call('/api/auth/login', { json: { username: 'nobody', password: 'guess-10' } });
    expect(slowed.status).toBe(429);
    expect(slowed.body.message).toMatch(/try again in \d+ s/);
    // Another name is not affected.
    expect((await call('/api/auth/login', { json: { username: 'root', password: ROOT_PASSWORD } })).status).toBe(200);
  });

  it('generates a root password at first start when ROOT_PASSWORD is unset, says it once, and it signs in', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'kbchat-platform-accounts-gen-'));
    const printed: string[] = [];
    const q = await startPlatform(loadPlatformConfig({}, { host: '127.0.0.1', port: 0, dataDir, databaseUrl: `pglite:${join(dataDir, 'db')}` }), (m) =>
      printed.push(m),
    );
    try {
      expect(printed).toEqual([expect.stringMatching(/^kbchat platform: root user created; password \(shown once\): \S{12,}$/)]);
      const password = printed[0]!.split(': ').at(-1)!;
      const res = await fetch(`${q.url}/api/auth/login`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ username: 'root', password }),
      });
      expect(res.status).toBe(200);
    } finally {
      await q.close();
    }
    const again = await startPlatform(loadPlatformConfig({}, { host: '127.0.0.1', port: 0, dataDir, databaseUrl: `pglite:${join(dataDir, 'db')}` }), (m) =>
      printed.push(m),
    );
    try {
      expect(printed).toHaveLength(1);
      expect(again.services.startupNotes.join('\n')).not.toMatch(/root user created/);
    } finally {
      await again.close();
    }
  }, 60_000);
});
