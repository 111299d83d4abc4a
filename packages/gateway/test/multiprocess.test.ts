// Two gateway processes (the real CLI, from dist/) on one PostgreSQL or MySQL
// database, in front of the upstream simulator: a burst of concurrent
// requests split across both can never overdraw the shared balance, money is
// conserved exactly once both have shut down, a channel model that one
// process auto-disables and a price one process sets or deletes are in force
// on the other at its next refresh, and after kill -9 of one process its
// leases come back to the balance by themselves.
import { spawn, execFileSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startUpstreamSim, type UpstreamSim } from '@kbchat/upstream-sim';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LedgerStore } from '../src/accounts/ledger-store.js';
import { AccountsStore } from '../src/accounts/store.js';
import { LogsStore } from '../src/logs/store.js';
import { openStore, type Store } from '../src/store/db.js';
import { testStore, type TestStore } from './stores.js';

const REPO = resolve(dirname(fileURLToPath(import.meta.url)), '../../..');
const CLI = join(REPO, 'packages/cli/bin/kbchat.js');
const ROOT_TOKEN = 'sk-multiprocess-root-token-0123456789';
const SIM_KEY = 'sk-sim-multiprocess';

const stores: TestStore[] = await Promise.all((['postgres', 'mysql'] as const).map((n) => testStore(n)));

// The CLI runs from dist/: build it once (a no-op when it is up to date).
beforeAll(() => {
  if (stores.every((s) => s.skipReason)) return;
  try {
    execFileSync(process.execPath, [join(REPO, 'node_modules/typescript/bin/tsc'), '-b'], { cwd: REPO, stdio: 'pipe' });
  } catch (err) {
    const e = err as { stdout?: Buffer; stderr?: Buffer };
    throw new Error(`tsc -b failed, so the CLI cannot run from dist/:\n${e.stdout ?? ''}${e.stderr ?? ''}`, { cause: err });
  }
}, 120_000);

afterAll(async () => {
  await Promise.all(stores.map((s) => s.drop()));
});

function freePort(): Promise<number> {
  return new Promise((ok, fail) => {
    const srv = createServer();
    srv.once('error', fail);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as { port: number };
      srv.close(() => ok(port));
    });
  });
}

interface GatewayProcess {
  name: string;
  url: string;
  child: ChildProcess;
  output: () => string;
  exited: Promise<number | null>;
  dataDir: string;
}

async function startGatewayProcess(name: string, env: Record<string, string>): Promise<GatewayProcess> {
  const port = await freePort();
  const dataDir = mkdtempSync(join(tmpdir(), `kbchat-mp-${name}-`));
  const child = spawn(process.execPath, [CLI, 'gateway', '--port', String(port)], {
    cwd: REPO,
    // A clean environment: no stray <PROVIDER>_API_KEY of the machine becomes a
    // channel, and no local models (local-channel.test.ts covers those).
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? tmpdir(), DATA_DIR: dataDir, LOCAL_MODELS: 'off', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (out += d.toString()));
  const exited = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));
  await new Promise<void>((ok, fail) => {
    const timer = setTimeout(() => fail(new Error(`gateway ${name} did not start within 30 s:\n${out}`)), 30_000);
    const check = () => {
      if (/listening on http:\/\/\S+/.test(out)) {
        clearTimeout(timer);
        child.stdout!.off('data', check);
        ok();
      }
    };
    child.stdout!.on('data', check);
    void exited.then((code) => {
      clearTimeout(timer);
      fail(new Error(`gateway ${name} exited with ${code} before listening:\n${out}`));
    });
  });
  const url = /listening on (http:\/\/\S+)/.exec(out)![1]!;
  expect(url).toBe(`http://127.0.0.1:${port}`);
  return { name, url, child, output: () => out, exited, dataDir };
}

