// Price groups on a real gateway over HTTP, on every store the machine has:
// a group's ratio multiplies what its callers are reserved and charged (a
// group at ratio 0.5 is charged exactly half, in the log rows and in the
// balances), a token's own group wins over its user's, a channel serves only
// the groups it names (the relay and /v1/models), and the admin API refuses
// bad names and ratios by field, a group that does not exist, a plain user
// choosing a token's group, and deleting `default` or a group in use.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GroupBook } from '../src/accounts/groups.js';
import { GroupsStore } from '../src/accounts/groups-store.js';
import { atRatio } from '../src/accounts/pricing.js';
import { startTestGateway, type TestGateway } from './helpers.js';
import { STORE_NAMES, testStore, type TestStore } from './stores.js';

describe('atRatio', () => {
  it('multiplies by a ratio in millionths, rounding up to a whole micro-unit, exactly', () => {
    expect(atRatio(1000, 1_000_000)).toBe(1000);
    expect(atRatio(1000, 500_000)).toBe(500);
    expect(atRatio(1001, 500_000)).toBe(501);
    expect(atRatio(3, 333_333)).toBe(1);
    expect(atRatio(7, 0)).toBe(0);
    expect(atRatio(0, 2_000_000)).toBe(0);
    expect(atRatio(1234, 2_500_000)).toBe(3085);
    // Past 2^53 the product is taken in BigInt: still exact.
    expect(atRatio(999_999_999_999_999, 999_999)).toBe(999_999_000_000_000);
    expect(atRatio(8_000_000_000, 1_000_001)).toBe(8_000_008_000);
  });
});

const stores: TestStore[] = await Promise.all(STORE_NAMES.map((n) => testStore(n)));

