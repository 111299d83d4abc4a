// The store layer on every store the machine has: PGlite always, PostgreSQL
// and MySQL/MariaDB where a server answers (CI has all three). Each server
// store gets a fresh database, dropped afterwards; a missing server skips
// with a printed reason.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { AccountsStore } from '../src/accounts/store.js';
import { ChannelsStore } from '../src/channels/store.js';
import { LogsStore } from '../src/logs/store.js';
import { LedgerStore, type Holder } from '../src/accounts/ledger-store.js';
import { LogRetention } from '../src/logs/retention.js';
import { ledgerOn } from './ledger-support.js';
import { openStore, storeNowMs, type Store } from '../src/store/db.js';
import type { NewChannel, NewLog } from '../src/store/schema.js';
import { STORE_NAMES, testStore, type TestStore } from './stores.js';

const stores: TestStore[] = await Promise.all(STORE_NAMES.map((n) => testStore(n)));
const DAY = 86_400_000;

/** A URL that can be opened more than once: PGlite in a temp dir instead of in memory. */
function reopenableUrl(t: TestStore, dir: string): string {
  return t.name === 'pglite' ? `pglite:${dir}` : t.url!;
}

function logRow(i: number, over: Partial<NewLog> = {}): NewLog {
  return {
    request_id: `req-${String(i).padStart(5, '0')}`,
    created_at: Date.now(),
    user_id: 1 + (i % 3),
    token_id: 10 + (i % 2),
    channel_id: 100 + (i % 4),
    endpoint: 'chat',
    model: i % 2 ? 'model-odd' : 'model-even',
    upstream_model: null,
    is_stream: i % 2,
    prompt_tokens: i,
    completion_tokens: 2 * i,
    usage_source: 'upstream',
    cost: i,
    latency_ms: 5,
    ttft_ms: null,
    status: i % 10 === 0 ? 502 : 200,
    error: i % 10 === 0 ? 'upstream failed' : null,
    attempts: 1,
    request_body: null,
    ...over,
  };
}

function channelRow(name: string, over: Partial<NewChannel> = {}): NewChannel {
  const now = Date.now();
  return {
    name,
    type: 'openai',
    base_url: 'http://127.0.0.1:1/v1',
    key_cipher: 'v1:x:y:z',
    models: JSON.stringify(['m1', 'm2']),
    model_mapping: '{}',
    options: '{}',
    priority: 0,
    weight: 1,
    status: 'enabled',
    source: 'admin',
    env_provider: null,
    created_at: now,
    updated_at: now,
    ...over,
  };
}

afterAll(async () => {
  await Promise.all(stores.map((s) => s.drop()));
});

