// A plain user manages its own API tokens through the admin API, signed in
// (the console's session): it sees, creates, edits and deletes only its own,
// with totals for paging; every other admin route stays closed to it, and its
// API tokens cannot manage tokens at all (a restricted token must not mint an
// unrestricted one).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestGateway, type TestGateway } from './helpers.js';

type Call = { status: number; body: any; text: string };

describe("plain users' own tokens", () => {
  let t: TestGateway;
  const call = async (path: string, init: { method?: string; json?: unknown; token?: string } = {}): Promise<Call> => {
    const res = await t.api(path, init);
    const text = await res.text();
    return { status: res.status, text, body: text ? JSON.parse(text) : undefined };
  };
  let alice = 0;
  let bob = 0;
  let aliceSession = '';
  const asAlice = (path: string, init: { method?: string; json?: unknown } = {}) => call(path, { ...init, token: aliceSession });

  beforeAll(async () => {
    t = await startTestGateway({ models: ['sim-chat'] });
    alice = (await call('/api/users', { method: 'POST', json: { username: 'own-alice', password: 'alice-password' } })).body.id;
    bob = (await call('/api/users', { method: 'POST', json: { username: 'own-bob', password: 'bob-password' } })).body.id;
    aliceSession = (await call('/api/auth/login', { method: 'POST', json: { username: 'own-alice', password: 'alice-password' } })).body.session;
  });
  afterAll(async () => {
    await t?.close();
  });

  it('lists, creates, edits and deletes only its own tokens, with a total', async () => {
    const bobs = (await call('/api/tokens', { method: 'POST', json: { user_id: bob, name: "bob's" } })).body.token;
    const rootTotal = (await call('/api/tokens')).body.total;
    expect(rootTotal).toBeGreaterThanOrEqual(2); // root's own token and bob's

    const created = await asAlice('/api/tokens', { method: 'POST', json: { name: 'laptop', quota_limit: 3, models: ['sim-chat'] } });
    expect(created.status).toBe(201);
    expect(created.body.token).toMatchObject({ user_id: alice, name: 'laptop', quota_limit_micros: 3_000_000 });
    await asAlice('/api/tokens', { method: 'POST', json: { name: 'phone' } });

    const list = await asAlice('/api/tokens');
    expect(list.status).toBe(200);
    expect(list.body.data.map((x: any) => x.name)).toEqual(['laptop', 'phone']);
    expect(list.body.total).toBe(2);
    expect((await asAlice('/api/tokens?offset=1&limit=1')).body).toMatchObject({ total: 2, data: [{ name: 'phone' }] });

    // Someone else's token, by any route, is refused; nothing of it changes.
    expect((await asAlice(`/api/tokens/${bobs.id}`)).status).toBe(403);
    expect((await asAlice(`/api/tokens/${bobs.id}`, { method: 'PATCH', json: { name: 'mine now' } })).status).toBe(403);
    expect((await asAlice(`/api/tokens/${bobs.id}`, { method: 'DELETE' })).status).toBe(403);
    expect((await asAlice(`/api/tokens?user_id=${bob}`)).status).toBe(403);
    expect((await asAlice('/api/tokens', { method: 'POST', json: { user_id: bob, name: 'for bob' } })).status).toBe(403);
    expect((await call(`/api/tokens/${bobs.id}`)).body.name).toBe("bob's");

    const id = created.body.token.id;
    const patched = await asAlice(`/api/tokens/${id}`, { method: 'PATCH', json: { status: 'disabled' } });
    expect(patched.body.status).toBe('disabled');
    expect((await asAlice(`/api/tokens/${id}`, { method: 'DELETE' })).status).toBe(200);
    expect((await asAlice('/api/tokens')).body.total).toBe(1);
  });

  it('keeps every other admin route closed to a plain user', async () => {
    for (const path of ['/api/users', '/api/channels', '/api/logs', '/api/dashboard', '/api/prices']) {
      const r = await asAlice(path);
      expect(r.status, path).toBe(403);
      expect(r.body.error.code).toBe('forbidden');
    }
  });

  it("refuses a plain user's API token on the token routes (and a bad body names its field)", async () => {
    const { key } = (await asAlice('/api/tokens', { method: 'POST', json: { name: 'restricted', models: ['sim-chat'] } })).body;
    const viaToken = await call('/api/tokens', { method: 'POST', json: { name: 'wider' }, token: key });
    expect(viaToken.status).toBe(403);
    expect(viaToken.body.error.message).toMatch(/signed in/);
    expect((await call('/api/tokens', { token: key })).status).toBe(403);
    expect((await asAlice('/api/tokens')).body.data.map((x: any) => x.name)).not.toContain('wider');

    const bad = await asAlice('/api/tokens', { method: 'POST', json: { name: 'x', quota_limit: -1 } });
    expect(bad.status).toBe(400);
    expect(bad.body.error.param).toBe('quota_limit');
  });
});
