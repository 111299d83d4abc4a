// Top-up codes over HTTP on a real gateway: made by an administrator (shown
// once, kept as a hash with a hint), listed with who redeemed them, disabled,
// enabled and deleted; a plain user redeems one into their own balance
// exactly once (twenty redemptions of one code at the same moment credit it
// once), each redemption a row of the books; bad input names the field.
// Two gateway processes redeeming one code at once: multiprocess.test.ts.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestGateway, type TestGateway } from './helpers.js';

describe('top-up codes', () => {
  let t: TestGateway;
  let plain: { id: number; session: string };
  beforeAll(async () => {
    t = await startTestGateway({ models: ['sim-chat'] });
    const made = await call('/api/users', { method: 'POST', json: { username: 'topper', password: 'topper-password', balance: 1 } });
    const login = await call('/api/auth/login', { method: 'POST', json: { username: 'topper', password: 'topper-password' } });
    plain = { id: made.body.id, session: login.body.session };
  });
  afterAll(async () => {
    await t?.close();
  });

  async function call(path: string, init: { method?: string; json?: unknown; token?: string } = {}) {
    const res = await t.api(path, init);
    const text = await res.text();
    return { status: res.status, text, body: text ? JSON.parse(text) : undefined };
  }
  const topup = (key: string, token = plain.session) => call('/api/user/topup', { method: 'POST', json: { key }, token });
  const balanceChanges = () => t.gw.services.store.db.selectFrom('balance_changes').selectAll().orderBy('id').execute();

  it('makes codes shown once, kept as hashes, and lists them with who redeemed them', async () => {
    const made = await call('/api/redemptions', { method: 'POST', json: { name: 'Launch week', quota: 2.5, count: 3 } });
    expect(made.status, made.text).toBe(201);
    expect(made.body.keys).toHaveLength(3);
    for (const key of made.body.keys) expect(key).toMatch(/^kbr-[A-Za-z0-9_-]{32}$/);
    expect(new Set(made.body.keys).size).toBe(3);
    expect(made.body.data.map((r: any) => r.key_hint)).toEqual(made.body.keys.map((k: string) => `${k.slice(0, 3)}...${k.slice(-4)}`));
    expect(made.body.data[0]).toMatchObject({ name: 'Launch week', quota: 2.5, quota_micros: 2_500_000, status: 'unused', redeemed_by: null });
    // The store keeps no key: only its hash.
    const stored = await t.gw.services.store.db.selectFrom('redemptions').selectAll().execute();
    for (const key of made.body.keys) expect(JSON.stringify(stored)).not.toContain(key.slice(4));

    const redeemed = await topup(made.body.keys[0]);
    expect(redeemed.status, redeemed.text).toBe(200);
    expect(redeemed.body).toMatchObject({ added: 2.5, balance: 3.5, balance_micros: 3_500_000 });
    const list = await call('/api/redemptions?q=launch');
    expect(list.body.total).toBe(3);
    const first = list.body.data.find((r: any) => r.id === made.body.data[0].id);
    expect(first).toMatchObject({ status: 'redeemed', redeemed_by: plain.id, redeemed_by_username: 'topper' });
    expect(first.redeemed_at).toBeGreaterThan(0);
    expect(JSON.stringify(list.body)).not.toContain(made.body.keys[1].slice(4));
  });

  it('redeems a code exactly once, also twenty times at the same moment; each redemption is a row of the books', async () => {
    const made = await call('/api/redemptions', { method: 'POST', json: { name: 'Race', quota: 1, count: 1 } });
    const key = made.body.keys[0];
    const before = (await call(`/api/users/${plain.id}`)).body.balance_micros;
    const changesBefore = (await balanceChanges()).length;
    const results = await Promise.all(Array.from({ length: 20 }, () => topup(key)));
    expect(results.filter((r) => r.status === 200)).toHaveLength(1);
    for (const r of results.filter((x) => x.status !== 200)) {
      expect(r.status).toBe(400);
      expect(r.body.error.param).toBe('key');
      expect(r.body.error.message).toMatch(/does not exist, was already used, or was disabled/);
    }
    expect((await call(`/api/users/${plain.id}`)).body.balance_micros).toBe(before + 1_000_000);
    const changes = (await balanceChanges()).slice(changesBefore);
    expect(changes).toMatchObject([{ user_id: plain.id, reason: 'topup', ref_id: made.body.data[0].id }]);
    expect(Number(changes[0]!.delta)).toBe(1_000_000);
    // The books: every top-up row adds up to what the codes gave.
    const all = await balanceChanges();
    const redeemedQuota = (await call('/api/redemptions?limit=500')).body.data
      .filter((r: any) => r.status === 'redeemed')
      .reduce((n: number, r: any) => n + r.quota_micros, 0);
    expect(all.reduce((n, c) => n + Number(c.delta), 0)).toBe(redeemedQuota);
  });

  it('refuses a disabled code until it is enabled again, and a deleted one; a redeemed code cannot be re-enabled', async () => {
    const made = await call('/api/redemptions', { method: 'POST', json: { name: 'Held', quota: 0.5 } });
    const [id, key] = [made.body.data[0].id, made.body.keys[0]];
    expect((await call(`/api/redemptions/${id}`, { method: 'PATCH', json: { status: 'disabled' } })).body.status).toBe('disabled');
    expect((await topup(key)).status).toBe(400);
    expect((await call(`/api/redemptions/${id}`, { method: 'PATCH', json: { status: 'unused' } })).body.status).toBe('unused');
    expect((await topup(key)).status).toBe(200);
    const again = await call(`/api/redemptions/${id}`, { method: 'PATCH', json: { status: 'unused' } });
    expect(again.status).toBe(400);
    expect(again.body.error.message).toMatch(/already redeemed/);
    const gone = await call('/api/redemptions', { method: 'POST', json: { name: 'Gone', quota: 0.5 } });
    expect((await call(`/api/redemptions/${gone.body.data[0].id}`, { method: 'DELETE' })).body).toEqual({ deleted: true, id: gone.body.data[0].id });
    expect((await topup(gone.body.keys[0])).status).toBe(400);
    expect((await call(`/api/redemptions/${gone.body.data[0].id}`, { method: 'DELETE' })).status).toBe(404);
  });

  it('lets only administrators make and list codes, and names a bad field', async () => {
    expect((await call('/api/redemptions', { method: 'POST', json: { name: 'x', quota: 1 }, token: plain.session })).status).toBe(403);
    expect((await call('/api/redemptions', { token: plain.session })).status).toBe(403);
    expect((await fetch(`${t.url}/api/user/topup`, { method: 'POST', body: '{}' })).status).toBe(401);
    const field = async (json: unknown, param: string) => {
      const r = await call('/api/redemptions', { method: 'POST', json });
      expect(r.status, r.text).toBe(400);
      expect(r.body.error.param).toBe(param);
    };
    await field({ name: '', quota: 1 }, 'name');
    await field({ name: 'x', quota: 0 }, 'quota');
    await field({ name: 'x', quota: 1, count: 101 }, 'count');
    await field({ name: 'x', quota: 1, count: 1.5 }, 'count');
    const noKey = await call('/api/user/topup', { method: 'POST', json: {}, token: plain.session });
    expect(noKey.body.error.param).toBe('key');
    expect((await call('/api/redemptions/0', { method: 'PATCH', json: { status: 'disabled' } })).body.error.param).toBe('id');
  });
});
