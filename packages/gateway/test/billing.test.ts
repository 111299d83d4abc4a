// Billing on every store: BalanceLedger reservations never overdraw a balance
// (also with two ledgers on one database, as two gateway processes would
// have), settlements refund exactly and in batches, token limits refuse and
// refund; PriceBook's integer cost math and price rows.
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { BalanceLedger, type Reservation } from '../src/accounts/ledger.js';
import { costMicros, MICROS, PriceBook, ratioToPrice, unitsToMicros } from '../src/accounts/pricing.js';
import { PricesStore } from '../src/accounts/prices-store.js';
import { AccountsStore } from '../src/accounts/store.js';
import { openStore, type Store } from '../src/store/db.js';
import { STORE_NAMES, testStore, type TestStore } from './stores.js';

const stores: TestStore[] = await Promise.all(STORE_NAMES.map((n) => testStore(n)));

afterAll(async () => {
  await Promise.all(stores.map((s) => s.drop()));
});

let userSeq = 0;

describe('PriceBook cost math', () => {
  it('charges integer micro-units, rounded up, never for nothing', () => {
    // 2 units per 1M input tokens, 8 per 1M output tokens.
    const price = { inputPrice: 2 * MICROS, outputPrice: 8 * MICROS };
    expect(costMicros(price, 1, 0)).toBe(2);
    expect(costMicros(price, 1000, 500)).toBe(2000 + 4000);
    expect(costMicros(price, 0, 0)).toBe(0);
    // Fractions of a micro-unit round up, by less than one micro-unit in all.
    const cheap = { inputPrice: 150_000, outputPrice: 600_000 }; // 0.15 / 0.6 units per 1M
    expect(costMicros(cheap, 1, 0)).toBe(1);
    expect(costMicros(cheap, 10, 0)).toBe(2); // 1.5 -> 2
    expect(costMicros(cheap, 20, 0)).toBe(3);
    expect(costMicros(cheap, 3, 1)).toBe(2); // 0.45 + 0.6 = 1.05 -> 2
    expect(costMicros(cheap, 1_000_000, 1_000_000)).toBe(750_000);
    expect(costMicros({ inputPrice: 0, outputPrice: 0 }, 123, 456)).toBe(0);
    expect(Number.isInteger(costMicros({ inputPrice: 333_333, outputPrice: 777_777 }, 7, 11))).toBe(true);
  });

  it('converts one-api ratios: ratio 1 is 2 units per 1M input tokens', () => {
    expect(ratioToPrice(1)).toEqual({ input: 2, output: 2 });
    expect(ratioToPrice(15, 2)).toEqual({ input: 30, output: 60 });
    expect(ratioToPrice(0.5, 4)).toEqual({ input: 1, output: 4 });
    const r = ratioToPrice(0.075, 4); // gpt-4o-mini style: 0.15 in, 0.6 out
    expect(unitsToMicros(r.input)).toBe(150_000);
    expect(unitsToMicros(r.output)).toBe(600_000);
    expect(unitsToMicros(0.1 * 3)).toBe(300_000); // float noise rounds away
    const price = { inputPrice: unitsToMicros(ratioToPrice(1).input), outputPrice: unitsToMicros(ratioToPrice(1).output) };
    expect(costMicros(price, 1_000_000, 0)).toBe(2 * MICROS);
  });
});

