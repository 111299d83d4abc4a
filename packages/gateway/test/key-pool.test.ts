// Key pools over HTTP on a real gateway in front of the upstream simulator: a
// channel whose key holds several keys (one a line) spreads requests over
// them; a key the upstream refuses (401) or finds out of quota (429
// insufficient_quota) is disabled alone, with its reason, while every request
// still succeeds on another key; an ordinary rate limit disables nothing; a
// channel whose every key is disabled is no longer picked; the re-test and an
// administrator enable a key again. The API shows keys by their hints only.
import { startUpstreamSim, type UpstreamSim } from '@kbchat/upstream-sim';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KeyBox } from '../src/channels/key-box.js';
import { ChannelRegistry } from '../src/channels/registry.js';
import { ChannelsStore } from '../src/channels/store.js';
import { readSse, startTestGateway, type TestGateway } from './helpers.js';

const GOOD = 'sk-pool-good-key-0001-aaaaaaaa';
const GOOD2 = 'sk-pool-good-key-0002-bbbbbbbb';
const WRONG = 'sk-pool-wrong-key-0003-cccccccc';
const SPENT = 'sk-pool-spent-key-0004-dddddddd';

describe('key pools', () => {
  let t: TestGateway;
  /** Takes every key (for the re-test once a key is good again), and one that rate-limits everything. */
  let open: UpstreamSim;
  let limited: UpstreamSim;
  beforeAll(async () => {
    t = await startTestGateway({ models: ['sim-chat'], sim: { key: GOOD, keys: [GOOD2], exhaustedKeys: [SPENT] } });
    open = await startUpstreamSim({ port: 0 });
    limited = await startUpstreamSim({ port: 0, rpm: 1 });
  });
  afterAll(async () => {
    await t?.close();
    await open?.close();
    await limited?.close();
  });

  async function call(path: string, init: { method?: string; json?: unknown } = {}) {
    const res = await t.api(path, init);
    const text = await res.text();
    return { status: res.status, text, body: text ? JSON.parse(text) : undefined };
  }
  const chat = (model: string, content = 'hello there') =>
    call('/v1/chat/completions', { method: 'POST', json: { model, messages: [{ role: 'user', content }] } });
  const pool = async (name: string, keys: string[], extra: Record<string, unknown> = {}) => {
    const r = await call('/api/channels', {
      method: 'POST',
      json: { name, type: 'openai', base_url: `${t.sim.url}/v1`, key: keys.join('\n'), models: [name], model_mapping: { [name]: 'sim-chat' }, ...extra },
    });
    expect(r.status, r.text).toBe(201);
    return r.body;
  };
  const keysOf = async (id: number) => (await call(`/api/channels/${id}`)).body.keys;

  it('spreads requests over the keys in turn; a wrong key is disabled alone, with its reason, and every request succeeds', async () => {
    const ch = await pool('pool-one-wrong', [GOOD, WRONG, GOOD2]);
    expect(ch.keys).toEqual([
      { index: 0, hint: 'sk-...aaaa', status: 'enabled', reason: null, disabled_at: null, retest_at: null },
      { index: 1, hint: 'sk-...cccc', status: 'enabled', reason: null, disabled_at: null, retest_at: null },
      { index: 2, hint: 'sk-...bbbb', status: 'enabled', reason: null, disabled_at: null, retest_at: null },
    ]);
    // In turn: the wrong key is the second, so it is met (and disabled) within the first three requests.
    for (let i = 0; i < 3; i++) {
      const r = await chat('pool-one-wrong', `question ${i}`);
      expect(r.status, r.text).toBe(200);
      expect(r.body.choices[0].message.content).toMatch(new RegExp(`^Echo: question ${i}`));
    }
    const keys = await keysOf(ch.id);
    expect(keys.map((k: { status: string }) => k.status)).toEqual(['enabled', 'disabled', 'enabled']);
    expect(keys[1].reason).toMatch(/^401: Incorrect API key provided/);
    expect(keys[1].disabled_at).toBeGreaterThan(Date.now() - 60_000);

    const burst = await Promise.all(Array.from({ length: 12 }, (_, i) => chat('pool-one-wrong', `burst ${i}`)));
    expect(burst.map((r) => r.status)).toEqual(Array(12).fill(200));
    const streamed = await t.api('/v1/chat/completions', {
      method: 'POST',
      json: { model: 'pool-one-wrong', stream: true, messages: [{ role: 'user', content: 'streamed' }] },
    });
    expect(streamed.status).toBe(200);
    expect((await readSse(streamed)).done).toBe(true);

    // Never a key whole, in the channel or in the list.
    const listed = await call('/api/channels');
    for (const k of [GOOD, GOOD2, WRONG]) expect(listed.text).not.toContain(k);
    // Another process on the store sees the disabled key at its load.
    const other = new ChannelRegistry(new ChannelsStore(t.gw.services.store.db), KeyBox.fromConfig(undefined, t.dataDir));
    await other.load();
    expect(other.get(ch.id)!.pool!.keys.map((k) => k.disabled !== undefined)).toEqual([false, true, false]);
  });

  it('disables a key out of quota (429 insufficient_quota), never one that is only rate-limited', async () => {
    const ch = await pool('pool-spent', [SPENT, GOOD]);
    for (let i = 0; i < 4; i++) expect((await chat('pool-spent')).status).toBe(200);
    const keys = await keysOf(ch.id);
    expect(keys.map((k: { status: string }) => k.status)).toEqual(['disabled', 'enabled']);
    expect(keys[0].reason).toMatch(/^429: You exceeded your current quota/);

    const rated = await call('/api/channels', {
      method: 'POST',
      json: {
        name: 'pool-rated',
        type: 'openai',
        base_url: `${limited.url}/v1`,
        key: `${GOOD}\n${GOOD2}`,
        models: ['pool-rated'],
        model_mapping: { 'pool-rated': 'sim-chat' },
      },
    });
    const statuses = [];
    for (let i = 0; i < 3; i++) statuses.push((await chat('pool-rated')).status);
    expect(statuses).toContain(429);
    expect((await keysOf(rated.body.id)).map((k: { status: string }) => k.status)).toEqual(['enabled', 'enabled']);
  });

  it('takes the keys at random when the channel says so', async () => {
    const bad = await call('/api/channels', { method: 'POST', json: { type: 'openai', key: GOOD, models: ['x'], options: { keyStrategy: 'sometimes' } } });
    expect(bad.status, bad.text).toBe(400);
    expect(bad.text).toContain('keyStrategy');
    const ch = await pool('pool-random', [GOOD, WRONG, GOOD2], { options: { keyStrategy: 'random' } });
    expect(ch.options.keyStrategy).toBe('random');
    // Random: the wrong key is met within a few dozen requests (the odds of missing it are 2^-30 and less).
    const answers = [];
    for (let i = 0; i < 30 && (await keysOf(ch.id))[1].status === 'enabled'; i++) answers.push(await chat('pool-random'));
    expect(answers.every((r) => r.status === 200)).toBe(true);
    expect((await keysOf(ch.id)).map((k: { status: string }) => k.status)).toEqual(['enabled', 'disabled', 'enabled']);
  });

  it('fails the channel only when every key has; the re-test and an administrator enable keys again', async () => {
    const ch = await pool('pool-all-wrong', [WRONG, SPENT]);
    const first = await chat('pool-all-wrong');
    expect(first.status, first.text).toBe(429); // the last key's own answer (the wrong one was disabled before it)
    expect((await keysOf(ch.id)).map((k: { status: string }) => k.status)).toEqual(['disabled', 'disabled']);
    // No key left: the channel is not picked, and the model is not served.
    expect((await chat('pool-all-wrong')).status).toBe(503);
    expect((await call('/v1/models')).body.data.map((m: { id: string }) => m.id)).not.toContain('pool-all-wrong');

    // The upstream takes them again (another address): the re-test enables both.
    expect((await call(`/api/channels/${ch.id}`, { method: 'PATCH', json: { base_url: `${open.url}/v1` } })).status).toBe(200);
    const retest = await call('/api/channels/retest-disabled', { method: 'POST' });
    expect(retest.status, retest.text).toBe(200);
    const mine = retest.body.data.filter((r: { channel_id: number }) => r.channel_id === ch.id);
    expect(mine).toEqual([
      { channel_id: ch.id, model: 'pool-all-wrong', enabled: true, key: 'sk-...cccc' },
      { channel_id: ch.id, model: 'pool-all-wrong', enabled: true, key: 'sk-...dddd' },
    ]);
    expect((await chat('pool-all-wrong')).status).toBe(200);

    // Back on the strict upstream: disabled again; an administrator enables one by hand.
    await call(`/api/channels/${ch.id}`, { method: 'PATCH', json: { base_url: `${t.sim.url}/v1` } });
    // The last key's own answer, whichever it was this time round.
    expect([401, 429]).toContain((await chat('pool-all-wrong')).status);
    const enabled = await call(`/api/channels/${ch.id}/keys/1/enable`, { method: 'POST' });
    expect(enabled.status, enabled.text).toBe(200);
    expect(enabled.body).toMatchObject({ channel_id: ch.id, index: 1, enabled: true });
    expect(enabled.body.channel.keys.map((k: { status: string }) => k.status)).toEqual(['disabled', 'enabled']);
    expect((await call(`/api/channels/${ch.id}/keys/1/enable`, { method: 'POST' })).body.enabled).toBe(false);
    expect((await call(`/api/channels/${ch.id}/keys/2/enable`, { method: 'POST' })).status).toBe(404);
    const badIndex = await call(`/api/channels/${ch.id}/keys/x/enable`, { method: 'POST' });
    expect(badIndex.status).toBe(400);
    expect(badIndex.body.error.param).toBe('index');
    expect((await call('/api/channels/999999/keys/0/enable', { method: 'POST' })).status).toBe(404);
  });

  it('a key replaced forgets its state; a key kept keeps it; one key is no pool', async () => {
    const ch = await pool('pool-edited', [GOOD, WRONG]);
    for (let i = 0; i < 2; i++) expect((await chat('pool-edited')).status).toBe(200);
    expect((await keysOf(ch.id))[1].status).toBe('disabled');
    const kept = await call(`/api/channels/${ch.id}`, { method: 'PATCH', json: { key: `${WRONG}\n${GOOD2}` } });
    expect(kept.body.keys.map((k: { hint: string; status: string }) => `${k.hint} ${k.status}`)).toEqual(['sk-...cccc disabled', 'sk-...bbbb enabled']);
    const one = await call(`/api/channels/${ch.id}`, { method: 'PATCH', json: { key: GOOD } });
    expect(one.body.keys).toEqual([{ index: 0, hint: 'sk-...aaaa', status: 'enabled', reason: null, disabled_at: null, retest_at: null }]);
    expect(await new ChannelsStore(t.gw.services.store.db).disabledKeys().then((l) => l.filter((d) => d.channel_id === ch.id))).toEqual([]);
  });

  it('disables a wrong key of a Gemini pool (its 400 API_KEY_INVALID)', async () => {
    const r = await call('/api/channels', {
      method: 'POST',
      json: { name: 'gemini pool', type: 'gemini', base_url: t.sim.url, key: `${WRONG}\n${GOOD}`, models: ['gemini-sim'] },
    });
    expect(r.status, r.text).toBe(201);
    for (let i = 0; i < 2; i++) expect((await chat('gemini-sim')).status).toBe(200);
    const keys = await keysOf(r.body.id);
    expect(keys.map((k: { status: string }) => k.status)).toEqual(['disabled', 'enabled']);
    expect(keys[0].reason).toMatch(/^401: Incorrect API key provided: API key not valid/);
  });
});
