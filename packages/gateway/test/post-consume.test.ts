// Post-consume through the relay: a request that names no max_tokens reserves
// RESERVE_OUTPUT_TOKENS, but the simulator answers with ~3,900 output tokens.
// Every cost the logs record is taken from the balance: the balance goes below
// zero by at most the overrun of the requests in flight, then requests are
// refused until it is topped up, and the admin API shows the negative balance.
// (Before, the settle clamped the balance at 0: 0.1 units bought 0.35.)
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestGateway, type TestGateway } from './helpers.js';
import { books } from './ledger-support.js';

let t: TestGateway;

beforeAll(async () => {
  // 3,000 words of answer: 3,900 tokens in the simulator's count, against 1,024 reserved.
  t = await startTestGateway({
    sim: { tokens: 3000, slowMs: 500 },
    env: { DEFAULT_INPUT_PRICE: '2', DEFAULT_OUTPUT_PRICE: '8', RESERVE_OUTPUT_TOKENS: '1024' },
  });
});

afterAll(async () => {
  await t?.close();
});

async function userWithToken(name: string, balance: number): Promise<{ id: number; key: string }> {
  const user = await (await t.api('/api/users', { method: 'POST', json: { username: name, password: 'post-consume-pw', balance } })).json();
  const token = await (await t.api('/api/tokens', { method: 'POST', json: { user_id: user.id, name } })).json();
  return { id: user.id, key: token.key };
}

/** sim-slow answers after 500 ms, so that requests sent together are all in flight at once. */
const ask = (key: string, model = 'sim-chat') =>
  t.api('/v1/chat/completions', { method: 'POST', token: key, json: { model, messages: [{ role: 'user', content: 'tell me everything' }] } });

describe('usage beyond the reservation', () => {
  it('is charged in full: concurrent long answers take the balance below zero, then requests are refused', async () => {
    const { id, key } = await userWithToken('post-consume-burst', 0.1);
    const answers = await Promise.all(Array.from({ length: 10 }, () => ask(key, 'sim-slow')));
    const bodies = await Promise.all(answers.map((r) => r.json()));
    expect(
      answers.map((r) => r.status),
      JSON.stringify(bodies.find((x) => x.error)),
    ).toEqual(Array(10).fill(200));
    for (const b of bodies) expect(b.usage.completion_tokens).toBe(3900);
    await t.gw.services.ledger.flush();

    const b = await books(t.gw.services.store, id);
    const logged = bodies.reduce((n, x) => n + x.usage.prompt_tokens * 2 + x.usage.completion_tokens * 8, 0);
    // Every logged cost is taken: initial = balance + leases + logged costs, exactly.
    expect(b).toEqual({ balance: 100_000 - logged, leased: 0, logged, rows: 10 });
    expect(logged).toBeGreaterThan(3 * 100_000);
    // Below zero by no more than the overrun of those ten requests (each reserved its input and 1,024 out).
    const reserved = bodies.reduce((n, x) => n + x.usage.prompt_tokens * 2 + 1024 * 8, 0);
    expect(b.balance).toBeGreaterThanOrEqual(100_000 - reserved - (logged - reserved));
    expect(b.balance).toBeLessThan(0);

    const refused = await ask(key);
    expect(refused.status).toBe(403);
    expect((await refused.json()).error.code).toBe('insufficient_user_quota');
    const shown = await (await t.api(`/api/users/${id}`)).json();
    expect(shown.balance_micros).toBe(100_000 - logged);
    expect(shown.balance).toBeLessThan(0);

    // A top-up pays the debt first; then the user can spend again.
    const topped = await (await t.api(`/api/users/${id}`, { method: 'PATCH', json: { balance_delta: 1 } })).json();
    expect(topped.balance_micros).toBe(1_100_000 - logged);
    expect((await ask(key)).status).toBe(200);
  });

  it('one at a time, the user is served until the balance cannot cover the next reservation, and pays for each answer in full', async () => {
    const { id, key } = await userWithToken('post-consume-serial', 0.1);
    let served = 0;
    for (;;) {
      const r = await ask(key);
      if (r.status !== 200) {
        expect((await r.json()).error.code).toBe('insufficient_user_quota');
        break;
      }
      await r.json();
      served++;
      expect(served).toBeLessThan(10);
    }
    await t.gw.services.ledger.flush();
    const b = await books(t.gw.services.store, id);
    expect(b.rows).toBe(served); // a refused request costs nothing and writes no row
    const costs = await sql<{ n: number }>`select coalesce(sum(cost), 0) as n from logs where user_id = ${id}`.execute(t.gw.services.store.db);
    expect(b.balance + Number(costs.rows[0]!.n)).toBe(100_000);
    expect(b.balance).toBeGreaterThanOrEqual(0);
  });
});