describe.each(stores)('billing: $name', (t) => {
  const skip = Boolean(t.skipReason);
  if (skip) console.warn(`[skip] billing tests on ${t.name}: ${t.skipReason}`);

  let store: Store;
  let accounts: AccountsStore;
  let ledger: BalanceLedger;

  beforeAll(async () => {
    if (skip) return;
    store = await openStore({ url: t.url });
    accounts = new AccountsStore(store.db);
    ledger = new BalanceLedger(accounts);
  });

  afterAll(async () => {
    await ledger?.flush();
    await store?.close();
  });

  async function user(balance: number): Promise<number> {
    return accounts.insertUser({ username: `u${++userSeq}`, password_hash: 'h', role: 'user', group_name: 'default', balance });
  }
  async function tokenOf(userId: number, quotaLimit: number | null): Promise<number> {
    return accounts.insertToken({
      user_id: userId,
      name: 't',
      key_hash: `key-${++userSeq}`,
      key_hint: 'sk-…',
      status: 'enabled',
      expires_at: null,
      quota_limit: quotaLimit,
      models: null,
      ip_allow: null,
    });
  }
  const balanceOf = async (id: number) => (await accounts.userById(id))!.balance;

  describe.skipIf(skip)('BalanceLedger', () => {
    it('lets exactly the reservations that fit through: 50 x 100 against 1000 -> 10, balance 0', async () => {
      const id = await user(1000);
      const results = await Promise.all(Array.from({ length: 50 }, () => ledger.reserve(id, null, false, 100)));
      const ok = results.filter((r): r is Reservation => typeof r === 'object');
      expect(ok).toHaveLength(10);
      expect(results.filter((r) => r === 'user')).toHaveLength(40);
      expect(await balanceOf(id)).toBe(0);
    });

    it('takes a burst of reservations that all fit in one write', async () => {
      const id = await user(10 * MICROS);
      const spy = vi.spyOn(accounts, 'debitUser');
      let rs: Reservation[];
      try {
        const results = await Promise.all(Array.from({ length: 20 }, () => ledger.reserve(id, null, false, 100)));
        expect(results.every((r) => typeof r === 'object')).toBe(true);
        rs = results as Reservation[];
        expect(spy).toHaveBeenCalledTimes(1);
      } finally {
        spy.mockRestore();
      }
      for (const r of rs) ledger.settle(r, 60);
      await ledger.flush();
      expect(await accounts.userById(id)).toMatchObject({ balance: 10 * MICROS - 20 * 60, used: 1200, request_count: 20 });
    });

    it('refuses nobody whose own share fits when the turn total does not', async () => {
      const id = await user(550);
      const amounts = [400, 100, 300, 50, 200];
      const results = await Promise.all(amounts.map((a) => ledger.reserve(id, null, false, a)));
      // One by one, in arrival order: 400 (150 left), 100 (50 left), 300 no, 50 (0 left), 200 no.
      expect(results.map((r) => (typeof r === 'object' ? r.amount : r))).toEqual([400, 100, 'user', 50, 'user']);
      expect(await balanceOf(id)).toBe(0);
    });

    it.skipIf(t.name === 'pglite')('never overdraws with two ledgers (two processes) on one database', async () => {
      const other = await openStore({ url: t.url });
      try {
        const ledger2 = new BalanceLedger(new AccountsStore(other.db));
        const id = await user(1000);
        const burst = (l: BalanceLedger) => Array.from({ length: 25 }, () => l.reserve(id, null, false, 100));
        const results = await Promise.all([...burst(ledger), ...burst(ledger2)]);
        expect(results.filter((r) => typeof r === 'object')).toHaveLength(10);
        expect(await balanceOf(id)).toBe(0);
      } finally {
        await other.close();
      }
    });

    it('settles in batches: refunds what was not used, counts use and requests', async () => {
      const id = await user(1000);
      const rs = (await Promise.all(Array.from({ length: 10 }, () => ledger.reserve(id, null, false, 100)))) as Reservation[];
      expect(await balanceOf(id)).toBe(0);
      const spy = vi.spyOn(accounts, 'settleUser');
      try {
        rs.forEach((r, i) => ledger.settle(r, 30 + i)); // costs 30..39, 345 in all
        await ledger.flush();
        expect(spy).toHaveBeenCalledTimes(1); // one write for 10 settlements
        expect(spy).toHaveBeenCalledWith(id, 1000 - 345, 345, 10);
      } finally {
        spy.mockRestore();
      }
      expect(await accounts.userById(id)).toMatchObject({ balance: 655, used: 345, request_count: 10 });
    });

    it('many settles across turns reach the exact final balance after flush()', async () => {
      const id = await user(100_000);
      let spent = 0;
      const work = Array.from({ length: 200 }, async (_, i) => {
        const r = await ledger.reserve(id, null, false, 400);
        if (typeof r !== 'object') throw new Error(`reservation ${i} refused`);
        await new Promise((resolve) => setTimeout(resolve, i % 7));
        const cost = (i * 37) % 400;
        spent += cost;
        ledger.settle(r, cost);
      });
      await Promise.all(work);
      await ledger.flush();
      expect(await accounts.userById(id)).toMatchObject({ balance: 100_000 - spent, used: spent, request_count: 200 });
    });

    it('charges more than reserved when usage exceeds it, clamping the balance at 0', async () => {
      const id = await user(150);
      const r = (await ledger.reserve(id, null, false, 100)) as Reservation;
      ledger.settle(r, 120);
      await ledger.flush();
      expect(await balanceOf(id)).toBe(30);
      const r2 = (await ledger.reserve(id, null, false, 30)) as Reservation;
      ledger.settle(r2, 500);
      await ledger.flush();
      expect(await accounts.userById(id)).toMatchObject({ balance: 0, used: 620, request_count: 2 });
    });

    it('reserves nothing for a free request', async () => {
      const id = await user(0);
      expect(await ledger.reserve(id, null, false, 0)).toMatchObject({ userId: id, tokenId: null, amount: 0 });
      expect(await ledger.reserve(id, null, false, 1)).toBe('user');
    });

    it('refuses when the token limit is hit, without touching the user', async () => {
      const id = await user(10_000);
      const tok = await tokenOf(id, 250);
      const results = await Promise.all(Array.from({ length: 5 }, () => ledger.reserve(id, tok, true, 100)));
      expect(results.filter((r) => typeof r === 'object')).toHaveLength(2);
      expect(results.filter((r) => r === 'token')).toHaveLength(3);
      expect((await accounts.tokenById(tok))!.quota_used).toBe(200);
      expect(await balanceOf(id)).toBe(9800);

      // Settling a token-limited reservation gives the token back what was not used.
      const ok = results.filter((r): r is Reservation => typeof r === 'object');
      for (const r of ok) ledger.settle(r, 40);
      await ledger.flush();
      expect((await accounts.tokenById(tok))!.quota_used).toBe(80);
      expect(await accounts.userById(id)).toMatchObject({ balance: 9920, used: 80 });
      expect((await accounts.tokenById(tok))!.last_used_at).toBeGreaterThan(0);
    });

    it('gives the token its reservation back when the user cannot pay', async () => {
      const id = await user(50);
      const tok = await tokenOf(id, 1000);
      expect(await ledger.reserve(id, tok, true, 100)).toBe('user');
      await ledger.flush();
      expect((await accounts.tokenById(tok))!.quota_used).toBe(0);
      expect(await accounts.userById(id)).toMatchObject({ balance: 50, used: 0, request_count: 0 });
    });

    it('charges only the user for a token without its own limit', async () => {
      const id = await user(500);
      const tok = await tokenOf(id, null);
      const r = await ledger.reserve(id, tok, false, 200);
      expect(r).toMatchObject({ userId: id, tokenId: tok, amount: 200 });
      expect((await accounts.tokenById(tok))!.quota_used).toBe(0);
      expect(await balanceOf(id)).toBe(300);
    });
  });

  describe.skipIf(skip)('PriceBook', () => {
    it('prices unknown models at the default, free models at 0, stored prices over both', async () => {
      const defaults = { inputPrice: 2 * MICROS, outputPrice: 8 * MICROS };
      const book = new PriceBook(new PricesStore(store.db), defaults);
      await book.load();
      expect(book.priceOf('unknown-model')).toEqual({ model: 'unknown-model', ...defaults });
      book.markFree('local-embed');
      expect(book.priceOf('local-embed')).toEqual({ model: 'local-embed', inputPrice: 0, outputPrice: 0 });
      expect(costMicros(book.priceOf('local-embed'), 10_000, 10_000)).toBe(0);

      const big = 3_000_000_000_000; // above 2^31 in the bigint columns
      await book.set('gpt-x', 150_000, 600_000);
      await book.set('gpt-x', 250_000, 1_000_000); // update path
      await book.set('local-embed', 1, 2); // a price row wins over "free"
      await book.set('pricey', big, big);
      expect(book.priceOf('gpt-x')).toEqual({ model: 'gpt-x', inputPrice: 250_000, outputPrice: 1_000_000 });

      const fresh = new PriceBook(new PricesStore(store.db), defaults);
      await fresh.load();
      expect(fresh.list()).toEqual([
        { model: 'gpt-x', inputPrice: 250_000, outputPrice: 1_000_000 },
        { model: 'local-embed', inputPrice: 1, outputPrice: 2 },
        { model: 'pricey', inputPrice: big, outputPrice: big },
      ]);
      expect(costMicros(fresh.priceOf('gpt-x'), 4, 1)).toBe(2); // 1.0 + 1.0

      expect(await fresh.remove('gpt-x')).toBe(true);
      expect(await fresh.remove('gpt-x')).toBe(false);
      expect(fresh.priceOf('gpt-x')).toEqual({ model: 'gpt-x', ...defaults });
      await book.load();
      expect(book.list().map((p) => p.model)).toEqual(['local-embed', 'pricey']);
    });
  });
});