async function stopGatewayProcess(p: GatewayProcess, signal: NodeJS.Signals = 'SIGTERM'): Promise<number | null> {
  if (p.child.exitCode === null && p.child.signalCode === null) p.child.kill(signal);
  const timeout = new Promise<'timeout'>((r) => setTimeout(() => r('timeout'), 10_000).unref());
  const code = await Promise.race([p.exited, timeout]);
  if (code === 'timeout') {
    p.child.kill('SIGKILL');
    return p.exited;
  }
  return code;
}

async function chat(p: GatewayProcess, body: unknown): Promise<{ status: number; json: any }> {
  const res = await fetch(`${p.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${ROOT_TOKEN}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  return { status: res.status, json: await res.json() };
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe.each(stores)('two gateway processes on $name', (t) => {
  const skip = Boolean(t.skipReason);
  if (skip) console.warn(`[skip] multi-process tests on ${t.name}: ${t.skipReason}`);

  let sim: UpstreamSim;
  let store: Store;
  let accounts: AccountsStore;
  let a: GatewayProcess | undefined;
  let b: GatewayProcess | undefined;
  let common: Record<string, string>;

  beforeAll(async () => {
    if (skip) return;
    sim = await startUpstreamSim({ port: 0, key: SIM_KEY, slowMs: 2000 });
    common = {
      GATEWAY_DATABASE_URL: t.url!,
      GATEWAY_SECRET_KEY: 'multiprocess-shared-secret',
      GATEWAY_HOST: '127.0.0.1',
      INITIAL_ROOT_TOKEN: ROOT_TOKEN,
      ROOT_PASSWORD: 'multiprocess-root-password',
      SIM_API_KEY: SIM_KEY,
      SIM_BASE_URL: `${sim.url}/v1`,
      SIM_MODELS: 'sim-chat,sim-slow,sim-503',
      // 1 unit per 1M input tokens and 2 per 1M output: one token costs 1 or 2 micro-units.
      DEFAULT_INPUT_PRICE: '1',
      DEFAULT_OUTPUT_PRICE: '2',
      LOG_LEVEL: 'warn',
      LOG_FLUSH_MS: '50',
      LEDGER_FLUSH_MS: '100',
      // Small balance leases (5,000 micro-units, about two requests), so that both processes lease and top up.
      BALANCE_LEASE_UNITS: '0.005',
      CHANNEL_REFRESH_MS: '200',
      CHANNEL_RETEST_INTERVAL_MS: '0',
    };
    // The first start migrates the fresh database and creates root and the channel;
    // the second joins them. A disables a channel model after 2 failures, B never
    // does on its own, so B can only learn of it from the store.
    a = await startGatewayProcess('a', { ...common, CHANNEL_DISABLE_THRESHOLD: '2' });
    b = await startGatewayProcess('b', { ...common, CHANNEL_DISABLE_THRESHOLD: '0' });
    store = await openStore({ url: t.url });
    accounts = new AccountsStore(store.db);
  }, 90_000);

  afterAll(async () => {
    await Promise.all([a, b].map((p) => (p ? stopGatewayProcess(p, 'SIGKILL') : undefined)));
    for (const p of [a, b]) if (p) rmSync(p.dataDir, { recursive: true, force: true });
    await store?.close();
    await sim?.close();
  });

  it.skipIf(skip)('both serve the same root token and channel', async () => {
    for (const p of [a!, b!]) {
      const r = await chat(p, { model: 'sim-chat', messages: [{ role: 'user', content: 'hi there' }] });
      expect(r.status, JSON.stringify(r.json)).toBe(200);
      expect(r.json.choices[0].message.content).toMatch(/^Echo: hi there/);
    }
    const channels = await store.db.selectFrom('channels').select(['id', 'env_provider']).execute();
    expect(channels).toEqual([{ id: expect.any(Number), env_provider: 'SIM' }]);
  });

  it.skipIf(skip)('a top-up code redeemed through both at the same moment is credited once', async () => {
    const api = (p: GatewayProcess, path: string, body: unknown) =>
      fetch(`${p.url}${path}`, {
        method: 'POST',
        headers: { authorization: `Bearer ${ROOT_TOKEN}`, 'content-type': 'application/json' },
        body: JSON.stringify(body),
      }).then(async (r) => ({ status: r.status, json: await r.json() }));
    const made = await api(a!, '/api/redemptions', { name: 'race', quota: 3, count: 1 });
    expect(made.status).toBe(201);
    const root = (await accounts.userByName('root'))!;
    // What root has, leases held by the processes counted (earlier tests' leases come back meanwhile: the stored balance moves).
    const has = async () =>
      (
        (await fetch(`${a!.url}/api/users/${root.id}`, { headers: { authorization: `Bearer ${ROOT_TOKEN}` } }).then((r) => r.json())) as {
          balance_micros: number;
        }
      ).balance_micros;
    // Steady: the earlier requests' charges and leases written (two reads 300 ms apart agree), whatever the machine's load.
    let before = await has();
    for (let i = 0; i < 20; i++) {
      await sleep(300);
      const now = await has();
      if (now === before) break;
      before = now;
    }
    const results = await Promise.all(Array.from({ length: 16 }, (_, i) => api(i % 2 ? b! : a!, '/api/user/topup', { key: made.json.keys[0] })));
    expect(results.filter((r) => r.status === 200)).toHaveLength(1);
    expect(results.filter((r) => r.status === 400)).toHaveLength(15);
    expect(await has()).toBe(before + 3_000_000);
    const rows = await store.db.selectFrom('balance_changes').selectAll().where('ref_id', '=', made.json.data[0].id).execute();
    expect(rows).toHaveLength(1);
  });

  it.skipIf(skip)('a channel model disabled by one process is seen by the other at its refresh', async () => {
    const body = { model: 'sim-503', messages: [{ role: 'user', content: 'x' }] };
    // B relays sim-503 to the upstream while it is enabled.
    expect((await chat(b!, body)).json.error.code).toBe('bad_response_status_code');
    // Two failures on A disable sim-503 on the channel; A knows at once.
    for (let i = 0; i < 2; i++) expect((await chat(a!, body)).json.error.code).toBe('bad_response_status_code');
    const onA = await chat(a!, body);
    expect(onA.status).toBe(503);
    expect(onA.json.error.code).toBe('model_not_found');
    // B has no failures of its own (threshold 0): it learns from the store, within a refresh or two.
    const started = Date.now();
    let codeOnB = '';
    while (Date.now() - started < 3000) {
      codeOnB = (await chat(b!, body)).json.error.code;
      if (codeOnB === 'model_not_found') break;
      await sleep(50);
    }
    expect(codeOnB).toBe('model_not_found');
    const state = await store.db.selectFrom('channel_model_state').selectAll().execute();
    expect(state).toHaveLength(1);
    expect(state[0]).toMatchObject({ model: 'sim-503' });
    expect(state[0]!.reason).toMatch(/auto-disabled after 2 failures/);
  });

  it.skipIf(skip)('a price set through one process is charged by the other within CHANNEL_REFRESH_MS, and so is its deletion', async () => {
    const login = await fetch(`${a!.url}/api/auth/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ username: 'root', password: 'multiprocess-root-password' }),
    });
    const session = ((await login.json()) as { session: string }).session;
    const admin = (method: string, body?: unknown) =>
      fetch(`${a!.url}/api/prices/sim-chat`, {
        method,
        headers: { authorization: `Bearer ${session}`, ...(body ? { 'content-type': 'application/json' } : {}) },
        body: body ? JSON.stringify(body) : undefined,
      });
    /** The cost B logged for one request, once its row is written. */
    const costOnB = async (): Promise<{ cost: number; prompt: number; completion: number }> => {
      const res = await fetch(`${b!.url}/v1/chat/completions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${ROOT_TOKEN}`, 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'sim-chat', messages: [{ role: 'user', content: 'price check' }] }),
      });
      expect(res.status).toBe(200);
      const id = res.headers.get('x-request-id')!;
      for (let i = 0; i < 100; i++) {
        const row = await store.db.selectFrom('logs').select(['cost', 'prompt_tokens', 'completion_tokens']).where('request_id', '=', id).executeTakeFirst();
        if (row) return { cost: Number(row.cost), prompt: Number(row.prompt_tokens), completion: Number(row.completion_tokens) };
        await sleep(20);
      }
      throw new Error(`no log row for ${id}`);
    };
    expect((await admin('PUT', { input_price: 1000, output_price: 3000 })).status).toBe(200);
    await sleep(600); // CHANNEL_REFRESH_MS is 200 here
    const priced = await costOnB();
    expect(priced.cost).toBe(priced.prompt * 1000 + priced.completion * 3000);
    expect((await admin('DELETE')).status).toBe(200);
    await sleep(600);
    const deflt = await costOnB();
    expect(deflt.cost).toBe(deflt.prompt * 1 + deflt.completion * 2);
  });

  it.skipIf(skip)('a concurrent burst across both never overdraws the balance, and money is conserved', async () => {
    // Let the earlier requests' settlements and leases reach the store before the balance is set.
    await sleep(600);
    const root = (await accounts.userByName('root'))!;
    // One reservation: the input estimate (well under 200 tokens) + 1000 output tokens at 2 = about 2,000-2,200.
    // A balance of 15,420 fits exactly 7 of them for any reservation between 1,928 and 2,202.
    const K = 7;
    const N = 30;
    const balance0 = 15_420;
    await new LedgerStore(store.db, store.kind, new LogsStore(store.db)).changeBalance(root.id, { set: balance0 });
    const used0 = Number(root.used);
    const requests0 = Number(root.request_count);

    let minBalance = Infinity;
    let polling = true;
    const poller = (async () => {
      while (polling) {
        minBalance = Math.min(minBalance, Number((await accounts.userById(root.id))!.balance));
        await sleep(10);
      }
    })();

    const body = { model: 'sim-slow', messages: [{ role: 'user', content: 'count the coins' }], max_tokens: 1000 };
    // sim-slow answers after 2 s (800 ms was overrun under load): every reservation is taken before any settlement could refund one.
    const results = await Promise.all(Array.from({ length: N }, (_, i) => chat(i % 2 ? b! : a!, body)));
    polling = false;
    await poller;

    const ok = results.filter((r) => r.status === 200);
    const refused = results.filter((r) => r.status !== 200);
    for (const r of refused) {
      expect(r.status).toBe(403);
      expect(r.json.error.code).toBe('insufficient_user_quota');
    }
    expect(ok.length, `${ok.length} of ${N} served`).toBeLessThanOrEqual(K);
    // Leases may strand less than one reservation in each process; never more.
    expect(ok.length).toBeGreaterThanOrEqual(K - 1);
    expect(minBalance).toBeGreaterThanOrEqual(0);
    for (const r of ok) expect(r.json.choices[0].message.content).toMatch(/^Echo: count the coins/);

    // Graceful shutdown writes back leases, settlements and logs.
    const codes = await Promise.all([stopGatewayProcess(a!), stopGatewayProcess(b!)]);
    expect(codes, a!.output() + b!.output()).toEqual([0, 0]);

    const after = (await accounts.userById(root.id))!;
    const logs = await store.db.selectFrom('logs').selectAll().where('model', '=', 'sim-slow').execute();
    expect(logs.filter((l) => l.status === 200)).toHaveLength(ok.length);
    for (const l of logs) {
      expect(l.cost).toBe(l.prompt_tokens * 1 + l.completion_tokens * 2);
      if (l.status === 200) expect(l.cost).toBeGreaterThan(0);
    }
    const spent = logs.reduce((n, l) => n + Number(l.cost), 0);
    expect(Number(after.balance)).toBeGreaterThanOrEqual(0);
    expect(Number(after.balance) + spent).toBe(balance0);
    expect(Number(after.used) - used0).toBe(spent);
    expect(Number(after.request_count) - requests0).toBe(ok.length);
  });

  it.skipIf(skip)(
    'kill -9 of one process in a burst: its leases come back within 2 x LEDGER_FLUSH_MS + 3 s, and the user pays exactly what the logs record',
    async () => {
      // 1-unit leases and a balance of 5, as the operator who found the loss had them.
      const env = { ...common, BALANCE_LEASE_UNITS: '1', LEDGER_FLUSH_MS: '200', DEFAULT_INPUT_PRICE: '2', DEFAULT_OUTPUT_PRICE: '8' };
      const c = await startGatewayProcess('c', env);
      const d = await startGatewayProcess('d', env);
      try {
        const root = (await accounts.userByName('root'))!;
        await new LedgerStore(store.db, store.kind, new LogsStore(store.db)).changeBalance(root.id, { set: 5_000_000 });
        const since = Date.now();
        const body = { model: 'sim-slow', messages: [{ role: 'user', content: 'spend it' }], max_tokens: 100 };
        const burst = Array.from({ length: 40 }, (_, i) => chat(i % 2 ? d : c, body).catch(() => ({ status: 0, json: null })));
        // Killed while its requests are in flight (sim-slow answers after 2 s), holding a lease:
        // watched for rather than waited a fixed time, which a loaded machine overran.
        const cHoldsLease = async () =>
          (
            await store.db
              .selectFrom('balance_leases')
              .innerJoin('ledger_holders', 'ledger_holders.id', 'balance_leases.holder_id')
              .select(['ledger_holders.pid', 'balance_leases.amount'])
              .execute()
          ).some((l) => l.pid === c.child.pid && Number(l.amount) > 0);
        let cLeased = await cHoldsLease();
        for (const until = Date.now() + 5_000; !cLeased && Date.now() < until; cLeased = await cHoldsLease()) await sleep(20);
        expect(cLeased).toBe(true);
        c.child.kill('SIGKILL');
        const killedAt = Date.now();
        await c.exited;
        const results = await Promise.all(burst);
        expect(results.filter((r) => r.status === 200).length).toBeGreaterThanOrEqual(15); // d served its half

        // Leases of the dead process go back by themselves (d looks for them every LEDGER_FLUSH_MS).
        let leased = Infinity;
        while (Date.now() - killedAt < 10_000) {
          const rows = await store.db
            .selectFrom('balance_leases')
            .innerJoin('ledger_holders', 'ledger_holders.id', 'balance_leases.holder_id')
            .select('ledger_holders.pid')
            .where('ledger_holders.pid', '=', c.child.pid!)
            .execute();
          leased = rows.length;
          if (leased === 0) break;
          await sleep(50);
        }
        const returnedAfter = Date.now() - killedAt;
        expect(leased).toBe(0);
        expect(returnedAfter).toBeLessThan(2 * 200 + 3000 + 1000); // the bound, plus one check's time

        expect(await stopGatewayProcess(d)).toBe(0);
        const after = (await accounts.userById(root.id))!;
        const leases = await store.db.selectFrom('balance_leases').select('amount').where('kind', '=', 'user').where('account_id', '=', root.id).execute();
        expect(leases).toEqual([]);
        const logs = await store.db.selectFrom('logs').select('cost').where('created_at', '>=', since).where('user_id', '=', root.id).execute();
        const spent = logs.reduce((n, l) => n + Number(l.cost), 0);
        expect(spent).toBeGreaterThan(0);
        // Exactly: what the user lost is what the logs record; requests the dead process served
        // without writing their rows cost the user nothing.
        expect(Number(after.balance) + spent).toBe(5_000_000);
      } finally {
        await Promise.all([stopGatewayProcess(c, 'SIGKILL'), stopGatewayProcess(d, 'SIGKILL')]);
        for (const p of [c, d]) rmSync(p.dataDir, { recursive: true, force: true });
      }
    },
  );
});
