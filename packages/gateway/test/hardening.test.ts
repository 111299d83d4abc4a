// Fixes from a code review, each pinned by a test: token listing by
// permission and safe key hints, malformed URLs in the OpenAI envelope, a
// fractional root balance, bounded and non-overlapping channel re-tests,
// request logs that survive one bad row, and balance_delta next to leases.
import { rmSync } from 'node:fs';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { Reservation } from '../src/accounts/ledger.js';
import { keyHint, shownKeyHint } from '../src/accounts/secrets.js';
import type { ModelTestResult } from '../src/channels/service.js';
import { openStore, type Store } from '../src/store/db.js';
import type { NewLog } from '../src/store/schema.js';
import { ROOT_TOKEN, startTestGateway, type TestGateway } from './helpers.js';
import { ledgerOn, logRow as ledgerLogRow } from './ledger-support.js';
import { STORE_NAMES, testStore, type TestStore } from './stores.js';

const REQUEST_ID = /^\d{17}[0-9a-f]{12}$/;
const MODELS = ['sim-chat', 'sim-503', 'sim-400', 'sim-500', 'sim-strict', 'sim-hang', 'sim-embed-384'];

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function until(check: () => boolean, ms = 5000): Promise<void> {
  const end = Date.now() + ms;
  while (!check()) {
    if (Date.now() > end) throw new Error('condition not met in time');
    await sleep(10);
  }
}

type Call = { status: number; text: string; body: any; headers: Headers };

function caller(t: TestGateway) {
  return async (path: string, init: { method?: string; json?: unknown; token?: string } = {}): Promise<Call> => {
    const res = await t.api(path, init);
    const text = await res.text();
    return { status: res.status, text, body: text ? JSON.parse(text) : undefined, headers: res.headers };
  };
}

