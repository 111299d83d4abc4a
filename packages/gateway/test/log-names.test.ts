// GET /api/logs and /api/logs/:requestId name each row's user, token and
// channel beside their ids (the console shows names), looked up once per page
// for the page's distinct ids, on every store; a deleted one reads null.
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { startTestGateway, type TestGateway } from './helpers.js';
import { STORE_NAMES, testStore, type TestStore } from './stores.js';

const stores: TestStore[] = await Promise.all(STORE_NAMES.map((n) => testStore(n)));
afterAll(async () => {
  await Promise.all(stores.map((s) => s.drop()));
});

describe.each(stores)('log rows name their user, token and channel: $name', (s) => {
  const skip = Boolean(s.skipReason);
  let t: TestGateway;

  async function call(path: string, init: { method?: string; json?: unknown } = {}) {
    const res = await t.api(path, init);
    return { status: res.status, body: (await res.json()) as any };
  }

  async function chat(key: string, model: string): Promise<string> {
    const res = await t.api('/v1/chat/completions', { method: 'POST', json: { model, messages: [{ role: 'user', content: 'name me' }] }, token: key });
    await res.text();
    return res.headers.get('x-request-id')!;
  }

  beforeAll(async () => {
    if (!skip) t = await startTestGateway({ databaseUrl: s.url, models: ['sim-chat', 'sim-400'] });
  });
  afterAll(async () => {
    await t?.close();
  });

  it.skipIf(skip)('one lookup per kind for a page, the names of what the rows refer to, null once deleted', async () => {
    const user = (await call('/api/users', { method: 'POST', json: { username: 'names.ann', password: 'names-password', balance: 10 } })).body;
    const first = (await call('/api/tokens', { method: 'POST', json: { user_id: user.id, name: 'ann laptop' } })).body;
    const second = (await call('/api/tokens', { method: 'POST', json: { user_id: user.id, name: 'ann phone' } })).body;
    const channel = (
      await call('/api/channels', {
        method: 'POST',
        json: {
          name: 'sim mirror',
          type: 'openai',
          base_url: `${t.sim.url}/v1`,
          key: 'sk-sim-upstream-key',
          models: ['mirror-chat'],
          model_mapping: { 'mirror-chat': 'sim-chat' },
        },
      })
    ).body;
    const ids = [await chat(first.key, 'sim-chat'), await chat(first.key, 'sim-400'), await chat(second.key, 'mirror-chat'), await chat(second.key, 'sim-400')];

    const lookup = vi.spyOn(t.gw.services.logsStore, 'namesOf');
    const page = await call(`/api/logs?user_id=${user.id}`);
    expect(page.status).toBe(200);
    expect(lookup).toHaveBeenCalledTimes(1);
    // Distinct ids only: four rows, one user, two tokens, two channels.
    const asked = lookup.mock.calls[0]![0];
    expect(asked.users).toEqual([user.id]);
    expect([...asked.tokens].sort()).toEqual([first.token.id, second.token.id].sort());
    expect(asked.channels).toHaveLength(2);
    lookup.mockRestore();

    const rows = page.body.data as any[];
    expect(rows.map((r) => r.request_id).sort()).toEqual([...ids].sort());
    const envChannel = (await call('/api/channels')).body.data.find((c: any) => c.id !== channel.id);
    for (const r of rows) {
      expect(r.user_name).toBe('names.ann');
      expect(r.token_name).toBe(r.token_id === first.token.id ? 'ann laptop' : 'ann phone');
      expect(r.channel_name).toBe(r.model === 'mirror-chat' ? 'sim mirror' : envChannel.name);
      expect(r.channel_id).toBe(r.model === 'mirror-chat' ? channel.id : envChannel.id);
    }

    const detail = await call(`/api/logs/${ids[1]}`);
    expect(detail.body).toMatchObject({ user_name: 'names.ann', token_name: 'ann laptop', replayable: true });

    // Renamed: the row shows the name now. Deleted: null, the id stays.
    await call(`/api/tokens/${first.token.id}`, { method: 'PATCH', json: { name: 'ann old laptop' } });
    await call(`/api/tokens/${second.token.id}`, { method: 'DELETE' });
    const after = (await call(`/api/logs?user_id=${user.id}`)).body.data as any[];
    for (const r of after) {
      if (r.token_id === first.token.id) expect(r.token_name).toBe('ann old laptop');
      else expect(r).toMatchObject({ token_id: second.token.id, token_name: null });
    }
    expect((await call(`/api/logs/${ids[2]}`)).body).toMatchObject({ token_id: second.token.id, token_name: null, user_name: 'names.ann' });

    // An empty page looks nothing up.
    const empty = await call('/api/logs?request_id=no-such-request');
    expect(empty.body).toMatchObject({ data: [], total: 0 });
  });
});
