// Budgets that reset, over HTTP on a real gateway in front of the upstream
// simulator: a token's daily budget refuses the request that would pass it
// (429 insufficient_quota, naming the budget and when it resets), settles to
// what was really charged, and a user's budget binds all of its tokens. On
// PostgreSQL, a period's window that is gone from the counters (Redis
// emptied, a restart) starts again from the ledger's rows, not from zero.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { periodBounds } from '../src/limits/budgets.js';
import { MemoryCounters } from '../src/limits/counters.js';
import { startTestGateway, type TestGateway } from './helpers.js';
import { testStore, type TestStore } from './stores.js';

async function call(t: TestGateway, path: string, init: { method?: string; json?: unknown; token?: string } = {}) {
  const res = await t.api(path, init);
  const text = await res.text();
  return { status: res.status, text, headers: res.headers, body: text ? JSON.parse(text) : undefined };
}

const chat = (t: TestGateway, token: string) =>
  call(t, '/v1/chat/completions', { method: 'POST', token, json: { model: 'sim-chat', max_tokens: 10, messages: [{ role: 'user', content: 'hi' }] } });

async function newToken(t: TestGateway, name: string, userId?: number): Promise<{ id: number; key: string }> {
  const owner = userId ?? (await call(t, '/api/auth/me')).body.user.id;
  const made = await call(t, '/api/tokens', { method: 'POST', json: { user_id: owner, name } });
  expect(made.status, made.text).toBe(201);
  return { id: made.body.token.id, key: made.body.key };
}

/** Requests until the first refusal (at most 50): how many were answered, and the refusal. */
async function spendUntilRefused(t: TestGateway, key: string) {
  let answered = 0;
  for (let i = 0; i < 50; i++) {
    const r = await chat(t, key);
    if (r.status !== 200) return { answered, refusal: r };
    answered++;
  }
  throw new Error('never refused');
}

describe('periods', () => {
  it('are UTC days, weeks from Monday and calendar months', () => {
    const at = Date.UTC(2026, 10, 29, 15, 30); // a Sunday
    expect(periodBounds('day', at)).toEqual({ start: Date.UTC(2026, 10, 29), end: Date.UTC(2026, 10, 30) });
    expect(periodBounds('week', at)).toEqual({ start: Date.UTC(2026, 10, 23), end: Date.UTC(2026, 10, 30) });
    expect(periodBounds('week', Date.UTC(2026, 10, 23))).toEqual({ start: Date.UTC(2026, 10, 23), end: Date.UTC(2026, 10, 30) });
    expect(periodBounds('month', at)).toEqual({ start: Date.UTC(2026, 10, 1), end: Date.UTC(2026, 11, 1) });
    expect(periodBounds('month', Date.UTC(2026, 11, 31, 23, 59))).toEqual({ start: Date.UTC(2026, 11, 1), end: Date.UTC(2027, 0, 1) });
  });
});

describe('windows counted in memory', () => {
  it('keeps a month-long window (longer than a Node timer can wait), and gives nothing back to one that ended', async () => {
    const counters = new MemoryCounters();
    const month = 31 * 86_400_000;
    const now = Date.now();
    expect(await counters.add('budget', 5, month, now)).toEqual({ points: 5, msLeft: month });
    await new Promise((r) => setTimeout(r, 5));
    expect((await counters.add('budget', 3, month)).points).toBe(8);
    // A minute's window, given back after it ended: the next one starts clean, not below zero.
    await counters.add('rpm', 1, 60_000, now);
    expect(await counters.add('rpm', -1, 60_000, now + 61_000)).toEqual({ points: 0, msLeft: 60_000 });
    expect((await counters.add('rpm', 1, 60_000, now + 61_000)).points).toBe(1);
  });
});