describe.each(stores)('groups: $name', (store) => {
  const skip = !store.url && store.name !== 'pglite';
  if (skip) console.warn(`[groups] ${store.name} skipped: ${store.skipReason}`);
  let t: TestGateway;

  beforeAll(async () => {
    if (skip) return;
    t = await startTestGateway({ models: ['sim-chat'], databaseUrl: store.url });
    // Even micro-unit costs (2 per input token, 4 per output token), so that half of one is whole.
    expect((await call('/api/prices/sim-chat', { method: 'PUT', json: { input_price: 2, output_price: 4 } })).status).toBe(200);
  });
  afterAll(async () => {
    await t?.close();
    await store.drop();
  });

  async function call(path: string, init: { method?: string; json?: unknown; token?: string } = {}) {
    const res = await t.api(path, init);
    const text = await res.text();
    return { status: res.status, text, body: text ? JSON.parse(text) : undefined };
  }
  async function userWithToken(username: string, balance: number, group?: string, tokenGroup?: string) {
    const user = await call('/api/users', { method: 'POST', json: { username, password: 'long-enough-password', balance, group } });
    expect(user.status, user.text).toBe(201);
    const token = await call('/api/tokens', { method: 'POST', json: { user_id: user.body.id, name: `${username}'s`, group: tokenGroup } });
    expect(token.status, token.text).toBe(201);
    return { id: user.body.id as number, tokenId: token.body.token.id as number, key: token.body.key as string };
  }
  const ask = (key: string, content: string, model = 'sim-chat', maxTokens?: number) =>
    call('/v1/chat/completions', { method: 'POST', token: key, json: { model, messages: [{ role: 'user', content }], max_tokens: maxTokens } });
  async function costsOf(tokenId: number): Promise<number[]> {
    await t.gw.services.ledger.flush();
    const rows = await t.gw.services.store.db.selectFrom('logs').select(['cost']).where('token_id', '=', tokenId).orderBy('id').execute();
    return rows.map((r) => Number(r.cost));
  }
  async function balanceOf(userId: number): Promise<number> {
    return (await call(`/api/users/${userId}`)).body.balance_micros;
  }

  it.skipIf(skip)('has default at ratio 1 from the start, and adds, edits and lists groups', async () => {
    const list = await call('/api/groups');
    expect(list.status, list.text).toBe(200);
    expect(list.body.data[0]).toMatchObject({ name: 'default', ratio: 1, description: '', users: 1, tokens: 0, channels: 0 });
    const made = await call('/api/groups/half', { method: 'PUT', json: { ratio: 0.5, description: 'Half price' } });
    expect(made.status, made.text).toBe(200);
    expect(made.body).toMatchObject({ name: 'half', ratio: 0.5, description: 'Half price', users: 0 });
    // A PUT without a description keeps it.
    const edited = await call('/api/groups/half', { method: 'PUT', json: { ratio: 0.25 } });
    expect(edited.body).toMatchObject({ ratio: 0.25, description: 'Half price' });
    expect((await call('/api/groups/half', { method: 'PUT', json: { ratio: 0.5 } })).body.ratio).toBe(0.5);
    expect((await call('/api/groups/vip', { method: 'PUT', json: { ratio: 2 } })).status).toBe(200);
    expect((await call('/api/groups')).body.data.map((g: { name: string }) => g.name)).toEqual(['default', 'half', 'vip']);
    expect((await call('/api/groups/half')).body).toMatchObject({ name: 'half', ratio: 0.5 });
    expect((await call('/api/groups/nobody')).status).toBe(404);
  });

  it.skipIf(skip)('refuses a bad name or ratio with a 400 that names the field', async () => {
    const cases: [string, unknown, string][] = [
      ['/api/groups/half', {}, 'ratio'],
      ['/api/groups/half', { ratio: -1 }, 'ratio'],
      ['/api/groups/half', { ratio: 1001 }, 'ratio'],
      ['/api/groups/half', { ratio: 0.1234567 }, 'ratio'],
      ['/api/groups/half', { ratio: '0.5' }, 'ratio'],
      ['/api/groups/half', { ratio: 1, colour: 'red' }, 'colour'],
      ['/api/groups/half', { ratio: 1, description: 'x'.repeat(256) }, 'description'],
      ['/api/groups/two%20words', { ratio: 1 }, 'name'],
      [`/api/groups/${'g'.repeat(65)}`, { ratio: 1 }, 'name'],
    ];
    for (const [path, json, field] of cases) {
      const r = await call(path, { method: 'PUT', json });
      expect(r.status, `${path} ${JSON.stringify(json)}: ${r.text}`).toBe(400);
      expect(r.body.error.param, r.text).toBe(field);
    }
    // Names of any script, as users' groups always could be.
    expect((await call(`/api/groups/${encodeURIComponent('企业')}`, { method: 'PUT', json: { ratio: 0.8 } })).status).toBe(200);
    expect((await call(`/api/groups/${encodeURIComponent('企业')}`, { method: 'DELETE' })).status).toBe(200);
  });

  it.skipIf(skip)('charges a group at ratio 0.5 exactly half, in the log rows and the balances', async () => {
    const full = await userWithToken('full-price', 10);
    const half = await userWithToken('half-price', 10, 'half');
    const prompts = ['What is a price group?', 'Say something longer, please, about the weather today and tomorrow.', 'Hi'];
    for (const p of prompts) {
      expect((await ask(full.key, p)).status).toBe(200);
      expect((await ask(half.key, p)).status).toBe(200);
    }
    const fullCosts = await costsOf(full.tokenId);
    const halfCosts = await costsOf(half.tokenId);
    expect(fullCosts).toHaveLength(3);
    for (const c of fullCosts) expect(c % 2, 'even costs at these prices').toBe(0);
    expect(fullCosts.every((c) => c > 0)).toBe(true);
    expect(halfCosts).toEqual(fullCosts.map((c) => c / 2));
    const spentFull = 10_000_000 - (await balanceOf(full.id));
    const spentHalf = 10_000_000 - (await balanceOf(half.id));
    expect(spentFull).toBe(fullCosts.reduce((a, b) => a + b, 0));
    expect(spentHalf).toBe(spentFull / 2);
  });

  it.skipIf(skip)("reserves at the group's ratio: half price fits a balance that full price does not", async () => {
    // 1000 output tokens reserve 4000 micro-units at full price, 2000 at half; the balance is 3000.
    const full = await userWithToken('tight-full', 0.003);
    const half = await userWithToken('tight-half', 0.003, 'half');
    const refused = await ask(full.key, 'x', 'sim-chat', 1000);
    expect(refused.status, refused.text).toBe(403);
    expect(refused.body.error.code).toBe('insufficient_user_quota');
    const served = await ask(half.key, 'x', 'sim-chat', 1000);
    expect(served.status, served.text).toBe(200);
  });

  it.skipIf(skip)("charges a token's own group over its user's; only administrators set one, and only to a group that exists", async () => {
    const owner = await userWithToken('token-grouped', 10, undefined, 'half');
    const plain = await userWithToken('plain-default', 10);
    expect((await call(`/api/tokens/${owner.tokenId}`)).body.group).toBe('half');
    expect((await call(`/api/tokens/${plain.tokenId}`)).body.group).toBeNull();
    expect((await ask(owner.key, 'same question')).status).toBe(200);
    expect((await ask(plain.key, 'same question')).status).toBe(200);
    expect(await costsOf(owner.tokenId)).toEqual((await costsOf(plain.tokenId)).map((c) => c / 2));
    // Back to the user's group (null): full price again.
    const back = await call(`/api/tokens/${owner.tokenId}`, { method: 'PATCH', json: { group: null } });
    expect(back.status, back.text).toBe(200);
    expect(back.body.group).toBeNull();
    expect((await ask(owner.key, 'same question')).status).toBe(200);
    expect((await costsOf(owner.tokenId))[1]).toBe((await costsOf(plain.tokenId))[0]);

    const missing = await call(`/api/tokens/${owner.tokenId}`, { method: 'PATCH', json: { group: 'no-such-group' } });
    expect(missing.status, missing.text).toBe(400);
    expect(missing.body.error.param).toBe('group');
    const noUserGroup = await call('/api/users', { method: 'POST', json: { username: 'lost', password: 'long-enough-password', group: 'no-such-group' } });
    expect(noUserGroup.status).toBe(400);
    expect(noUserGroup.body.error.param).toBe('group');
    const badPatch = await call(`/api/users/${plain.id}`, { method: 'PATCH', json: { group: 'no-such-group' } });
    expect(badPatch.body.error.param).toBe('group');

    // A plain user, signed in, manages its tokens but cannot move one to a cheaper group.
    const session = (await call('/api/auth/login', { method: 'POST', json: { username: 'plain-default', password: 'long-enough-password' } })).body.session;
    const own = await call('/api/tokens', { method: 'POST', token: session, json: { name: 'mine', group: 'half' } });
    expect(own.status, own.text).toBe(403);
    expect(own.body.error.message).toMatch(/administrators/);
    const patched = await call(`/api/tokens/${plain.tokenId}`, { method: 'PATCH', token: session, json: { group: 'half' } });
    expect(patched.status).toBe(403);
    expect((await call('/api/tokens', { method: 'POST', token: session, json: { name: 'mine' } })).status).toBe(201);
  });

  it.skipIf(skip)("routes to channels that serve the caller's group, and lists only their models in /v1/models", async () => {
    const vip = await userWithToken('vip-user', 10, 'vip');
    const plain = await userWithToken('not-vip', 10);
    const made = await call('/api/channels', {
      method: 'POST',
      json: {
        name: 'vip only',
        type: 'openai',
        base_url: `${t.sim.url}/v1`,
        key: 'sk-sim-upstream-key',
        models: ['vip-chat'],
        model_mapping: { 'vip-chat': 'sim-chat' },
        groups: ['vip'],
      },
    });
    expect(made.status, made.text).toBe(201);
    expect(made.body.groups).toEqual(['vip']);
    const models = async (key: string) => (await call('/v1/models', { token: key })).body.data.map((m: { id: string }) => m.id);
    expect(await models(vip.key)).toEqual(['sim-chat', 'vip-chat']);
    expect(await models(plain.key)).toEqual(['sim-chat']);
    expect((await ask(vip.key, 'hello')).status).toBe(200);
    const vipAnswer = await ask(vip.key, 'hello', 'vip-chat');
    expect(vipAnswer.status, vipAnswer.text).toBe(200);
    const refused = await ask(plain.key, 'hello', 'vip-chat');
    expect(refused.status).toBe(503);
    expect(refused.body.error.message).toMatch(/No available channel for model vip-chat under group default/);

    // A channel serves only groups that exist; emptied, it serves every group.
    const bad = await call(`/api/channels/${made.body.id}`, { method: 'PATCH', json: { groups: ['vip', 'no-such-group'] } });
    expect(bad.status).toBe(400);
    expect(bad.body.error.param).toBe('groups');
    const all = await call(`/api/channels/${made.body.id}`, { method: 'PATCH', json: { groups: [] } });
    expect(all.body.groups).toEqual([]);
    expect(await models(plain.key)).toEqual(['sim-chat', 'vip-chat']);
    expect((await ask(plain.key, 'hello', 'vip-chat')).status).toBe(200);
    expect((await call(`/api/channels/${made.body.id}`, { method: 'PATCH', json: { groups: ['vip'] } })).status).toBe(200);
  });

  it.skipIf(skip)('refuses to delete default or a group in use, naming what uses it; deletes one that nothing uses', async () => {
    const dflt = await call('/api/groups/default', { method: 'DELETE' });
    expect(dflt.status).toBe(409);
    const inUse = await call('/api/groups/vip', { method: 'DELETE' });
    expect(inUse.status, inUse.text).toBe(409);
    expect(inUse.body.error.message).toMatch(/in use by 1 user, 0 tokens and 1 channel/);
    expect((await call('/api/groups')).body.data.find((g: { name: string }) => g.name === 'half')).toMatchObject({ users: 2, tokens: 0 });
    expect((await call('/api/groups/spare', { method: 'PUT', json: { ratio: 3 } })).status).toBe(200);
    const gone = await call('/api/groups/spare', { method: 'DELETE' });
    expect(gone.status, gone.text).toBe(200);
    expect(gone.body).toEqual({ deleted: true, name: 'spare' });
    expect((await call('/api/groups/spare', { method: 'DELETE' })).status).toBe(404);
    // Only administrators manage groups.
    const session = (await call('/api/auth/login', { method: 'POST', json: { username: 'plain-default', password: 'long-enough-password' } })).body.session;
    expect((await call('/api/groups', { token: session })).status).toBe(403);
  });

  it.skipIf(skip)('puts a ratio another process sets in force here at the next refresh, never undoing a local edit', async () => {
    const other = new GroupBook(new GroupsStore(t.gw.services.store.db));
    await other.load();
    expect(other.ratioOf('half')).toBe(500_000);
    expect(other.ratioOf('never-made')).toBe(1_000_000);
    await t.gw.services.groups.set('half', 400_000);
    expect(other.ratioOf('half')).toBe(500_000);
    await other.load();
    expect(other.ratioOf('half')).toBe(400_000);
    // A refresh that read the store before this process's own edit is dropped.
    const slow = new GroupBook(new GroupsStore(t.gw.services.store.db));
    const loading = slow.load();
    await slow.set('half', 500_000);
    await loading;
    expect(slow.ratioOf('half')).toBe(500_000);
    await t.gw.services.groups.load();
    expect(t.gw.services.groups.ratioOf('half')).toBe(500_000);
  });
});
