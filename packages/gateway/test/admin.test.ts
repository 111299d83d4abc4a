// The admin API over real HTTP: log-in, the admin guard, users, tokens,
// channels (keys never shown), channel tests, prices and logs.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROOT_PASSWORD, ROOT_TOKEN, startTestGateway, type TestGateway } from './helpers.js';

const MODELS = ['sim-chat', 'sim-503', 'sim-400', 'sim-500', 'sim-embed-384', 'sim-rerank'];

describe('admin API', () => {
  let t: TestGateway;
  beforeAll(async () => {
    t = await startTestGateway({ models: MODELS });
  });
  afterAll(async () => {
    await t?.close();
  });

  async function call(path: string, init: { method?: string; json?: unknown; token?: string } = {}) {
    const res = await t.api(path, init);
    const text = await res.text();
    return { status: res.status, text, body: text ? JSON.parse(text) : undefined, headers: res.headers };
  }

  function expectBadField(r: { status: number; body: any }, param: string) {
    expect(r.status, JSON.stringify(r.body)).toBe(400);
    expect(r.body.error.param).toBe(param);
    expect(r.body.error.type).toBe('invalid_request_error');
    expect(r.body.error.message).toContain(`'${param}'`);
    expect(r.body.error.message).toMatch(/\(request id: \d{17}[0-9a-f]{12}\)$/);
  }

  describe('auth', () => {
    it('logs in with the right password and the session works until log-out', async () => {
      const login = await call('/api/auth/login', { method: 'POST', json: { username: 'root', password: ROOT_PASSWORD } });
      expect(login.status).toBe(200);
      expect(login.body.session).toMatch(/^kbs-/);
      expect(login.body.user).toMatchObject({ username: 'root', role: 'root' });
      expect(login.body.user.password_hash).toBeUndefined();
      const me = await call('/api/auth/me', { token: login.body.session });
      expect(me.status).toBe(200);
      expect(me.body).toMatchObject({ via: 'session', user: { username: 'root' } });
      expect((await call('/api/users', { token: login.body.session })).status).toBe(200);
      expect((await call('/api/auth/logout', { method: 'POST', token: login.body.session })).status).toBe(200);
      expect((await call('/api/auth/me', { token: login.body.session })).status).toBe(401);
    });

    it('refuses a wrong password or a missing field', async () => {
      const bad = await call('/api/auth/login', { method: 'POST', json: { username: 'root', password: 'nope-nope' } });
      expect(bad.status).toBe(401);
      expect(bad.body.error.message).toContain('Wrong username or password');
      const unknown = await call('/api/auth/login', { method: 'POST', json: { username: 'nobody', password: 'whatever1' } });
      expect(unknown.status).toBe(401);
      expectBadField(await call('/api/auth/login', { method: 'POST', json: { username: 'root' } }), 'password');
    });

    it('answers 401 without credentials or with unknown ones; the root token is an admin', async () => {
      const none = await fetch(`${t.url}/api/users`);
      expect(none.status).toBe(401);
      expect((await none.json()).error.code).toBe('unauthorized');
      expect((await call('/api/users', { token: 'sk-not-a-real-token' })).status).toBe(401);
      const me = await call('/api/auth/me', { token: ROOT_TOKEN });
      expect(me.body).toMatchObject({ via: 'token', user: { role: 'root' } });
    });

    it('shows a token its balance as the store has it, while a lease is held', async () => {
      // A relay request through the token caches its user and leaves a lease held for the next ones.
      expect(
        (await t.api('/v1/chat/completions', { method: 'POST', json: { model: 'sim-chat', messages: [{ role: 'user', content: 'hold a lease' }] } })).status,
      ).toBe(200);
      const id = (await call('/api/auth/me', { token: ROOT_TOKEN })).body.user.id;
      const before = (await call(`/api/users/${id}`)).body.balance;
      // The request's charge is written just after its answer: wait for it, so both reads below see the same books.
      let fresh = before;
      for (let i = 0; i < 100 && fresh === before; i++) {
        await new Promise((r) => setTimeout(r, 20));
        fresh = (await call(`/api/users/${id}`)).body.balance;
      }
      const me = await call('/api/auth/me', { token: ROOT_TOKEN });
      expect(me.body.user.balance).toBe(fresh);
    });

    it("gives a non-admin user's token and session 403", async () => {
      const u = await call('/api/users', { method: 'POST', json: { username: 'plain', password: 'plain-password' } });
      expect(u.status).toBe(201);
      const tok = await call('/api/tokens', { method: 'POST', json: { user_id: u.body.id, name: 'plain token' } });
      expect(tok.status).toBe(201);
      const r = await call('/api/users', { token: tok.body.key });
      expect(r.status).toBe(403);
      expect(r.body.error.code).toBe('forbidden');
      const login = await call('/api/auth/login', { method: 'POST', json: { username: 'plain', password: 'plain-password' } });
      expect(login.status).toBe(200);
      expect((await call('/api/channels', { token: login.body.session })).status).toBe(403);
      // The same token still works on the relay.
      expect((await t.api('/v1/models', { token: tok.body.key })).status).toBe(200);
    });
  });

  describe('users', () => {
    it('creates, reads, lists, edits (balance too) and deletes a user', async () => {
      // A user is put only in a group that exists (groups.test.ts).
      expect((await call('/api/groups/vip', { method: 'PUT', json: { ratio: 1 } })).status).toBe(200);
      const created = await call('/api/users', {
        method: 'POST',
        json: { username: 'alice', password: 'alice-password', group: 'vip', balance: 12.5 },
      });
      expect(created.status).toBe(201);
      expect(created.body).toMatchObject({ username: 'alice', role: 'user', status: 'enabled', group: 'vip', balance: 12.5, balance_micros: 12_500_000 });
      const id = created.body.id;

      const patched = await call(`/api/users/${id}`, { method: 'PATCH', json: { balance: 3.25, status: 'disabled' } });
      expect(patched.status).toBe(200);
      const got = await call(`/api/users/${id}`);
      expect(got.body).toMatchObject({ balance: 3.25, balance_micros: 3_250_000, status: 'disabled' });

      const list = await call('/api/users?limit=500');
      expect(list.body.total).toBeGreaterThanOrEqual(2);
      expect(list.body.data.find((u: any) => u.id === id)).toMatchObject({ username: 'alice', balance: 3.25 });
      expect(list.text).not.toContain('password');

      expect((await call('/api/users', { method: 'POST', json: { username: 'alice', password: 'another-pass' } })).status).toBe(409);

      const del = await call(`/api/users/${id}`, { method: 'DELETE' });
      expect(del.status).toBe(200);
      expect((await call(`/api/users/${id}`)).status).toBe(404);
      expect((await call(`/api/users/${id}`, { method: 'DELETE' })).status).toBe(404);
    });

    it('names the field of bad input', async () => {
      expectBadField(await call('/api/users', { method: 'POST', json: { username: 'bob' } }), 'password');
      expectBadField(await call('/api/users', { method: 'POST', json: { username: 'bob', password: 'bob-password', balance: -1 } }), 'balance');
      expectBadField(await call('/api/users', { method: 'POST', json: { username: 'bob', password: 'bob-password', role: 'root' } }), 'role');
      expectBadField(await call('/api/users', { method: 'POST', json: { username: 'bob', password: 'bob-password', balanse: 1 } }), 'balanse');
      expectBadField(await call('/api/users/1', { method: 'PATCH', json: { status: 'gone' } }), 'status');
      expectBadField(await call('/api/users/abc'), 'id');
      // The path's id is named before a bad body; a bad body with no credentials is a 401.
      expectBadField(await call('/api/users/abc', { method: 'PATCH', json: { status: 'gone' } }), 'id');
      expectBadField(await call('/api/channels/abc', { method: 'PATCH', json: { name: 42 } }), 'id');
      expect((await call('/api/users', { method: 'POST', json: { username: 'bob' }, token: '' })).status).toBe(401);
      expectBadField(await call('/api/users?limit=0'), 'limit');
    });

    it('protects root', async () => {
      expect((await call('/api/users/1', { method: 'PATCH', json: { status: 'disabled' } })).status).toBe(403);
      expect((await call('/api/users/1', { method: 'DELETE' })).status).toBe(403);
    });

    it('lets an admin manage plain users only; root manages admins', async () => {
      const admin = await call('/api/users', { method: 'POST', json: { username: 'ops', password: 'ops-password', role: 'admin' } });
      expect(admin.status).toBe(201);
      const other = await call('/api/users', { method: 'POST', json: { username: 'ops2', password: 'ops-password', role: 'admin' } });
      const session = (await call('/api/auth/login', { method: 'POST', json: { username: 'ops', password: 'ops-password' } })).body.session;
      const as = (path: string, init: { method?: string; json?: unknown } = {}) => call(path, { ...init, token: session });
      expect((await as('/api/users')).status).toBe(200);
      const plain = await as('/api/users', { method: 'POST', json: { username: 'ops-made', password: 'plain-password', balance: 1 } });
      expect(plain.status).toBe(201);
      expect((await as(`/api/users/${plain.body.id}`, { method: 'PATCH', json: { balance: 2 } })).body.balance).toBe(2);
      expect((await as('/api/users', { method: 'POST', json: { username: 'ops3', password: 'ops-password', role: 'admin' } })).status).toBe(403);
      expect((await as(`/api/users/${other.body.id}`, { method: 'PATCH', json: { balance: 5 } })).status).toBe(403);
      expect((await as('/api/users/1', { method: 'PATCH', json: { password: 'taken-over!' } })).status).toBe(403);
      expect((await as('/api/tokens', { method: 'POST', json: { user_id: 1, name: 'root impersonation' } })).status).toBe(403);
      expect((await as(`/api/users/${admin.body.id}`, { method: 'DELETE' })).status).toBe(403);
      // Disabling the admin ends its access at once: its sessions are deleted.
      expect((await call(`/api/users/${admin.body.id}`, { method: 'PATCH', json: { status: 'disabled' } })).status).toBe(200);
      expect((await as('/api/users')).status).toBe(401);
    });

    it('answers a broken JSON body with 400, not a crash', async () => {
      const res = await fetch(`${t.url}/api/users`, {
        method: 'POST',
        headers: { authorization: `Bearer ${ROOT_TOKEN}`, 'content-type': 'application/json' },
        body: '{"username": ',
      });
      expect(res.status).toBe(400);
      expect((await res.json()).error.code).toBe('invalid_json');
    });
  });

  describe('tokens', () => {
    it('shows the key once, at creation, and never again', async () => {
      const created = await call('/api/tokens', {
        method: 'POST',
        json: { name: 'ci', quota_limit: 2.5, models: ['sim-chat'], ip_allow: '127.0.0.1, ::1, 10.0.0.0/8', expires_at: Date.now() + 86_400_000 },
      });
      expect(created.status).toBe(201);
      const { key, token } = created.body;
      expect(key).toMatch(/^sk-/);
      expect(token).toMatchObject({ name: 'ci', quota_limit_micros: 2_500_000, models: ['sim-chat'], ip_allow: '127.0.0.1, ::1, 10.0.0.0/8' });
      expect(token.key_hint).toBe(`${key.slice(0, 3)}...${key.slice(-4)}`);
      expect(token.key).toBeUndefined();

      const list = await call('/api/tokens');
      expect(list.body.data.some((x: any) => x.id === token.id)).toBe(true);
      expect(list.text).not.toContain(key);
      expect(list.text).not.toContain(ROOT_TOKEN);
      expect(list.text).not.toContain('key_hash');
      const one = await call(`/api/tokens/${token.id}`);
      expect(one.text).not.toContain(key);
      const patched = await call(`/api/tokens/${token.id}`, { method: 'PATCH', json: { name: 'ci-2', quota_limit: null, models: [] } });
      expect(patched.status).toBe(200);
      expect(patched.body).toMatchObject({ name: 'ci-2', quota_limit_micros: null, models: [] });
      expect(patched.text).not.toContain(key);

      // The key is a working API token (its allow-list has 127.0.0.1), until it is disabled.
      expect((await t.api('/v1/models', { token: key })).status).toBe(200);
      expect((await call(`/api/tokens/${token.id}`, { method: 'PATCH', json: { status: 'disabled' } })).status).toBe(200);
      expect((await t.api('/v1/models', { token: key })).status).toBe(401);
      expect((await call(`/api/tokens/${token.id}`, { method: 'DELETE' })).status).toBe(200);
      expect((await call(`/api/tokens/${token.id}`)).status).toBe(404);
    });

    it("marks the platform's token (INITIAL_ROOT_TOKEN's), and only it, in every answer", async () => {
      const list = (await call('/api/tokens')).body.data as Array<{ id: number; name: string; key_hint: string; platform: boolean }>;
      const marked = list.filter((x) => x.platform);
      // The token INITIAL_ROOT_TOKEN made (ROOT_TOKEN), named for what it is.
      expect(marked.map((x) => [x.name, x.key_hint])).toEqual([['kbchat platform', `${ROOT_TOKEN.slice(0, 3)}...${ROOT_TOKEN.slice(-4)}`]]);
      expect((await call(`/api/tokens/${marked[0]!.id}`)).body.platform).toBe(true);
      const other = await call('/api/tokens', { method: 'POST', json: { name: 'not the platform' } });
      expect(other.body.token.platform).toBe(false);
      expect((await call(`/api/tokens/${other.body.token.id}`, { method: 'PATCH', json: { name: 'still not' } })).body.platform).toBe(false);
      await call(`/api/tokens/${other.body.token.id}`, { method: 'DELETE' });
    });

    it('lists tokens of one user', async () => {
      const u = await call('/api/users', { method: 'POST', json: { username: 'tok-owner', password: 'owner-password' } });
      await call('/api/tokens', { method: 'POST', json: { user_id: u.body.id, name: 'a' } });
      await call('/api/tokens', { method: 'POST', json: { user_id: u.body.id, name: 'b' } });
      const list = await call(`/api/tokens?user_id=${u.body.id}`);
      expect(list.body.data.map((x: any) => x.name)).toEqual(['a', 'b']);
      expect((await call('/api/tokens', { method: 'POST', json: { user_id: 99999, name: 'x' } })).status).toBe(404);
    });

    it('searches users and tokens by name on the server (?q=), any case, wildcards taken literally', async () => {
      const a = await call('/api/users', { method: 'POST', json: { username: 'Search_Target', password: 'target-password' } });
      await call('/api/users', { method: 'POST', json: { username: 'searchXtarget', password: 'other-password' } });
      await call('/api/tokens', { method: 'POST', json: { user_id: a.body.id, name: 'Laptop 100%' } });
      await call('/api/tokens', { method: 'POST', json: { user_id: a.body.id, name: 'laptop 1000' } });
      const users = await call('/api/users?q=search_t');
      expect(users.body).toMatchObject({ total: 1, data: [{ username: 'Search_Target' }] });
      expect((await call('/api/users?q=SEARCH')).body.total).toBe(2);
      expect((await call(`/api/tokens?q=${encodeURIComponent('100%')}`)).body.data.map((x: any) => x.name)).toEqual(['Laptop 100%']);
      const both = await call(`/api/tokens?q=LAPTOP&user_id=${a.body.id}`);
      expect([both.body.total, both.body.data.map((x: any) => x.name)]).toEqual([2, ['Laptop 100%', 'laptop 1000']]);
      expect((await call('/api/tokens?q=nothing-like-it')).body).toMatchObject({ total: 0, data: [] });
      expectBadField(await call(`/api/users?q=${'x'.repeat(101)}`), 'q');
    });

    it('names the field of bad quota, expiry, models and ip_allow', async () => {
      const post = (json: unknown) => call('/api/tokens', { method: 'POST', json });
      expectBadField(await post({ name: 'x', ip_allow: '10.0.0.300/8' }), 'ip_allow');
      expectBadField(await post({ name: 'x', ip_allow: '10.0.0.0/33' }), 'ip_allow');
      expectBadField(await post({ name: 'x', quota_limit: -1 }), 'quota_limit');
      expectBadField(await post({ name: 'x', quota_limit: 'lots' }), 'quota_limit');
      expectBadField(await post({ name: 'x', expires_at: Date.now() - 1000 }), 'expires_at');
      expectBadField(await post({ name: 'x', expires_at: 1.5 }), 'expires_at');
      expectBadField(await post({ name: 'x', models: 'sim-chat' }), 'models');
      expectBadField(await post({ name: 'x', models: ['sim-chat', ''] }), 'models[1]');
      expectBadField(await post({ ip_allow: '::1' }), 'name');
      expectBadField(await call('/api/tokens/1', { method: 'PATCH', json: { ip_allow: 'not-an-ip' } }), 'ip_allow');
    });
  });

  describe('channels', () => {
    const SECRET = 'sk-admin-test-channel-secret-4f9a1c';
    const SECRET2 = 'sk-admin-test-channel-secret-second-77e2';

    it('creates, reads, edits and deletes a channel without ever showing its key', async () => {
      const responses: string[] = [];
      const rec = async (path: string, init?: { method?: string; json?: unknown }) => {
        const r = await call(path, init);
        responses.push(r.text);
        return r;
      };
      const created = await rec('/api/channels', {
        method: 'POST',
        json: {
          name: 'second sim',
          type: 'openai',
          base_url: `${t.sim.url}/v1`,
          key: SECRET,
          models: ['alias-chat'],
          model_mapping: { 'alias-chat': 'sim-chat' },
          options: { streamUsage: true },
          priority: 5,
          weight: 3,
        },
      });
      expect(created.status).toBe(201);
      expect(created.body).toMatchObject({
        name: 'second sim',
        key_set: true,
        models: ['alias-chat'],
        priority: 5,
        weight: 3,
        status: 'enabled',
        source: 'admin',
      });
      const id = created.body.id;
      await rec('/api/channels');
      await rec(`/api/channels/${id}`);
      const patched = await rec(`/api/channels/${id}`, { method: 'PATCH', json: { key: SECRET2, weight: 0, status: 'disabled' } });
      expect(patched.body).toMatchObject({ weight: 0, status: 'disabled', key_set: true });
      await rec(`/api/channels/${id}`, { method: 'PATCH', json: { status: 'enabled' } });
      await rec(`/api/channels/${id}/test`, { method: 'POST' });
      expect((await rec(`/api/channels/${id}`, { method: 'DELETE' })).status).toBe(200);
      expect((await rec(`/api/channels/${id}`)).status).toBe(404);
      for (const text of responses) {
        expect(text).not.toContain(SECRET);
        expect(text).not.toContain(SECRET2);
        expect(text).not.toContain('sk-sim-upstream-key');
        expect(text).not.toContain('key_cipher');
      }
    });

    it('names the field of bad channel input', async () => {
      const base = { type: 'openai', base_url: `${t.sim.url}/v1`, key: 'k', models: ['m'] };
      const post = (json: unknown) => call('/api/channels', { method: 'POST', json });
      expectBadField(await post({ ...base, weight: -1 }), 'weight');
      expectBadField(await post({ ...base, priority: 1.5 }), 'priority');
      expectBadField(await post({ ...base, type: 'nope' }), 'type');
      expectBadField(await post({ ...base, models: [] }), 'models');
      expectBadField(await post({ ...base, models: 'm' }), 'models');
      expectBadField(await post({ ...base, base_url: 'ftp://x' }), 'base_url');
      expectBadField(await post({ ...base, model_mapping: { m: 3 } }), 'model_mapping.m');
      expectBadField(await post({ ...base, status: 'on' }), 'status');
      expectBadField(await post({ ...base, options: 'fast' }), 'options');
      expect((await call('/api/channels/424242', { method: 'PATCH', json: { weight: 1 } })).status).toBe(404);
    });

    it('tests every model of the SIM channel, with the exact upstream error', async () => {
      const list = await call('/api/channels');
      const sim = list.body.data.find((c: any) => c.env_provider === 'SIM');
      expect(sim).toBeDefined();
      const r = await call(`/api/channels/${sim.id}/test`, { method: 'POST' });
      expect(r.status).toBe(200);
      const results = r.body.data as any[];
      expect(results.map((x) => x.model).sort()).toEqual([...MODELS].sort());
      for (const x of results) {
        expect(typeof x.ok).toBe('boolean');
        expect(typeof x.latency_ms).toBe('number');
        expect(x.latency_ms).toBeGreaterThanOrEqual(0);
      }
      const by = Object.fromEntries(results.map((x) => [x.model, x]));
      for (const ok of ['sim-chat', 'sim-embed-384', 'sim-rerank']) expect(by[ok], ok).toMatchObject({ ok: true, status: 200 });
      expect(by['sim-embed-384'].endpoint).toBe('embeddings');
      expect(by['sim-rerank'].endpoint).toBe('rerank');
      expect(by['sim-503']).toMatchObject({ ok: false, status: 503, error: 'The server is overloaded or not ready yet.' });
      expect(by['sim-400']).toMatchObject({ ok: false, status: 400 });

      const one = await call(`/api/channels/${sim.id}/test`, { method: 'POST', json: { model: 'sim-chat' } });
      expect(one.body.data).toHaveLength(1);
      expectBadField(await call(`/api/channels/${sim.id}/test`, { method: 'POST', json: { model: 'not-served' } }), 'model');
    });

    it('re-enables auto-disabled models, by hand or by a re-test', async () => {
      const { health, registry } = t.gw.services;
      const sim = (await call('/api/channels')).body.data.find((c: any) => c.env_provider === 'SIM');
      const disable = async (model: string) => {
        for (let i = 0; i < 20 && !registry.isModelDisabled(sim.id, model); i++) await health.recordFailure(sim.id, model, 'test failure');
        expect(registry.isModelDisabled(sim.id, model)).toBeDefined();
      };
      await disable('sim-503');
      await disable('sim-400');
      const before = await call(`/api/channels/${sim.id}`);
      expect(before.body.disabled_models.map((d: any) => d.model).sort()).toEqual(['sim-400', 'sim-503']);
      const one = await call(`/api/channels/${sim.id}/enable-models`, { method: 'POST', json: { model: 'sim-400' } });
      expect(one.status).toBe(200);
      expect(one.body.enabled).toEqual(['sim-400']);
      expect(one.body.channel.disabled_models.map((d: any) => d.model)).toEqual(['sim-503']);
      const all = await call(`/api/channels/${sim.id}/enable-models`, { method: 'POST' });
      expect(all.body.enabled).toEqual(['sim-503']);
      expect(all.body.channel.disabled_models).toEqual([]);

      // The periodic re-test enables what answers again and leaves what still fails.
      await disable('sim-chat');
      await disable('sim-503');
      const retest = await call('/api/channels/retest-disabled', { method: 'POST' });
      expect(retest.status).toBe(200);
      const by = Object.fromEntries(retest.body.data.map((r: any) => [r.model, r]));
      expect(by['sim-chat']).toMatchObject({ channel_id: sim.id, enabled: true });
      expect(by['sim-503']).toMatchObject({ enabled: false, error: 'The server is overloaded or not ready yet.' });
      await call(`/api/channels/${sim.id}/enable-models`, { method: 'POST' });
      expect(registry.disabledModels()).toEqual([]);
    });
  });

  describe('prices', () => {
    it('stores prices and converts one-api ratios', async () => {
      const put = await call('/api/prices/sim-chat', { method: 'PUT', json: { input_price: 1.5, output_price: 6 } });
      expect(put.status).toBe(200);
      expect(put.body).toMatchObject({ model: 'sim-chat', input_price: 1.5, output_price: 6, model_ratio: 0.75, completion_ratio: 4 });
      const ratio = await call('/api/prices/Qwen/Qwen2.5-7B-Instruct', { method: 'PUT', json: { model_ratio: 0.5, completion_ratio: 3 } });
      expect(ratio.body).toMatchObject({ model: 'Qwen/Qwen2.5-7B-Instruct', input_price: 1, output_price: 3 });
      const r2 = await call('/api/prices/gpt-x', { method: 'PUT', json: { model_ratio: 2 } });
      expect(r2.body).toMatchObject({ input_price: 4, output_price: 4 });

      const list = await call('/api/prices');
      const by = Object.fromEntries(list.body.data.map((p: any) => [p.model, p]));
      expect(by['sim-chat']).toMatchObject({ input_price: 1.5, output_price: 6 });
      expect(by['Qwen/Qwen2.5-7B-Instruct']).toMatchObject({ input_price: 1, output_price: 3 });
      expect(t.gw.services.prices.priceOf('Qwen/Qwen2.5-7B-Instruct')).toMatchObject({ inputPrice: 1_000_000, outputPrice: 3_000_000 });
      expect(list.body.default).toMatchObject({ input_price: 2, output_price: 8 });

      expect((await call('/api/prices/Qwen%2FQwen2.5-7B-Instruct', { method: 'DELETE' })).status).toBe(200);
      expect((await call('/api/prices/Qwen/Qwen2.5-7B-Instruct', { method: 'DELETE' })).status).toBe(404);
      expect((await call('/api/prices/gpt-x', { method: 'DELETE' })).status).toBe(200);
    });

    it('names the field of a bad price', async () => {
      const put = (json: unknown) => call('/api/prices/m', { method: 'PUT', json });
      expectBadField(await put({ input_price: -1, output_price: 1 }), 'input_price');
      expectBadField(await put({ input_price: 1 }), 'output_price');
      expectBadField(await put({ model_ratio: 'x' }), 'model_ratio');
      expectBadField(await put({ completion_ratio: 2 }), 'model_ratio');
      expectBadField(await put({ model_ratio: 1, input_price: 1 }), 'model_ratio');
    });
  });

  describe('logs', () => {
    it('lists logs filtered by model and status, without bodies', async () => {
      const chat = (model: string) => t.api('/v1/chat/completions', { method: 'POST', json: { model, messages: [{ role: 'user', content: 'log me' }] } });
      const ok = await chat('sim-chat');
      expect(ok.status).toBe(200);
      const bad = await chat('sim-400');
      expect(bad.status).toBe(400);
      const okId = ok.headers.get('x-request-id')!;
      const badId = bad.headers.get('x-request-id')!;

      const errs = await call('/api/logs?model=sim-400&status=error');
      expect(errs.status).toBe(200);
      expect(errs.body.data.length).toBeGreaterThanOrEqual(1);
      for (const row of errs.body.data) {
        expect(row.model).toBe('sim-400');
        expect(row.status).toBeGreaterThanOrEqual(400);
        expect(row).not.toHaveProperty('request_body');
      }
      expect(errs.body.data.map((r: any) => r.request_id)).toContain(badId);
      expect(errs.body.data[0]).toMatchObject({ endpoint: 'chat', is_stream: false, error: expect.stringContaining('unknown role') });

      const oks = await call('/api/logs?model=sim-chat&status=ok');
      expect(oks.body.data.map((r: any) => r.request_id)).toContain(okId);
      for (const row of oks.body.data) expect(row).toMatchObject({ model: 'sim-chat', status: 200 });
      expect((await call('/api/logs?model=sim-chat&status=error')).body.data.map((r: any) => r.request_id)).not.toContain(okId);
      expect((await call('/api/logs?status=error')).text).not.toContain('request_body');

      const byId = await call(`/api/logs?request_id=${okId}`);
      expect(byId.body.data).toHaveLength(1);
      expect(byId.body.data[0].prompt_tokens).toBeGreaterThan(0);
      const detail = await call(`/api/logs/${okId}`);
      expect(detail.body).toMatchObject({ request_id: okId, request_body: null, replayable: false });

      expectBadField(await call('/api/logs?status=bad'), 'status');
      expectBadField(await call('/api/logs?limit=501'), 'limit');
      expectBadField(await call('/api/logs?user_id=x'), 'user_id');
      expect((await call('/api/logs?limit=500')).status).toBe(200);
      expect((await call('/api/logs/00000000000000000aaaaaaaaaaaa')).status).toBe(404);
    });
  });
});
