// The console's browser sessions on the admin API, over real HTTP: log-in with
// `cookie: true` puts the session in an httpOnly cookie (never in the body),
// the cookie authenticates /api with its CSRF token on every change, bearer
// clients see no difference, and a plain user's cookie reaches only
// /api/auth/me and /api/auth/logout.
import { csrfTokenOf } from '@kbchat/server-kit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hashKey } from '../src/accounts/secrets.js';
import { ROOT_PASSWORD, startTestGateway, type TestGateway } from './helpers.js';

const COOKIE = 'kbchat_gateway_session';

interface Call {
  status: number;
  body: any;
  headers: Headers;
}

describe('console sessions (cookie + CSRF) on the admin API', () => {
  let t: TestGateway;
  beforeAll(async () => {
    // trustProxy, to see the cookie turn Secure behind an https proxy.
    t = await startTestGateway({ models: ['sim-chat'], config: { trustProxy: true } });
  });
  afterAll(async () => {
    await t?.close();
  });

  /** A request as a browser sends it: no Authorization, the cookie, and the CSRF token when given. */
  async function browser(
    path: string,
    init: { method?: string; cookie?: string; csrf?: string; json?: unknown; headers?: Record<string, string> } = {},
  ): Promise<Call> {
    const headers: Record<string, string> = { ...init.headers };
    if (init.cookie) headers.cookie = `${COOKIE}=${init.cookie}`;
    if (init.csrf) headers['x-csrf-token'] = init.csrf;
    if (init.json !== undefined) headers['content-type'] = 'application/json';
    const res = await fetch(t.url + path, { method: init.method ?? 'GET', headers, body: init.json !== undefined ? JSON.stringify(init.json) : undefined });
    const text = await res.text();
    return { status: res.status, body: text ? JSON.parse(text) : undefined, headers: res.headers };
  }

  /** The session cookie's value and attributes from a Set-Cookie answer. */
  function sessionCookie(headers: Headers): { value: string; attrs: string[] } {
    const line = headers.getSetCookie().find((c) => c.startsWith(`${COOKIE}=`));
    expect(line, 'a Set-Cookie for the session').toBeDefined();
    const [pair, ...attrs] = line!.split(';').map((s) => s.trim());
    return { value: decodeURIComponent(pair!.slice(COOKIE.length + 1)), attrs };
  }

  async function cookieLogin(username: string, password: string, headers: Record<string, string> = {}) {
    const r = await browser('/api/auth/login', { method: 'POST', json: { username, password, cookie: true }, headers });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    return { ...r, cookie: sessionCookie(r.headers) };
  }

  async function rootBalance(): Promise<number> {
    const r = await t.api('/api/users/1');
    return (await r.json()).balance;
  }

  it('cookie log-in sets an httpOnly SameSite=Lax cookie and keeps the session out of the body', async () => {
    const login = await cookieLogin('root', ROOT_PASSWORD);
    expect(Object.keys(login.body).sort()).toEqual(['csrf_token', 'expires_at', 'user']);
    expect(login.body.session).toBeUndefined();
    expect(JSON.stringify(login.body)).not.toContain(login.cookie.value);
    expect(login.body.user).toMatchObject({ username: 'root', role: 'root' });
    expect(login.cookie.value).toMatch(/^kbs-/);
    expect(login.body.csrf_token).toBe(csrfTokenOf(login.cookie.value));
    const attrs = login.cookie.attrs.map((a) => a.toLowerCase());
    expect(attrs).toContain('httponly');
    expect(attrs).toContain('samesite=lax');
    expect(attrs).toContain('path=/');
    expect(attrs).not.toContain('secure');
    // The cookie ends with the session.
    const expires = login.cookie.attrs.find((a) => /^expires=/i.test(a))!.slice('expires='.length);
    expect(Math.abs(Date.parse(expires) - login.body.expires_at)).toBeLessThan(1000);

    const bad = await browser('/api/auth/login', { method: 'POST', json: { username: 'root', password: ROOT_PASSWORD, cookie: 'yes' } });
    expect(bad.status).toBe(400);
    expect(bad.body.error.param).toBe('cookie');
    expect(bad.headers.getSetCookie()).toEqual([]);

    // Behind an https proxy the cookie is Secure.
    const proxied = await cookieLogin('root', ROOT_PASSWORD, { 'x-forwarded-proto': 'https' });
    expect(proxied.cookie.attrs.map((a) => a.toLowerCase())).toContain('secure');
  });

  it('a cookie reads the admin API, and changes it with its CSRF token (re-read)', async () => {
    const { cookie, body } = await cookieLogin('root', ROOT_PASSWORD);
    const me = await browser('/api/auth/me', { cookie: cookie.value });
    expect(me.status).toBe(200);
    expect(me.body).toMatchObject({ via: 'session', user: { username: 'root' }, csrf_token: body.csrf_token });
    expect((await browser('/api/users', { cookie: cookie.value })).status).toBe(200);

    const patched = await browser('/api/users/1', { method: 'PATCH', cookie: cookie.value, csrf: body.csrf_token, json: { balance: 150 } });
    expect(patched.status, JSON.stringify(patched.body)).toBe(200);
    expect(await rootBalance()).toBe(150);
    const made = await browser('/api/tokens', {
      method: 'POST',
      cookie: cookie.value,
      csrf: body.csrf_token,
      json: { user_id: 1, name: 'made in the console' },
    });
    expect(made.status, JSON.stringify(made.body)).toBe(201);
    expect((await browser(`/api/tokens/${made.body.token.id}`, { method: 'DELETE', cookie: cookie.value, csrf: body.csrf_token })).status).toBe(200);
    expect((await t.api(`/api/tokens/${made.body.token.id}`)).status).toBe(404);
  });

  it('refuses a cookie change without the right CSRF token, and changes nothing', async () => {
    const { cookie, body } = await cookieLogin('root', ROOT_PASSWORD);
    const other = await cookieLogin('root', ROOT_PASSWORD);
    const before = await rootBalance();
    const { token } = await (await t.api('/api/tokens', { method: 'POST', json: { user_id: 1, name: 'must survive' } })).json();

    const attempts: Array<[string, string, unknown]> = [
      ['PATCH', '/api/users/1', { balance: before + 1000 }],
      ['POST', '/api/users', { username: 'csrf-victim', password: 'csrf-password' }],
      ['DELETE', `/api/tokens/${token.id}`, undefined],
    ];
    for (const [method, path, json] of attempts) {
      for (const csrf of [undefined, other.body.csrf_token, `${body.csrf_token}x`]) {
        const r = await browser(path, { method, cookie: cookie.value, csrf, json });
        expect(r.status, `${method} ${path} csrf=${csrf}`).toBe(403);
        expect(r.body.error.code).toBe('csrf_failed');
        expect(r.body.error.message).toContain('X-CSRF-Token');
      }
    }
    expect(await rootBalance()).toBe(before);
    // The user was not made: its log-in fails.
    expect((await browser('/api/auth/login', { method: 'POST', json: { username: 'csrf-victim', password: 'csrf-password' } })).status).toBe(401);
    expect((await t.api(`/api/tokens/${token.id}`)).status).toBe(200);
  });

  it('bearer clients are unchanged: the session in the body, no cookie, no CSRF, and a bearer wins over a cookie', async () => {
    const login = await browser('/api/auth/login', { method: 'POST', json: { username: 'root', password: ROOT_PASSWORD } });
    expect(login.status).toBe(200);
    expect(Object.keys(login.body).sort()).toEqual(['expires_at', 'session', 'user']);
    expect(login.headers.getSetCookie()).toEqual([]);
    const session = login.body.session as string;
    const me = await t.api('/api/auth/me', { token: session });
    expect(await me.json()).not.toHaveProperty('csrf_token');
    const patched = await t.api('/api/users/1', { method: 'PATCH', token: session, json: { balance: 120 } });
    expect(patched.status).toBe(200);
    expect(await rootBalance()).toBe(120);

    // A wrong bearer is a 401 even beside a valid cookie: Authorization decides.
    const { cookie } = await cookieLogin('root', ROOT_PASSWORD);
    const mixed = await browser('/api/users', { cookie: cookie.value, headers: { authorization: 'Bearer kbs-not-a-session' } });
    expect(mixed.status).toBe(401);
    // A cookie that holds an API token is no session.
    expect((await browser('/api/users', { cookie: 'sk-test-root-token-0123456789' })).status).toBe(401);
  });

  it('log-out by cookie needs the CSRF token, ends the session and clears the cookie', async () => {
    const { cookie, body } = await cookieLogin('root', ROOT_PASSWORD);
    const forged = await browser('/api/auth/logout', { method: 'POST', cookie: cookie.value });
    expect(forged.status).toBe(403);
    expect((await browser('/api/auth/me', { cookie: cookie.value })).status).toBe(200);

    const out = await browser('/api/auth/logout', { method: 'POST', cookie: cookie.value, csrf: body.csrf_token });
    expect(out.status).toBe(200);
    const cleared = sessionCookie(out.headers);
    expect(cleared.value).toBe('');
    expect(Date.parse(cleared.attrs.find((a) => /^expires=/i.test(a))!.slice('expires='.length))).toBeLessThan(Date.now());
    const after = await browser('/api/auth/me', { cookie: cookie.value });
    expect(after.status).toBe(401);
    expect(after.body.error.message).toContain('sign in again');
  });

  it("a plain user's cookie reaches /api/auth/me, its own tokens and log-out, and nothing else", async () => {
    const made = await t.api('/api/users', { method: 'POST', json: { username: 'plain-console', password: 'plain-password' } });
    expect(made.status).toBe(201);
    const plainId = (await made.json()).id as number;
    const { cookie, body } = await cookieLogin('plain-console', 'plain-password');
    expect(body.user).toMatchObject({ username: 'plain-console', role: 'user' });
    const me = await browser('/api/auth/me', { cookie: cookie.value });
    expect(me.status).toBe(200);
    expect(me.body).toMatchObject({ user: { role: 'user' }, csrf_token: body.csrf_token });
    // Its own tokens (own-tokens.test.ts has the rest): an empty list, and a token made with the CSRF token.
    expect((await browser('/api/tokens', { cookie: cookie.value })).body).toMatchObject({ data: [], total: 0 });
    const own = await browser('/api/tokens', { method: 'POST', cookie: cookie.value, csrf: body.csrf_token, json: { name: 'mine' } });
    expect(own.status).toBe(201);
    expect(own.body.token.user_id).toBe(plainId);
    expect((await browser('/api/tokens', { method: 'POST', cookie: cookie.value, json: { name: 'no csrf' } })).status).toBe(403);
    for (const path of ['/api/users', '/api/channels', '/api/logs', '/api/prices', '/api/dashboard']) {
      const r = await browser(path, { cookie: cookie.value });
      expect(r.status, path).toBe(403);
      expect(r.body.error.message, path).toContain('administrator');
    }
    // Not even its own balance.
    const self = await browser(`/api/users/${plainId}`, { method: 'PATCH', cookie: cookie.value, csrf: body.csrf_token, json: { balance: 1e6 } });
    expect(self.status).toBe(403);
    expect((await browser('/api/auth/logout', { method: 'POST', cookie: cookie.value, csrf: body.csrf_token })).status).toBe(200);
    expect((await browser('/api/auth/me', { cookie: cookie.value })).status).toBe(401);
  });

  it('an expired session is a 401, by cookie and by bearer', async () => {
    const { cookie } = await cookieLogin('root', ROOT_PASSWORD);
    expect((await browser('/api/auth/me', { cookie: cookie.value })).status).toBe(200);
    await t.gw.services.store.db
      .updateTable('sessions')
      .set({ expires_at: Date.now() - 1 })
      .where('token_hash', '=', hashKey(cookie.value))
      .execute();
    for (const path of ['/api/auth/me', '/api/users']) {
      const r = await browser(path, { cookie: cookie.value });
      expect(r.status, path).toBe(401);
      expect(r.body.error.code).toBe('unauthorized');
    }
    expect((await t.api('/api/auth/me', { token: cookie.value })).status).toBe(401);
  });
});