describe('hardening', () => {
  let t: TestGateway;
  let call: ReturnType<typeof caller>;
  beforeAll(async () => {
    t = await startTestGateway({ models: MODELS });
    call = caller(t);
  });
  afterAll(async () => {
    vi.restoreAllMocks();
    await t?.close();
  });

  describe('tokens: list by permission, safe key hints', () => {
    it("does not list root's or another admin's tokens to an admin, as GET /api/tokens/:id does not", async () => {
      const admin = await call('/api/users', { method: 'POST', json: { username: 'h-admin', password: 'h-admin-password', role: 'admin' } });
      const admin2 = await call('/api/users', { method: 'POST', json: { username: 'h-admin2', password: 'h-admin-password', role: 'admin' } });
      const plain = await call('/api/users', { method: 'POST', json: { username: 'h-plain', password: 'h-plain-password' } });
      for (const u of [admin, admin2, plain]) expect(u.status).toBe(201);
      const rootTok = await call('/api/tokens', { method: 'POST', json: { name: 'root second' } });
      const admin2Tok = await call('/api/tokens', { method: 'POST', json: { user_id: admin2.body.id, name: 'admin2 token' } });
      const plainTok1 = await call('/api/tokens', { method: 'POST', json: { user_id: plain.body.id, name: 'plain 1' } });
      const plainTok2 = await call('/api/tokens', { method: 'POST', json: { user_id: plain.body.id, name: 'plain 2' } });
      const session = (await call('/api/auth/login', { method: 'POST', json: { username: 'h-admin', password: 'h-admin-password' } })).body.session;
      const as = (path: string, init: { method?: string; json?: unknown } = {}) => call(path, { ...init, token: session });
      const ownTok = await as('/api/tokens', { method: 'POST', json: { name: 'admin own' } });
      expect(ownTok.status).toBe(201);

      // The single-token route refuses root's token; the list must agree.
      expect((await as(`/api/tokens/${rootTok.body.token.id}`)).status).toBe(403);
      const list = await as('/api/tokens?limit=500');
      expect(list.status).toBe(200);
      const ids = list.body.data.map((x: any) => x.id);
      expect(ids).toEqual([plainTok1.body.token.id, plainTok2.body.token.id, ownTok.body.token.id]);
      for (const x of list.body.data) expect([admin.body.id, plain.body.id]).toContain(x.user_id);
      expect(list.text).not.toContain('"user_id":1,');

      // offset and limit count the tokens the admin may see.
      const page = await as('/api/tokens?offset=1&limit=1');
      expect(page.body.data.map((x: any) => x.id)).toEqual([plainTok2.body.token.id]);
      expect((await as('/api/tokens?offset=3')).body.data).toEqual([]);

      // Asking for someone it may not manage is a 403, like the single-token routes.
      const rootList = await as('/api/tokens?user_id=1');
      expect(rootList.status).toBe(403);
      expect(rootList.body.error.code).toBe('forbidden');
      expect((await as(`/api/tokens?user_id=${admin2.body.id}`)).status).toBe(403);
      expect((await as(`/api/tokens?user_id=${plain.body.id}`)).body.data.map((x: any) => x.name)).toEqual(['plain 1', 'plain 2']);

      // Root still sees everything.
      const all = (await call('/api/tokens?limit=500')).body.data.map((x: any) => x.id);
      for (const id of [rootTok.body.token.id, admin2Tok.body.token.id, plainTok1.body.token.id, ownTok.body.token.id]) expect(all).toContain(id);
    });

    it('hints only keys of 20+ characters, and at most the first 3 and last 4', () => {
      expect(keyHint('sk-t')).toBe('***');
      expect(keyHint('sk-0123456789abcdef')).toBe('***'); // 19 characters
      expect(keyHint('sk-0123456789abcdefg')).toBe('sk-...defg'); // 20
      expect(keyHint(ROOT_TOKEN)).toBe('sk-...6789');
      // Hints stored in the old form (6 + 4 characters of any key) are not shown.
      expect(shownKeyHint('sk-t...sk-t')).toBe('***');
      expect(shownKeyHint('sk-tes...6789')).toBe('***');
      expect(shownKeyHint('sk-...6789')).toBe('sk-...6789');
      expect(shownKeyHint('***')).toBe('***');
    });

    it('never shows a short INITIAL_ROOT_TOKEN in its hint', async () => {
      const g = await startTestGateway({ models: ['sim-chat'], env: { INITIAL_ROOT_TOKEN: 'sk-t' } });
      try {
        const list = await g.api('/api/tokens', { token: 'sk-t' });
        const text = await list.text();
        expect(list.status).toBe(200);
        const body = JSON.parse(text);
        expect(body.data).toHaveLength(1);
        expect(body.data[0].key_hint).toBe('***');
        expect(text).not.toContain('sk-t');
        const created = await (await g.api('/api/tokens', { token: 'sk-t', method: 'POST', json: { name: 'long' } })).json();
        expect(created.token.key_hint).toBe(`${created.key.slice(0, 3)}...${created.key.slice(-4)}`);
      } finally {
        await g.close();
      }
    });
  });

  describe('malformed URLs', () => {
    it('answers /v1/%zz with a 400 OpenAI error that carries the request id', async () => {
      for (const path of ['/v1/%zz', '/api/users/%zz', '/%E0%A4%A']) {
        const res = await fetch(t.url + path, { headers: { authorization: `Bearer ${ROOT_TOKEN}` } });
        const id = res.headers.get('x-request-id');
        const body = (await res.json()) as any;
        expect(res.status, path).toBe(400);
        expect(id, path).toMatch(REQUEST_ID);
        expect(body.error).toMatchObject({ type: 'invalid_request_error', code: 'invalid_url', param: null });
        expect(body.error.message).toMatch(/^Invalid URL: /);
        expect(body.error.message.endsWith(`(request id: ${id})`)).toBe(true);
      }
    });
  });

  describe('root balance', () => {
    it('starts with a fractional ROOT_INITIAL_BALANCE (8.2 is 8199999.999... in floating point)', async () => {
      const g = await startTestGateway({ models: ['sim-chat'], env: { ROOT_INITIAL_BALANCE: '8.2' } });
      try {
        const root = (await (await g.api('/api/users/1')).json()) as any;
        expect(root).toMatchObject({ username: 'root', balance: 8.2, balance_micros: 8_200_000 });
      } finally {
        await g.close();
      }
    });
  });

  describe('channel tests and re-tests', () => {
    const simChannel = async () => (await call('/api/channels')).body.data.find((c: any) => c.env_provider === 'SIM');

    it('bounds a channel test: a hanging upstream is reported as timed out', { timeout: 10_000 }, async () => {
      const { channels, registry } = t.gw.services;
      const sim = await simChannel();
      const started = Date.now();
      const r = await channels.tester.testModel(registry.get(sim.id)!, 'sim-hang', { timeoutMs: 300 });
      expect(r).toMatchObject({ model: 'sim-hang', ok: false, error: 'channel test timed out after 300 ms' });
      expect(r.status).toBeUndefined();
      expect(Date.now() - started).toBeLessThan(3000);
      // An ordinary test is untouched by the bound.
      expect(await channels.tester.testModel(registry.get(sim.id)!, 'sim-chat', { timeoutMs: 5000 })).toMatchObject({ ok: true, status: 200 });
      // Without a timeoutMs: 15 s, or UPSTREAM_TIMEOUT_MS when lower (the default is 120 s).
      expect(channels.testTimeoutMs).toBe(15_000);
    });

    it('re-tests disabled models side by side per channel, a few at a time', async () => {
      const { channels, health, registry } = t.gw.services;
      const sim = await simChannel();
      const other = await call('/api/channels', {
        method: 'POST',
        json: { name: 'second', type: 'openai', base_url: `${t.sim.url}/v1`, key: 'sk-sim-upstream-key', models: ['sim-503', 'sim-500'] },
      });
      expect(other.status).toBe(201);
      const disable = async (channelId: number, model: string) => {
        for (let i = 0; i < 20 && !registry.isModelDisabled(channelId, model); i++) await health.recordFailure(channelId, model, 'test failure');
        expect(registry.isModelDisabled(channelId, model)).toBeTruthy();
      };
      const simModels = ['sim-chat', 'sim-503', 'sim-400', 'sim-500', 'sim-strict', 'sim-embed-384'];
      for (const m of simModels) await disable(sim.id, m);
      for (const m of ['sim-503', 'sim-500']) await disable(other.body.id, m);

      const running = new Map<number, number>();
      const most = new Map<number, number>();
      let total = 0;
      let mostTotal = 0;
      const spy = vi.spyOn(channels.tester, 'testModel').mockImplementation(async (channel, model): Promise<ModelTestResult> => {
        running.set(channel.id, (running.get(channel.id) ?? 0) + 1);
        most.set(channel.id, Math.max(most.get(channel.id) ?? 0, running.get(channel.id)!));
        mostTotal = Math.max(mostTotal, ++total);
        await sleep(100);
        running.set(channel.id, running.get(channel.id)! - 1);
        total--;
        return { model, endpoint: 'chat', ok: false, latency_ms: 100, error: 'still broken', tested_at: Date.now() };
      });
      try {
        const started = Date.now();
        const results = await channels.retestDisabled();
        const took = Date.now() - started;
        expect(spy).toHaveBeenCalledTimes(8);
        expect(results).toHaveLength(8);
        expect(results.every((r) => r.enabled === false && r.error === 'still broken')).toBe(true);
        // Results in the order of the disabled list.
        expect(results.map((r) => `${r.channel_id}:${r.model}`)).toEqual(registry.disabledModels().map((d) => `${d.channel_id}:${d.model}`));
        // Both channels at once, at most 3 requests per channel.
        expect(most.get(sim.id)).toBe(3);
        expect(most.get(other.body.id)).toBe(2);
        expect(mostTotal).toBe(5);
        // 6 models on one channel, 3 at a time: two rounds, not eight in a row.
        expect(took).toBeLessThan(700);
      } finally {
        spy.mockRestore();
        await health.enable(sim.id);
        await health.enable(other.body.id);
        await call(`/api/channels/${other.body.id}`, { method: 'DELETE' });
      }
      expect(registry.disabledModels()).toEqual([]);
    });

    it('skips a periodic re-test while the previous run is still going', async () => {
      const g = await startTestGateway({ models: ['sim-chat'], config: { retestIntervalMs: 20, upstreamTimeoutMs: 5000 } });
      let release!: () => void;
      try {
        const { channels } = g.gw.services;
        const spy = vi.spyOn(channels.tester, 'retestDisabled').mockImplementation(() => new Promise((resolve) => (release = () => resolve([]))));
        await until(() => spy.mock.calls.length > 0);
        await sleep(300); // 15 ticks
        expect(spy).toHaveBeenCalledTimes(1);
        release();
        await until(() => spy.mock.calls.length > 1);
        release();
        spy.mockRestore();
        expect(channels.testTimeoutMs).toBe(5000); // the channel test bound: UPSTREAM_TIMEOUT_MS, being lower than 15 s
      } finally {
        release?.();
        await g.close();
      }
    });

    it('stops a periodic re-test that hangs when the gateway closes', async () => {
      const g = await startTestGateway({ models: ['sim-hang'], config: { retestIntervalMs: 20 } });
      let closed = false;
      try {
        const { channels, health, registry } = g.gw.services;
        const sim = ((await (await g.api('/api/channels')).json()) as any).data[0];
        const spy = vi.spyOn(channels.tester, 'testModel');
        for (let i = 0; i < 20 && !registry.isModelDisabled(sim.id, 'sim-hang'); i++) await health.recordFailure(sim.id, 'sim-hang', 'test failure');
        await until(() => spy.mock.calls.length > 0);
        await sleep(100); // the test request is out, and hangs; ticks go by
        // Not g.close(): closing the simulator would end the hanging request itself.
        const started = Date.now();
        await g.gw.close();
        closed = true;
        expect(Date.now() - started).toBeLessThan(3000);
        expect(spy).toHaveBeenCalledTimes(1); // no second run piled up behind the hanging one
        expect(await spy.mock.results[0]!.value).toMatchObject({ model: 'sim-hang', ok: false, error: 'channel test aborted' });
        spy.mockRestore();
      } finally {
        if (!closed) await g.gw.close();
        await g.sim.close();
        rmSync(g.dataDir, { recursive: true, force: true });
      }
    });
  });

  describe('balance_delta', () => {
    const newUser = async (name: string, balance: number): Promise<number> => {
      const u = await call('/api/users', { method: 'POST', json: { username: name, password: 'delta-password', balance } });
      expect(u.status).toBe(201);
      return u.body.id;
    };

    it('adds to the balance, takes away down to 0, and is checked', async () => {
      const id = await newUser('h-delta', 10);
      const up = await call(`/api/users/${id}`, { method: 'PATCH', json: { balance_delta: 2.5 } });
      expect(up.status).toBe(200);
      expect(up.body).toMatchObject({ balance: 12.5, balance_micros: 12_500_000 });
      expect((await call(`/api/users/${id}`, { method: 'PATCH', json: { balance_delta: -0.1 } })).body.balance_micros).toBe(12_400_000);
      expect((await call(`/api/users/${id}`, { method: 'PATCH', json: { balance_delta: -20 } })).body.balance_micros).toBe(0);

      for (const json of [{ balance_delta: 'lots' }, { balance_delta: 2e9 }, { balance: 1, balance_delta: 1 }]) {
        const r = await call(`/api/users/${id}`, { method: 'PATCH', json });
        expect(r.status, JSON.stringify(json)).toBe(400);
        expect(r.body.error.param).toBe('balance_delta');
      }
      expect((await call(`/api/users/${id}`)).body.balance_micros).toBe(0);
    });

    it("counts the leases other gateway processes hold as the user's: a delta composes with them, a set balance means what it says", async () => {
      // A second process on the same database, as the ledger of another gateway.
      const { ledger: other } = await ledgerOn(t.gw.services.store, { flushMs: 60_000, logFlushMs: 60_000 });
      const spend = async (userId: number): Promise<Reservation> => {
        const r = await other.reserve(userId, null, false, 100_000);
        expect(typeof r).toBe('object');
        return r as Reservation;
      };
      try {
        const a = await newUser('h-delta-lease', 10);
        const ra = await spend(a); // takes a 1-unit lease: 9 left in the store, 1 held
        expect((await call(`/api/users/${a}`)).body).toMatchObject({ balance_micros: 10_000_000, leased_micros: 1_000_000 });
        expect((await call(`/api/users/${a}`, { method: 'PATCH', json: { balance_delta: 5 } })).body.balance_micros).toBe(15_000_000);
        other.settle(ra, 100_000, ledgerLogRow(ra, 100_000)); // the request cost 0.1
        await other.flush(); // the other process gives back its 0.9
        expect((await call(`/api/users/${a}`)).body).toMatchObject({ balance_micros: 14_900_000, leased_micros: 0 });

        const b = await newUser('h-set-lease', 10);
        const rb = await spend(b);
        expect((await call(`/api/users/${b}`, { method: 'PATCH', json: { balance: 15 } })).body.balance_micros).toBe(15_000_000);
        other.settle(rb, 100_000, ledgerLogRow(rb, 100_000));
        await other.flush();
        expect((await call(`/api/users/${b}`)).body.balance_micros).toBe(14_900_000);
      } finally {
        await other.close();
      }
    });
  });
});

