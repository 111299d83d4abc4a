// What the console's channels page needs from the admin API, over real HTTP
// with the upstream simulator (it wants a key) on every store: each channel
// model's latest test kept for every later read and every process, testing
// every enabled channel at once with a bounded number of requests, pages with
// a search and a status filter, why a model was auto-disabled and when it is
// tested again, the provider types and presets, and bad input named.
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { ChannelsStore } from '../src/channels/store.js';
import { startTestGateway, type TestGateway } from './helpers.js';
import { STORE_NAMES, testStore, type TestStore } from './stores.js';

const stores: TestStore[] = await Promise.all(STORE_NAMES.map((n) => testStore(n)));
afterAll(async () => {
  await Promise.all(stores.map((s) => s.drop()));
});

const SIM_KEY = 'sk-sim-channels-console-key';
const MODELS = ['sim-chat', 'sim-503', 'sim-embed-8'];
const RETEST_MS = 60_000;
/** Processes sharing a store share the secret that seals channel keys. */
const SHARED = { GATEWAY_SECRET_KEY: 'channels-console-shared-secret' };

describe.each(stores)('channels for the console: $name', (t) => {
  const skip = Boolean(t.skipReason);
  let gw: TestGateway;

  beforeAll(async () => {
    if (skip) return;
    gw = await startTestGateway({
      databaseUrl: t.url,
      models: MODELS,
      sim: { key: SIM_KEY },
      env: SHARED,
      config: { retestIntervalMs: RETEST_MS, disableThreshold: 3 },
    });
  }, 60_000);
  afterAll(async () => {
    await gw?.close();
  });

  async function call(path: string, init: { method?: string; json?: unknown } = {}) {
    const res = await gw.api(path, init);
    const text = await res.text();
    return { status: res.status, text, body: text ? JSON.parse(text) : undefined };
  }
  const create = async (json: Record<string, unknown>) => {
    const r = await call('/api/channels', {
      method: 'POST',
      json: { type: 'openai', base_url: `${gw.sim.url}/v1`, key: SIM_KEY, models: ['sim-chat'], ...json },
    });
    expect(r.status, r.text).toBe(201);
    return r.body as { id: number; name: string };
  };
  const expectBadField = (r: { status: number; body: any }, param: string) => {
    expect(r.status, JSON.stringify(r.body)).toBe(400);
    expect(r.body.error.param).toBe(param);
    expect(r.body.error.message).toContain(`'${param}'`);
  };
  const simChannel = async () => (await call('/api/channels')).body.data.find((c: any) => c.env_provider === 'SIM');

  it.skipIf(skip)(
    "keeps each model's latest test, passed or failed, for every later read and every process",
    async () => {
      const good = await create({ name: 'kept good', models: ['sim-chat', 'sim-embed-8'] });
      const bad = await create({ name: 'kept wrong key', key: 'sk-not-the-sim-key' });
      expect((await call(`/api/channels/${good.id}`)).body.last_tests).toEqual([]);

      const before = Date.now();
      const tested = await call(`/api/channels/${good.id}/test`, { method: 'POST' });
      expect(tested.status).toBe(200);
      expect(tested.body.data.map((r: any) => [r.model, r.ok])).toEqual([
        ['sim-chat', true],
        ['sim-embed-8', true],
      ]);
      const kept = (await call(`/api/channels/${good.id}`)).body.last_tests;
      expect(kept.map((r: any) => r.model)).toEqual(['sim-chat', 'sim-embed-8']);
      for (const [i, r] of kept.entries()) {
        expect(r).toMatchObject({ ok: true, status: 200, error: null, latency_ms: tested.body.data[i].latency_ms, tested_at: tested.body.data[i].tested_at });
        expect(r.tested_at).toBeGreaterThanOrEqual(before);
      }

      const failed = await call(`/api/channels/${bad.id}/test`, { method: 'POST', json: { model: 'sim-chat' } });
      expect(failed.body.data[0]).toMatchObject({ ok: false, status: 401 });
      expect(failed.body.data[0].error).toMatch(/^Incorrect API key provided/);
      const listed = (await call('/api/channels?limit=500')).body.data.find((c: any) => c.id === bad.id);
      expect(listed.last_tests).toEqual([
        {
          model: 'sim-chat',
          ok: false,
          status: 401,
          error: failed.body.data[0].error,
          latency_ms: failed.body.data[0].latency_ms,
          tested_at: failed.body.data[0].tested_at,
        },
      ]);
      expect(JSON.stringify(listed)).not.toContain('sk-not-the-sim-key');

      // A later test of one model replaces that model's result only.
      const again = await call(`/api/channels/${good.id}/test`, { method: 'POST', json: { model: 'sim-embed-8' } });
      const after = (await call(`/api/channels/${good.id}`)).body.last_tests;
      expect(after[0]).toEqual(kept[0]);
      expect(after[1].tested_at).toBe(again.body.data[0].tested_at);

      // A model the channel no longer serves is not shown; an edit without a key keeps the key.
      const edited = await call(`/api/channels/${good.id}`, { method: 'PATCH', json: { name: 'kept good, renamed', models: ['sim-chat'] } });
      expect(edited.body).toMatchObject({ name: 'kept good, renamed', key_set: true, models: ['sim-chat'] });
      expect(edited.body.last_tests.map((r: any) => r.model)).toEqual(['sim-chat']);
      expect((await call(`/api/channels/${good.id}/test`, { method: 'POST' })).body.data[0]).toMatchObject({ ok: true });

      // Another gateway process on the same store shows the same results.
      if (t.name !== 'pglite') {
        const other = await startTestGateway({ databaseUrl: t.url, models: MODELS, simInstance: gw.sim, sim: { key: SIM_KEY }, env: SHARED });
        try {
          const seen = (await (await other.api(`/api/channels/${bad.id}`)).json()) as any;
          expect(seen.last_tests).toEqual(listed.last_tests);
        } finally {
          await other.close();
        }
      }

      // Deleting a channel deletes its results.
      await call(`/api/channels/${bad.id}`, { method: 'DELETE' });
      expect(await new ChannelsStore(gw.gw.services.store.db).tests([bad.id])).toEqual([]);
      await call(`/api/channels/${good.id}`, { method: 'DELETE' });
    },
    60_000,
  );

  it.skipIf(skip)(
    'tests every enabled channel at once, a bounded number at a time, with a summary',
    async () => {
      const good = await create({ name: 'all good', models: ['sim-chat', 'sim-embed-8'] });
      const bad = await create({ name: 'all wrong key', key: 'sk-wrong-for-all' });
      const off = await create({ name: 'all disabled', status: 'disabled' });
      const sim = await simChannel();
      const { tester } = gw.gw.services.channels;
      const original = tester.testModel.bind(tester);
      let inFlight = 0;
      let most = 0;
      const spy = vi.spyOn(tester, 'testModel').mockImplementation(async (...args) => {
        most = Math.max(most, ++inFlight);
        try {
          return await original(...args);
        } finally {
          inFlight--;
        }
      });
      let r;
      try {
        r = await call('/api/channels/test-all', { method: 'POST', json: { concurrency: 2 } });
      } finally {
        spy.mockRestore();
      }
      expect(r.status).toBe(200);
      expect(most).toBe(2);
      const rows = r.body.data as any[];
      expect(rows.map((x) => `${x.channel_id}:${x.model}`)).toEqual([
        ...MODELS.map((m) => `${sim.id}:${m}`),
        `${good.id}:sim-chat`,
        `${good.id}:sim-embed-8`,
        `${bad.id}:sim-chat`,
      ]);
      expect(rows.some((x) => x.channel_id === off.id)).toBe(false);
      const by = (id: number, model: string) => rows.find((x) => x.channel_id === id && x.model === model);
      expect(by(good.id, 'sim-chat')).toMatchObject({ channel_name: 'all good', ok: true, status: 200 });
      expect(by(bad.id, 'sim-chat')).toMatchObject({ channel_name: 'all wrong key', ok: false, status: 401 });
      expect(by(bad.id, 'sim-chat').error).toMatch(/^Incorrect API key provided/);
      expect(by(sim.id, 'sim-503')).toMatchObject({ ok: false, status: 503, error: 'The server is overloaded or not ready yet.' });
      expect(r.body.summary).toMatchObject({ channels: 3, tested: 6, ok: 4, failed: 2 });
      expect(r.body.summary.finished_at).toBeGreaterThanOrEqual(r.body.summary.started_at);
      expect(r.body.skipped).toEqual([]);
      // Kept like any other test.
      expect((await call(`/api/channels/${bad.id}`)).body.last_tests[0]).toMatchObject({ ok: false, status: 401 });

      expectBadField(await call('/api/channels/test-all', { method: 'POST', json: { concurrency: 0 } }), 'concurrency');
      expectBadField(await call('/api/channels/test-all', { method: 'POST', json: { concurrency: 'many' } }), 'concurrency');
      expectBadField(await call('/api/channels/test-all', { method: 'POST', json: { everything: true } }), 'everything');
      for (const c of [good, bad, off]) await call(`/api/channels/${c.id}`, { method: 'DELETE' });
    },
    60_000,
  );

  it.skipIf(skip)(
    'lists channels in pages, with a search and a status filter, and every channel without paging',
    async () => {
      const made = [];
      for (let i = 1; i <= 5; i++)
        made.push(await create({ name: `Paged_${i}`, models: i === 5 ? ['sim-embed-8'] : ['sim-chat'], status: i === 4 ? 'disabled' : 'enabled' }));
      const page1 = await call('/api/channels?q=paged_&limit=2');
      expect(page1.body).toMatchObject({ total: 5, offset: 0, limit: 2 });
      expect(page1.body.data.map((c: any) => c.name)).toEqual(['Paged_1', 'Paged_2']);
      const page3 = await call('/api/channels?q=PAGED_&limit=2&offset=4');
      expect(page3.body.data.map((c: any) => c.name)).toEqual(['Paged_5']);
      // By model name, and LIKE's wildcards taken literally.
      expect((await call('/api/channels?q=sim-embed-8&limit=50')).body.data.map((c: any) => c.name).sort()).toEqual(['Paged_5', 'sim (from environment)']);
      expect((await call('/api/channels?q=%25&limit=50')).body.total).toBe(0);
      expect((await call('/api/channels?q=d_1&limit=50')).body.data.map((c: any) => c.name)).toEqual(['Paged_1']);
      expect((await call('/api/channels?q=d__&limit=50')).body.total).toBe(0);
      expect((await call('/api/channels?status=disabled&limit=50')).body.data.map((c: any) => c.name)).toEqual(['Paged_4']);
      expect((await call('/api/channels?status=enabled&q=paged&limit=50')).body.total).toBe(4);

      const all = await call('/api/channels');
      expect(all.body.data).toHaveLength(6);
      expect(all.body).toMatchObject({ total: 6, offset: 0, limit: 6 });

      expectBadField(await call('/api/channels?limit=0'), 'limit');
      expectBadField(await call('/api/channels?limit=501'), 'limit');
      expectBadField(await call('/api/channels?offset=-1'), 'offset');
      expectBadField(await call('/api/channels?status=on'), 'status');
      for (const c of made) await call(`/api/channels/${c.id}`, { method: 'DELETE' });
    },
    60_000,
  );

  it.skipIf(skip)(
    'says why a model was auto-disabled (the failures that did it) and when it is tested again',
    async () => {
      const { health } = gw.gw.services;
      const sim = await simChannel();
      const first = Date.now();
      for (const error of ['first failure', 'second failure', 'The server is overloaded or not ready yet.'])
        await health.recordFailure(sim.id, 'sim-503', error);
      const channel = (await call(`/api/channels/${sim.id}`)).body;
      expect(channel.disabled_models).toHaveLength(1);
      const d = channel.disabled_models[0];
      expect(d.reason).toBe('auto-disabled after 3 failures in 60 s; last error: The server is overloaded or not ready yet.');
      expect(d.failures.map((f: any) => f.error)).toEqual(['first failure', 'second failure', 'The server is overloaded or not ready yet.']);
      expect(d.failures[0].at).toBeGreaterThanOrEqual(first);
      expect(d.failures[2].at).toBe(d.disabled_at);
      // The loop ticks every RETEST_MS from the gateway's start: the next tick is within one interval.
      expect(d.retest_at).toBeGreaterThan(Date.now());
      expect(d.retest_at).toBeLessThanOrEqual(Date.now() + RETEST_MS);
      // In the store, for every process.
      const stored = (await new ChannelsStore(gw.gw.services.store.db).disabledModels()).find((x) => x.channel_id === sim.id);
      expect(JSON.parse(stored!.failures!)).toEqual(d.failures);
      expect((await call('/api/channels?status=auto_disabled&limit=50')).body.data.map((c: any) => c.id)).toEqual([sim.id]);

      // A re-test keeps its result too: the page shows what the last one said.
      await call('/api/channels/retest-disabled', { method: 'POST' });
      const after = (await call(`/api/channels/${sim.id}`)).body;
      expect(after.disabled_models.map((x: any) => x.model)).toEqual(['sim-503']);
      expect(after.last_tests.find((x: any) => x.model === 'sim-503')).toMatchObject({ ok: false, status: 503 });
      await call(`/api/channels/${sim.id}/enable-models`, { method: 'POST' });
    },
    60_000,
  );

  it.skipIf(skip || t.name !== 'pglite')(
    'has no re-test time when the re-test loop is off',
    async () => {
      const off = await startTestGateway({
        models: ['sim-503'],
        simInstance: gw.sim,
        sim: { key: SIM_KEY },
        config: { retestIntervalMs: 0, disableThreshold: 1 },
      });
      try {
        const sim = ((await (await off.api('/api/channels')).json()) as any).data[0];
        await off.gw.services.health.recordFailure(sim.id, 'sim-503', 'down');
        const d = ((await (await off.api(`/api/channels/${sim.id}`)).json()) as any).disabled_models[0];
        expect(d).toMatchObject({ model: 'sim-503', retest_at: null, failures: [{ error: 'down' }] });
      } finally {
        await off.close();
      }
    },
    60_000,
  );

  it.skipIf(skip)('offers the provider types and the presets of <PROVIDER>_API_KEY', async () => {
    const r = await call('/api/channels/providers');
    expect(r.status).toBe(200);
    expect(r.body.types.map((x: any) => x.type)).toEqual(['openai', 'azure', 'ollama', 'anthropic', 'gemini']);
    expect(r.body.types.find((x: any) => x.type === 'azure')).toMatchObject({ label: 'Azure OpenAI', default_base_url: null, key_required: true });
    expect(r.body.presets.find((p: any) => p.env === 'DEEPSEEK')).toMatchObject({ type: 'openai', base_url: 'https://api.deepseek.com/v1' });
  });
});