describe('budgets on one gateway', () => {
  let t: TestGateway;
  beforeAll(async () => {
    t = await startTestGateway({ models: ['sim-chat'] });
    // 1,000 micro-units a token both ways: a request costs some 10,000 to 30,000.
    expect((await call(t, '/api/prices/sim-chat', { method: 'PUT', json: { input_price: 1000, output_price: 1000 } })).status).toBe(200);
  });
  afterAll(async () => {
    await t?.close();
  });

  it("refuses past a token's daily budget, saying which and when it resets, and settles to what was charged", async () => {
    const tok = await newToken(t, 'daily');
    const set = await call(t, `/api/rate-limits/token/${tok.id}`, { method: 'PUT', json: { budget: { amount: 0.2, period: 'day' } } });
    expect(set.status, set.text).toBe(200);
    expect(set.body).toMatchObject({ scope: 'token', budget: { amount: 0.2, period: 'day' }, rpm: null });

    const { answered, refusal } = await spendUntilRefused(t, tok.key);
    expect(refusal.status).toBe(429);
    expect(refusal.body.error).toMatchObject({ type: 'insufficient_quota', code: 'budget_exceeded' });
    const reset = new Date(periodBounds('day', Date.now()).end).toISOString();
    expect(refusal.body.error.message).toContain(`Budget reached for token "daily": 0.2 per day`);
    expect(refusal.body.error.message).toContain(`it resets at ${reset}`);
    const retryAfter = Number(refusal.headers.get('retry-after'));
    expect(Math.abs(retryAfter - (Date.parse(reset) - Date.now()) / 1000)).toBeLessThan(5);

    // Settled to the charges: what was answered cost at most the budget, and more than a reservation each would allow.
    await new Promise((r) => setTimeout(r, 300));
    const logs = await call(t, `/api/logs?token_id=${tok.id}&limit=100`);
    expect(logs.status, logs.text).toBe(200);
    const charged = logs.body.data.filter((l: { status: number }) => l.status === 200);
    expect(charged).toHaveLength(answered);
    const spent = charged.reduce((n: number, l: { cost_micros: number }) => n + l.cost_micros, 0);
    expect(spent).toBeLessThanOrEqual(200_000);
    const perRequest = spent / answered;
    // The refused one was refused because its reservation did not fit, not because the spend was counted at reservations.
    expect(200_000 - spent).toBeLessThan(perRequest * 10);
    expect(answered).toBeGreaterThanOrEqual(3);

    // Raising the budget lets it spend again.
    expect((await call(t, `/api/rate-limits/token/${tok.id}`, { method: 'PUT', json: { budget: { amount: 1, period: 'day' } } })).status).toBe(200);
    expect((await chat(t, tok.key)).status).toBe(200);
  });

  it("binds every token of a user to the user's budget", async () => {
    const me = (await call(t, '/api/auth/me')).body.user;
    const user = await call(t, '/api/users', { method: 'POST', json: { username: 'budgeted', password: 'budgeted-password-1' } });
    expect(user.status, user.text).toBe(201);
    expect((await call(t, `/api/users/${user.body.id}`, { method: 'PATCH', json: { balance: 10 } })).status).toBe(200);
    const a = await newToken(t, 'first', user.body.id);
    const b = await newToken(t, 'second', user.body.id);
    expect((await call(t, `/api/rate-limits/user/${user.body.id}`, { method: 'PUT', json: { budget: { amount: 0.1, period: 'week' } } })).status).toBe(200);
    const first = await spendUntilRefused(t, a.key);
    expect(first.refusal.body.error.message).toContain('Budget reached for user "budgeted": 0.1 per week');
    const second = await chat(t, b.key);
    expect(second.status).toBe(429);
    expect(second.body.error.code).toBe('budget_exceeded');
    // Another user's tokens are not bound by it.
    expect((await chat(t, (await newToken(t, 'mine', me.id)).key)).status).toBe(200);
  });

  it('names a bad field', async () => {
    const tok = await newToken(t, 'bad input');
    const bad = async (path: string, json: unknown, field: string) => {
      const r = await call(t, path, { method: 'PUT', json });
      expect(r.status, r.text).toBe(400);
      expect(r.body.error.param).toBe(field);
    };
    await bad(`/api/rate-limits/token/${tok.id}`, { budget: { amount: 0, period: 'day' } }, 'budget.amount');
    await bad(`/api/rate-limits/token/${tok.id}`, { budget: { amount: 1, period: 'year' } }, 'budget.period');
    await bad(`/api/rate-limits/token/${tok.id}`, { budget: { amount: 1 } }, 'budget.period');
    await bad('/api/rate-limits/model/sim-chat', { budget: { amount: 1, period: 'day' } }, 'budget');
  });
});

describe('budgets on PostgreSQL, counted on the database', () => {
  let store: TestStore;
  let t: TestGateway | undefined;
  beforeAll(async () => {
    store = await testStore('postgres');
    if (store.skipReason) return;
    t = await startTestGateway({ databaseUrl: store.url, models: ['sim-chat'] });
    expect((await call(t, '/api/prices/sim-chat', { method: 'PUT', json: { input_price: 1000, output_price: 1000 } })).status).toBe(200);
  });
  afterAll(async () => {
    await t?.close();
    await store?.drop();
  });

  it("starts a period's lost window from the ledger's rows, not from zero", async (ctx) => {
    if (!t) return ctx.skip();
    const tok = await newToken(t, 'monthly');
    expect((await call(t, `/api/rate-limits/token/${tok.id}`, { method: 'PUT', json: { budget: { amount: 0.2, period: 'month' } } })).status).toBe(200);
    const { answered } = await spendUntilRefused(t, tok.key);
    expect(answered).toBeGreaterThanOrEqual(3);
    // The counters are lost (as when Redis is emptied); the ledger's rows stay.
    await new Promise((r) => setTimeout(r, 300));
    await t.gw.services.store.db.deleteFrom('rate_counters').execute();
    const after = await chat(t, tok.key);
    expect(after.status, after.text).toBe(429);
    expect(after.body.error.code).toBe('budget_exceeded');
  });
});