// ---------------------------------------------------------------------------
// Request logs: a batch the store refuses is retried row by row.

const stores: TestStore[] = await Promise.all(STORE_NAMES.map((n) => testStore(n)));

function logRow(requestId: string, over: Partial<NewLog> = {}): NewLog {
  return {
    request_id: requestId,
    created_at: Date.now(),
    user_id: 1,
    token_id: 1,
    channel_id: 1,
    endpoint: 'chat',
    model: 'sim-chat',
    upstream_model: null,
    is_stream: 0,
    prompt_tokens: 1,
    completion_tokens: 1,
    usage_source: 'upstream',
    cost: 1,
    latency_ms: 1,
    ttft_ms: null,
    status: 502,
    error: 'upstream failed',
    attempts: 1,
    request_body: '{"model":"sim-chat"}',
    ...over,
  };
}

describe.each(stores)('request log rows on $name', (ts) => {
  const skip = !ts.url;
  let store: Store;
  beforeAll(async () => {
    if (skip) return;
    store = await openStore({ url: ts.url });
  });
  afterAll(async () => {
    await store?.close();
    await ts.drop();
  });

  const count = async (requestId: string) =>
    Number((await sql<{ n: number }>`select count(*) as n from logs where request_id = ${requestId}`.execute(store.db)).rows[0]!.n);
  const free = { userId: 1, limitedTokenId: null, tokenId: null, amount: 0 };

  it.skipIf(skip)('writes no row twice when a batch spans several statements and a later one fails', async () => {
    const errors: Error[] = [];
    const { ledger } = await ledgerOn(store, { flushMs: 60_000, logFlushMs: 60_000, onError: (err) => errors.push(err) });
    const body = 'x'.repeat(1_500_000); // 3 such rows pass the 4 MB a statement may carry
    for (let i = 0; i < 4; i++) ledger.settle(free, 0, logRow(`wr-big-${i}`, { request_body: body }));
    ledger.settle(free, 0, logRow('wr-big-bad', { model: 'm'.repeat(300) }));
    await ledger.close();
    for (let i = 0; i < 4; i++) expect(await count(`wr-big-${i}`), `wr-big-${i}`).toBe(1);
    expect(await count('wr-big-bad')).toBe(0);
    expect(errors.map((e) => e.message)).toEqual([expect.stringContaining('request log wr-big-bad dropped')]);
  });
});