describe.each(stores)('store: $name', (t) => {
  const skip = Boolean(t.skipReason);
  if (skip) console.warn(`[skip] store tests on ${t.name}: ${t.skipReason}`);

  let dir: string;
  let store: Store;
  let accounts: AccountsStore;
  let channels: ChannelsStore;
  let logs: LogsStore;

  beforeAll(async () => {
    if (skip) return;
    dir = mkdtempSync(join(tmpdir(), 'kbchat-store-'));
    store = await openStore({ url: reopenableUrl(t, dir) });
    accounts = new AccountsStore(store.db);
    channels = new ChannelsStore(store.db);
    logs = new LogsStore(store.db, store.kind === 'pglite');
  });

  afterAll(async () => {
    await store?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  describe.skipIf(skip)('schema', () => {
    it('runs migrations once and is idempotent when opened again', async () => {
      expect(store.kind).toBe(t.name);
      await accounts.insertUser({ username: 'survivor', password_hash: 'h', role: 'user', group_name: 'default', balance: 7 });
      if (t.name === 'pglite') {
        // One PGlite per directory: close, open again, the data and the one migration are still there.
        await store.close();
        store = await openStore({ url: reopenableUrl(t, dir) });
        accounts = new AccountsStore(store.db);
        channels = new ChannelsStore(store.db);
        logs = new LogsStore(store.db, store.kind === 'pglite');
      } else {
        const second = await openStore({ url: t.url! });
        expect((await new AccountsStore(second.db).userByName('survivor'))?.balance).toBe(7);
        await second.close();
      }
      const applied = await sql<{ name: string }>`select name from kbchat_migrations`.execute(store.db);
      expect(applied.rows.map((r) => r.name).sort()).toEqual([
        '0001_initial',
        '0002_logs_without_created_at_index',
        '0003_durable_leases',
        '0004_log_rollups_and_list_indexes',
        '0005_channel_tests_and_failures',
        '0006_redemptions',
        '0007_model_fallbacks',
        '0008_rate_limits',
        '0009_channel_keys',
        '0010_groups',
      ]);
      expect((await accounts.userByName('survivor'))?.balance).toBe(7);
    });

    it.skipIf(t.name === 'pglite')('migrates a fresh database from two processes at once', async () => {
      const fresh = await testStore(t.name);
      try {
        // Separate pools, as two gateway processes starting together would have.
        const [a, b] = await Promise.all([openStore({ url: fresh.url! }), openStore({ url: fresh.url! })]);
        const applied = await sql<{ name: string }>`select name from kbchat_migrations`.execute(a.db);
        expect(applied.rows.map((r) => r.name).sort()).toEqual([
          '0001_initial',
          '0002_logs_without_created_at_index',
          '0003_durable_leases',
          '0004_log_rollups_and_list_indexes',
          '0005_channel_tests_and_failures',
          '0006_redemptions',
          '0007_model_fallbacks',
          '0008_rate_limits',
          '0009_channel_keys',
          '0010_groups',
        ]);
        await Promise.all([a.close(), b.close()]);
      } finally {
        await fresh.drop();
      }
    });
  });

  describe.skipIf(skip || t.name !== 'postgres')('connections', () => {
    it('outlives an idle connection the server ends (a restart, an administrator): no uncaught error, the next query works', async () => {
      await sql`select 1`.execute(store.db);
      const pg = (await import('pg')).default;
      const admin = new pg.Client({ connectionString: t.url!.replace(/\/[^/]*$/, '/postgres') });
      await admin.connect();
      const db = new URL(t.url!).pathname.slice(1);
      const ended = await admin.query('select pg_terminate_backend(pid) from pg_stat_activity where datname = $1 and pid <> pg_backend_pid()', [db]);
      await admin.end();
      expect(ended.rowCount).toBeGreaterThan(0);
      await new Promise((r) => setTimeout(r, 200));
      expect((await sql<{ n: number }>`select 1 as n`.execute(store.db)).rows[0]!.n).toBe(1);
    });
  });

  describe.skipIf(skip)('text', () => {
    it('stores non-Latin text and emoji', async () => {
      const name = '用户-Ünïcödé-😀';
      const id = await accounts.insertUser({ username: name, password_hash: 'h', role: 'user', group_name: '组', balance: 0 });
      expect(await accounts.userById(id)).toMatchObject({ username: name, group_name: '组' });
      expect((await accounts.userByName(name))?.id).toBe(id);
    });

    it.runIf(t.name === 'mysql')('stores it also on a database whose default character set is latin1', async () => {
      const mysql = (await import('mysql2/promise')).default;
      const dbName = `kbchat_test_latin1_${process.pid}`;
      const admin = await mysql.createConnection({ uri: process.env.TEST_MYSQL_URL ?? 'mysql://root@127.0.0.1:3306/' });
      await admin.query(`create database ${dbName} character set latin1`);
      try {
        const url = new URL(t.url!);
        url.pathname = `/${dbName}`;
        const latin = await openStore({ url: url.toString() });
        try {
          const a = new AccountsStore(latin.db);
          const id = await a.insertUser({ username: '用户😀', password_hash: 'h', role: 'user', group_name: 'default', balance: 0 });
          expect((await a.userById(id))?.username).toBe('用户😀');
          const l = new LogsStore(latin.db);
          await l.insertMany([logRow(1, { request_id: 'cjk', status: 500, error: '上游错误', request_body: '{"content":"你好 👋"}' })]);
          expect(await l.byRequestId('cjk')).toMatchObject({ error: '上游错误', request_body: '{"content":"你好 👋"}' });
        } finally {
          await latin.close();
        }
      } finally {
        await admin.query(`drop database ${dbName}`);
        await admin.end();
      }
    });
  });

  describe.skipIf(skip)('users and tokens', () => {
    it('inserts, reads, updates and deletes users', async () => {
      const id = await accounts.insertUser({ username: 'alice', password_hash: 'hash-a', role: 'user', group_name: 'vip', balance: 1234 });
      const u = await accounts.userById(id);
      expect(u).toMatchObject({ id, username: 'alice', role: 'user', status: 'enabled', group_name: 'vip', balance: 1234, used: 0, request_count: 0 });
      expect(typeof u!.created_at).toBe('number');
      expect((await accounts.userByName('alice'))?.id).toBe(id);
      expect(await accounts.userByName('nobody')).toBeUndefined();

      expect(await accounts.updateUser(id, { status: 'disabled', group_name: 'default' })).toBe(true);
      expect(await accounts.updateUser(id, {})).toBe(true);
      expect(await accounts.updateUser(999_999, { status: 'disabled' })).toBe(false);
      expect(await accounts.userById(id)).toMatchObject({ status: 'disabled', group_name: 'default', balance: 1234 });

      const before = await accounts.countUsers();
      const id2 = await accounts.insertUser({ username: 'bob', password_hash: 'hash-b', role: 'admin', group_name: 'default', balance: 0 });
      expect(id2).not.toBe(id);
      expect(await accounts.countUsers()).toBe(before + 1);
      expect((await accounts.listUsers(0, 1000)).map((x) => x.username)).toEqual(expect.arrayContaining(['alice', 'bob']));
      await expect(accounts.insertUser({ username: 'bob', password_hash: 'x', role: 'user', group_name: 'default', balance: 0 })).rejects.toThrow();

      // Deleting a user takes its tokens and sessions with it.
      const tok = await accounts.insertToken(token(id2, 'bob-key'));
      await accounts.insertSession('sess-bob', id2, Date.now() + 60_000);
      expect((await accounts.sessionUser('sess-bob', Date.now()))?.id).toBe(id2);
      expect(await accounts.sessionUser('sess-bob', Date.now() + 120_000)).toBeUndefined();
      expect(await accounts.deleteUser(id2)).toBe(true);
      expect(await accounts.deleteUser(id2)).toBe(false);
      expect(await accounts.tokenById(tok)).toBeUndefined();
      expect(await accounts.sessionUser('sess-bob', Date.now())).toBeUndefined();
    });

    it('inserts tokens, finds them by hash, updates and deletes them', async () => {
      const uid = await accounts.insertUser({ username: 'tok-owner', password_hash: 'h', role: 'user', group_name: 'default', balance: 0 });
      const id = await accounts.insertToken({
        ...token(uid, 'hash-1'),
        models: JSON.stringify(['a', 'b']),
        ip_allow: '10.0.0.0/8',
        expires_at: 4_102_444_800_000,
      });
      const id2 = await accounts.insertToken(token(uid, 'hash-2'));
      expect(id2).not.toBe(id);
      const row = await accounts.tokenByHash('hash-1');
      expect(row).toMatchObject({ id, user_id: uid, key_hint: 'sk-…hint', status: 'enabled', quota_used: 0, quota_limit: null, last_used_at: null });
      expect(row!.expires_at).toBe(4_102_444_800_000);
      expect(JSON.parse(row!.models!)).toEqual(['a', 'b']);
      expect(row!.ip_allow).toBe('10.0.0.0/8');
      expect(await accounts.tokenByHash('hash-missing')).toBeUndefined();
      await expect(accounts.insertToken(token(uid, 'hash-1'))).rejects.toThrow();

      expect(await accounts.updateToken(id, { name: 'renamed', status: 'disabled', quota_limit: 500, models: null })).toBe(true);
      expect(await accounts.tokenById(id)).toMatchObject({ name: 'renamed', status: 'disabled', quota_limit: 500, models: null });
      expect(await accounts.updateToken(999_999, { name: 'x' })).toBe(false);
      expect((await accounts.listTokens({ userId: uid }, 0, 10)).map((x) => x.id)).toEqual([id, id2]);
      expect((await accounts.listTokens({ userId: uid }, 1, 10)).map((x) => x.id)).toEqual([id2]);

      expect(await accounts.deleteToken(id)).toBe(true);
      expect(await accounts.deleteToken(id)).toBe(false);
      expect(await accounts.tokenByHash('hash-1')).toBeUndefined();
    });
  });

  describe.skipIf(skip)('money', () => {
    const holder = (id: string): Holder => ({ id, host: 'test', pid: 1, ttlMs: 60_000 });
    const ledgerStore = () => new LedgerStore(store.db, store.kind, logs);
    const leased = async (kind: 'user' | 'token', id: number) => (await ledgerStore().leasedOn(kind, [id])).get(id) ?? 0;

    it('a lease takes no more than there is, nor more than a quarter of it unless the request needs more, also under concurrency', async () => {
      const ls = ledgerStore();
      const [h1, h2] = [holder('h-money-1'), holder('h-money-2')];
      await ls.register(h1);
      await ls.register(h2);
      const id = await accounts.insertUser({ username: 'debit', password_hash: 'h', role: 'user', group_name: 'default', balance: 1000 });
      expect(await ls.acquire(h1, 'user', id, 1001, 10_000, 0)).toEqual({ taken: 0, othersHold: 0 });
      expect(await ls.acquire(h1, 'user', id, 100, 10_000, 0)).toEqual({ taken: 250 }); // a quarter of 1000
      expect(await ls.acquire(h1, 'user', id, 10, 100, 250)).toEqual({ taken: 100 }); // at most maxLease
      expect(await ls.acquire(h2, 'user', id, 700, 10_000, 0)).toEqual({ taken: 0, othersHold: 350 });
      expect(await ls.acquire(h2, 'user', id, 650, 10_000, 0)).toEqual({ taken: 650 }); // what a request needs
      expect((await accounts.userById(id))?.balance).toBe(0);
      expect(await leased('user', id)).toBe(1000);
      expect(await ls.acquire(h1, 'user', 999_999, 1, 10, 0)).toEqual({ taken: 0, othersHold: 0 });
      // A holder that is not (or no longer) registered takes nothing.
      expect(await ls.acquire(holder('h-money-gone'), 'user', id, 1, 10, 0)).toEqual({ lost: true });

      // 40 holders at once, 70 each, against 1000: exactly 14 get theirs, 20 is left, never below 0.
      const other = await accounts.insertUser({ username: 'debit-burst', password_hash: 'h', role: 'user', group_name: 'default', balance: 1000 });
      const many = Array.from({ length: 40 }, (_, i) => holder(`h-burst-${i}`));
      for (const h of many) await ls.register(h);
      const results = await Promise.all(many.map((h) => ls.acquire(h, 'user', other, 70, 70, 0)));
      expect(results.filter((r) => 'taken' in r && r.taken === 70)).toHaveLength(14);
      expect((await accounts.userById(other))?.balance).toBe(20);
      expect(await leased('user', other)).toBe(980);
    });

    it('token leases respect quota_limit and touch no other token', async () => {
      const ls = ledgerStore();
      const h = holder('h-money-tokens');
      await ls.register(h);
      const uid = await accounts.insertUser({ username: 'tq', password_hash: 'h', role: 'user', group_name: 'default', balance: 0 });
      const limited = await accounts.insertToken({ ...token(uid, 'tq-limited'), quota_limit: 250 });
      const unlimited = await accounts.insertToken(token(uid, 'tq-unlimited'));
      const bystander = await accounts.insertToken({ ...token(uid, 'tq-bystander'), quota_limit: 1_000_000 });

      expect(await ls.acquire(h, 'token', limited, 100, 100, 0)).toEqual({ taken: 100 });
      expect(await ls.acquire(h, 'token', limited, 100, 100, 100)).toEqual({ taken: 100 });
      expect(await ls.acquire(h, 'token', limited, 100, 100, 200)).toEqual({ taken: 0, othersHold: 0 });
      expect(await ls.acquire(h, 'token', limited, 50, 100, 200)).toEqual({ taken: 50 });
      expect((await accounts.tokenById(limited))?.quota_used).toBe(250);
      expect(await leased('token', limited)).toBe(250);
      // A token without a limit has nothing to lease.
      expect(await ls.acquire(h, 'token', unlimited, 5, 100, 0)).toEqual({ taken: 0, othersHold: 0 });
      expect((await accounts.tokenById(bystander))?.quota_used).toBe(0);

      // Written back: 170 spent, the rest returned, the last use recorded.
      await ls.commit(h, [], [{ kind: 'token', id: limited, held: 250, newHeld: 0, charge: 170, requests: 0, lastUsedAt: 1234 }]);
      expect(await accounts.tokenById(limited)).toMatchObject({ quota_used: 170, last_used_at: 1234 });
      expect(await leased('token', limited)).toBe(0);
    });

    it("reads the store's clock as epoch ms, in UTC on every MySQL connection (a session zone with daylight saving would make it jump an hour)", async () => {
      const reads = await Promise.all(Array.from({ length: 4 }, () => sql<{ now: number }>`select ${storeNowMs(store.kind)} as now`.execute(store.db)));
      for (const r of reads) expect(Math.abs(Number(r.rows[0]!.now) - Date.now())).toBeLessThan(5000);
      if (store.kind !== 'mysql') return;
      const zones = await Promise.all(Array.from({ length: 4 }, () => sql<{ tz: string }>`select @@session.time_zone as tz`.execute(store.db)));
      expect(zones.map((z) => z.rows[0]!.tz)).toEqual(['+00:00', '+00:00', '+00:00', '+00:00']);
    });

    it('round-trips money above 2^31 as numbers', async () => {
      const big = 9_000_000_000_123; // 9 million units in micro-units, well above 2^31, below 2^53
      const id = await accounts.insertUser({ username: 'rich', password_hash: 'h', role: 'user', group_name: 'default', balance: big });
      const u = await accounts.userById(id);
      expect(u!.balance).toBe(big);
      expect(typeof u!.balance).toBe('number');
      const ls = ledgerStore();
      const h = holder('h-money-big');
      await ls.register(h);
      expect(await ls.acquire(h, 'user', id, 3_000_000_000, 3_000_000_000, 0)).toEqual({ taken: 3_000_000_000 });
      await ls.commit(h, [], [{ kind: 'user', id, held: 3_000_000_000, newHeld: 0, charge: 2_999_999_999, requests: 1 }]);
      expect(await accounts.userById(id)).toMatchObject({ balance: big - 2_999_999_999, used: 2_999_999_999 });
      expect(typeof (await accounts.userById(id))!.used).toBe('number');

      await logs.insertMany([logRow(0, { request_id: 'big-cost', cost: 4_294_967_296_000 })]);
      const row = await logs.byRequestId('big-cost');
      expect(row!.cost).toBe(4_294_967_296_000);
      expect(typeof row!.cost).toBe('number');
      expect(typeof row!.created_at).toBe('number');
    });
  });

  describe.skipIf(skip)('channels', () => {
    it('inserts, updates and deletes channels', async () => {
      const a = await channels.insert(channelRow('first', { source: 'env', env_provider: 'SIMX' }));
      const b = await channels.insert(channelRow('second', { priority: 5 }));
      expect(b).not.toBe(a);
      expect((await channels.byId(a))?.name).toBe('first');
      expect((await channels.byId(b))?.priority).toBe(5);
      expect((await channels.byEnvProvider('SIMX'))?.id).toBe(a);
      expect(await channels.byEnvProvider('NOPE')).toBeUndefined();
      await expect(channels.insert(channelRow('dup', { env_provider: 'SIMX' }))).rejects.toThrow();

      await channels.update(b, { status: 'disabled', weight: 7, models: JSON.stringify(['z']), updated_at: 42 });
      expect(await channels.byId(b)).toMatchObject({ status: 'disabled', weight: 7, models: '["z"]', updated_at: 42 });
      const ids = (await channels.list()).map((c) => c.id);
      expect(ids).toEqual(expect.arrayContaining([a, b]));
      expect(ids).toEqual([...ids].sort((x, y) => x - y));

      await channels.disableModel(b, 'z', 'broken', 1);
      expect(await channels.delete(b)).toBe(true);
      expect(await channels.delete(b)).toBe(false);
      expect(await channels.byId(b)).toBeUndefined();
      expect((await channels.disabledModels()).filter((d) => d.channel_id === b)).toEqual([]);
    });

    it('returns the id of the row it inserted, also when inserts run concurrently', async () => {
      const names = Array.from({ length: 12 }, (_, i) => `concurrent-${i}`);
      const ids = await Promise.all(names.map((n) => channels.insert(channelRow(n))));
      for (let i = 0; i < names.length; i++) expect((await channels.byId(ids[i]!))?.name).toBe(names[i]);
    });

    it('disables and enables channel models', async () => {
      const id = await channels.insert(channelRow('health'));
      await channels.disableModel(id, 'm1', 'first reason', 1000);
      await channels.disableModel(id, 'm1', 'second reason', 2000); // replaces, no duplicate key
      await channels.disableModel(id, 'm2', 'other', 3000, '[{"at":2990,"error":"down"}]');
      const mine = () => channels.disabledModels().then((l) => l.filter((d) => d.channel_id === id).sort((x, y) => x.model.localeCompare(y.model)));
      expect(await mine()).toEqual([
        { channel_id: id, model: 'm1', disabled_at: 2000, reason: 'second reason', failures: null },
        { channel_id: id, model: 'm2', disabled_at: 3000, reason: 'other', failures: '[{"at":2990,"error":"down"}]' },
      ]);
      await channels.enableModel(id, 'm1');
      expect((await mine()).map((d) => d.model)).toEqual(['m2']);
      await channels.disableModel(id, 'm1', 'again', 4000);
      await channels.enableModel(id);
      expect(await mine()).toEqual([]);
    });

    it('disables and enables the keys of a pool, forgets those taken out of it, and filters on them', async () => {
      const id = await channels.insert(channelRow('pooled'));
      const fp = (n: number) => `${n}`.padStart(32, 'a');
      await channels.disableKey({ channel_id: id, key_fp: fp(1), disabled_at: 1000, reason: 'refused' });
      await channels.disableKey({ channel_id: id, key_fp: fp(1), disabled_at: 2000, reason: 'refused again' }); // replaces
      await channels.disableKey({ channel_id: id, key_fp: fp(2), disabled_at: 3000, reason: 'no quota' });
      await channels.disableKey({ channel_id: id, key_fp: fp(3), disabled_at: 4000, reason: 'gone' });
      const mine = () => channels.disabledKeys().then((l) => l.filter((d) => d.channel_id === id).sort((x, y) => x.key_fp.localeCompare(y.key_fp)));
      expect((await mine())[0]).toEqual({ channel_id: id, key_fp: fp(1), disabled_at: 2000, reason: 'refused again' });
      expect((await channels.page({ status: 'auto_disabled' }, 0, 100)).rows.map((r) => r.id)).toContain(id);
      await channels.keepKeyStates(id, [fp(1), fp(2)]);
      expect((await mine()).map((d) => d.key_fp)).toEqual([fp(1), fp(2)]);
      await channels.enableKeys(id, fp(1));
      expect((await mine()).map((d) => d.key_fp)).toEqual([fp(2)]);
      await channels.delete(id);
      expect(await mine()).toEqual([]);
    });

    it('keeps the latest test of each channel model, also when several processes save one at once', async () => {
      const id = await channels.insert(channelRow('tested'));
      const other = t.name === 'pglite' ? store : await openStore({ url: t.url! });
      try {
        const stores = [channels, new ChannelsStore(other.db)];
        await Promise.all(
          Array.from({ length: 8 }, (_, i) =>
            stores[i % 2]!.saveTest({
              channel_id: id,
              model: 'm1',
              tested_at: 1000 + i,
              ok: i % 2 === 0,
              latency_ms: i,
              status: i % 2 === 0 ? 200 : 401,
              error: i % 2 === 0 ? null : `error ${i}`,
            }),
          ),
        );
        await channels.saveTest({ channel_id: id, model: 'm2', tested_at: 5000, ok: false, latency_ms: 15000, status: null, error: 'timed out' });
        const rows = (await channels.tests([id])).sort((x, y) => x.model.localeCompare(y.model));
        expect(rows).toHaveLength(2);
        const i = rows[0]!.latency_ms;
        expect(rows[0]).toEqual({
          channel_id: id,
          model: 'm1',
          tested_at: 1000 + i,
          ok: i % 2 === 0,
          latency_ms: i,
          status: i % 2 === 0 ? 200 : 401,
          error: i % 2 === 0 ? null : `error ${i}`,
        });
        expect(rows[1]).toEqual({ channel_id: id, model: 'm2', tested_at: 5000, ok: false, latency_ms: 15000, status: null, error: 'timed out' });
        await channels.delete(id);
        expect(await channels.tests([id])).toEqual([]);
      } finally {
        if (other !== store) await other.close();
      }
    });

    it('survives several processes disabling the same channel model at once', async () => {
      const id = await channels.insert(channelRow('raced'));
      // Separate connections where the store has them, as several gateway processes would.
      const other = t.name === 'pglite' ? store : await openStore({ url: t.url! });
      try {
        const stores = [channels, new ChannelsStore(other.db)];
        await Promise.all(Array.from({ length: 8 }, (_, i) => stores[i % 2]!.disableModel(id, 'm1', `reason ${i}`, 1000 + i)));
        const rows = (await channels.disabledModels()).filter((d) => d.channel_id === id);
        expect(rows).toHaveLength(1);
        expect(rows[0]!.reason).toMatch(/^reason \d$/);
      } finally {
        if (other !== store) await other.close();
      }
    });
  });

  describe.skipIf(skip)('logs', () => {
    it('inserts 1,200 rows in batches, lists with filters, finds by request id and purges old rows in batches', async () => {
      await sql`delete from logs`.execute(store.db);
      await sql`delete from log_rollups`.execute(store.db);
      const now = Date.now();
      const rows = Array.from({ length: 1200 }, (_, i) => logRow(i, { created_at: i < 700 ? now - 40 * DAY + i : now - 1000 + (i - 700) }));
      const groupSpy = vi.spyOn(logs.rollups, 'add');
      try {
        await logs.insertMany(rows);
        // Servers: 500 + 500 + 200 rows per INSERT (each with its rollups); the embedded store loads them with one COPY.
        expect(groupSpy.mock.calls.map(([r]) => r.reduce((n, x) => n + (x.grain === 0 && x.dim === 'all' ? x.requests : 0), 0))).toEqual(
          t.name === 'pglite' ? [1200] : [500, 500, 200],
        );
      } finally {
        groupSpy.mockRestore();
      }
      const count = async () => Number((await sql<{ n: number }>`select count(*) as n from logs`.execute(store.db)).rows[0]!.n);
      expect(await count()).toBe(1200);

      const page = await logs.list({}, 0, 50);
      expect(page).toHaveLength(50);
      expect(page[0]!.request_id).toBe('req-01199'); // newest first
      expect(page.map((r) => r.id)).toEqual([...page.map((r) => r.id)].sort((x, y) => y - x));
      expect(page[0]).not.toHaveProperty('request_body');
      expect((await logs.list({}, 1190, 50)).length).toBe(10);

      const byUser = await logs.list({ userId: 2 }, 0, 2000);
      expect(byUser).toHaveLength(400);
      expect(byUser.every((r) => r.user_id === 2)).toBe(true);
      expect(await logs.list({ tokenId: 11 }, 0, 2000)).toHaveLength(600);
      expect(await logs.list({ channelId: 103 }, 0, 2000)).toHaveLength(300);
      expect(await logs.list({ model: 'model-odd' }, 0, 2000)).toHaveLength(600);
      expect(await logs.list({ status: 'error' }, 0, 2000)).toHaveLength(120);
      expect(await logs.list({ status: 'ok' }, 0, 2000)).toHaveLength(1080);
      expect(await logs.list({ from: now - 2 * DAY }, 0, 2000)).toHaveLength(500);
      expect(await logs.list({ to: now - 2 * DAY }, 0, 2000)).toHaveLength(700);
      const combined = await logs.list({ userId: 1, model: 'model-even', status: 'error', from: now - 2 * DAY }, 0, 2000);
      expect(combined.length).toBeGreaterThan(0);
      expect(combined.every((r) => r.user_id === 1 && r.model === 'model-even' && r.status >= 400 && r.created_at >= now - 2 * DAY)).toBe(true);
      const one = await logs.list({ requestId: 'req-00042' }, 0, 10);
      expect(one).toHaveLength(1);
      expect(one[0]).toMatchObject({ prompt_tokens: 42, completion_tokens: 84, cost: 42, is_stream: 0, status: 200 });

      // byRequestId: the full row, the newest one when a request id repeats.
      await logs.insertMany([logRow(5000, { request_id: 'req-00042', status: 503, error: 'second try', request_body: '{"a":1}' })]);
      const detail = await logs.byRequestId('req-00042');
      expect(detail).toMatchObject({ status: 503, error: 'second try', request_body: '{"a":1}' });
      expect(await logs.byRequestId('req-missing')).toBeUndefined();

      // Retention: exactly the 700 old rows go, 200 at a time (4 batches), the 501 new rows stay.
      const writer = new LogRetention(logs, (err) => {
        throw err;
      });
      const deleteSpy = vi.spyOn(logs, 'deleteOlderThan');
      try {
        expect(await writer.purge(30, 200, now)).toBe(700);
        expect(deleteSpy.mock.calls.map((c) => c[1])).toEqual([200, 200, 200, 200]);
        expect(deleteSpy.mock.results.length).toBe(4);
      } finally {
        deleteSpy.mockRestore();
      }
      expect(await count()).toBe(501);
      expect(await logs.list({ to: now - 30 * DAY }, 0, 10)).toEqual([]);
      expect(await writer.purge(30, 200, now)).toBe(0);
      expect(await writer.purge(0, 200, now)).toBe(0);
      expect(await count()).toBe(501);
      // The rollups of the purged rows went with them, at every grain; those of the rows kept stayed.
      for (const grain of [0, 1, 2]) {
        const r = await sql<{ n: number }>`select coalesce(sum(requests), 0) as n from log_rollups where grain = ${grain} and dim = 'all'`.execute(store.db);
        expect(Number(r.rows[0]!.n)).toBe(501);
      }
    });

    it("the ledger writes settled requests' rows 2,000 at most to a transaction, and the rest on flush", async () => {
      await sql`delete from logs`.execute(store.db);
      const errors: Error[] = [];
      const { ledger, ledgerStore } = await ledgerOn(store, { logFlushMs: 60_000, flushMs: 60_000, onError: (e) => errors.push(e) });
      const spy = vi.spyOn(ledgerStore, 'commit');
      try {
        const free = { userId: 1, limitedTokenId: null, tokenId: null, amount: 0 };
        for (let i = 0; i < 4500; i++) ledger.settle(free, 0, logRow(i, { request_id: `w-${i}` }));
        await ledger.flush();
        // The write that 2,000 queued rows start takes all queued by then, 2,000 a
        // transaction; flush() then gives back unused leases with no rows left.
        expect(spy.mock.calls.map((c) => c[1].length)).toEqual([2000, 2000, 500, 0]);
      } finally {
        spy.mockRestore();
        await ledger.close();
      }
      expect(errors).toEqual([]);
      expect((await logs.list({}, 0, 5000)).length).toBe(4500);
    });

    it('keeps text that CSV must quote intact, and an empty string distinct from NULL', async () => {
      // Text that CSV (the embedded store's COPY path) must quote: commas, quotes,
      // newlines, backslashes; and an empty string stays distinct from NULL.
      const hostile = 'a,b "c"\nline2\r\n\\N \\ end';
      await logs.insertMany([logRow(5001, { request_id: 'csv-1', status: 500, error: '', request_body: hostile, upstream_model: null })]);
      expect(await logs.byRequestId('csv-1')).toMatchObject({ error: '', request_body: hostile, upstream_model: null });
    });

    it('writes every column to its own place (a distinct value in each)', async () => {
      const row: NewLog = {
        request_id: 'cols-1',
        created_at: 1_700_000_000_001,
        user_id: 2,
        token_id: 3,
        channel_id: 4,
        endpoint: 'rerank',
        model: 'm-in',
        upstream_model: 'm-up',
        is_stream: 1,
        prompt_tokens: 5,
        completion_tokens: 6,
        usage_source: 'local',
        cost: 7,
        latency_ms: 8,
        ttft_ms: 9,
        status: 418,
        error: 'err',
        attempts: 10,
        request_body: '{"b":1}',
      };
      await logs.insertMany([row]);
      expect(await logs.byRequestId('cols-1')).toMatchObject(row);
    });

    it('keeps a 1 MB request body intact', async () => {
      const body = JSON.stringify({ model: 'x', messages: [{ role: 'user', content: 'é€😀 '.repeat(4) + 'y'.repeat(1_048_576) }] });
      await logs.insertMany([logRow(1, { request_id: 'big-body', status: 500, request_body: body })]);
      const row = await logs.byRequestId('big-body');
      expect(row!.request_body!.length).toBe(body.length);
      expect(row!.request_body).toBe(body);
    });

    it('writes a batch of many large failed bodies (more than a MySQL packet in all)', async () => {
      // 13 failed requests of 1.4 MB each in one flush: 18 MB, above MariaDB's default 16 MB max_allowed_packet.
      const body = JSON.stringify({ messages: [{ role: 'user', content: '"quoted"\\'.repeat(100_000) }] });
      const rows = Array.from({ length: 13 }, (_, i) => logRow(i, { request_id: `fat-${i}`, status: 502, request_body: body }));
      await logs.insertMany([...rows, logRow(99, { request_id: 'fat-small' })]);
      const stored = await sql<{
        n: number;
        total: number;
      }>`select count(*) as n, sum(length(request_body)) as total from logs where request_id like 'fat-%'`.execute(store.db);
      expect(Number(stored.rows[0]!.n)).toBe(14);
      expect(Number(stored.rows[0]!.total)).toBe(13 * body.length);
      expect((await logs.byRequestId('fat-12'))!.request_body).toBe(body);
    });
  });
});

function token(userId: number, keyHash: string) {
  return {
    user_id: userId,
    name: 'test token',
    key_hash: keyHash,
    key_hint: 'sk-…hint',
    status: 'enabled' as const,
    expires_at: null,
    quota_limit: null,
    models: null,
    ip_allow: null,
  };
}
