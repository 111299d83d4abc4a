// SQL for money held by gateway processes. Each process is a *holder*
// (ledger_holders: who, and until when it is known to be alive) and takes
// *leases* from balances (balance_leases: how much of whose money it holds).
// Every change is one transaction that first renews the holder, so that a
// holder presumed dead (its leases already given back by reclaimExpired)
// finds out before it writes anything, and so that the store always keeps
//
//   initial balance + top-ups = balance + sum of leases + sum of logged costs
//
// exactly: log rows and the charges they record are written together.
// Accounts are always written in one order (users by id, then tokens by id)
// so that two processes cannot deadlock on them; a lock conflict is retried.
import { sql, type Kysely, type Transaction } from 'kysely';
import type { LogsStore } from '../logs/store.js';
import { retriedTransaction, storeNowMs, type StoreKind } from '../store/db.js';
import type { GatewayTables, NewLog } from '../store/schema.js';

export type AccountKind = 'user' | 'token';

export interface Holder {
  id: string;
  host: string;
  pid: number;
  /** How long after each write the holder counts as alive (ms). */
  ttlMs: number;
}

/** One account's part of a commit: its lease before and after, and the charges of the rows written. */
export interface AccountWrite {
  kind: AccountKind;
  id: number;
  /** This holder's lease before the commit, as the holder knows it (0: no lease row). */
  held: number;
  /** The lease after it. */
  newHeld: number;
  /** Costs of the log rows in this commit: taken out of the lease. */
  charge: number;
  /** Requests those rows record (users). */
  requests: number;
  /** When a token was last used (tokens). */
  lastUsedAt?: number;
}

export type AcquireResult = { taken: number } | { taken: 0; othersHold: number } | { lost: true };

type Tx = Transaction<GatewayTables>;

/** Orders writes so that every transaction locks accounts in the same order. */
function byAccount(a: { kind: AccountKind; id: number }, b: { kind: AccountKind; id: number }): number {
  return a.kind === b.kind ? a.id - b.id : a.kind === 'user' ? -1 : 1;
}

export class LedgerStore {
  constructor(
    private readonly db: Kysely<GatewayTables>,
    private readonly kind: StoreKind,
    private readonly logs: LogsStore,
  ) {}

  private now() {
    return storeNowMs(this.kind);
  }

  /** A transaction, run again (up to 4 times) when it lost a deadlock. */
  private transaction<T>(fn: (tx: Tx) => Promise<T>): Promise<T> {
    return retriedTransaction(this.db, fn);
  }

  /** Whether the store answers at all (a failed write is then the data's fault, not the store's). */
  async ping(): Promise<boolean> {
    try {
      await sql`select 1`.execute(this.db);
      return true;
    } catch {
      return false;
    }
  }

  async register(h: Holder): Promise<void> {
    await this.insertHolder(this.db, h);
  }

  private async insertHolder(db: Kysely<GatewayTables> | Tx, h: Holder): Promise<void> {
    await db
      .insertInto('ledger_holders')
      .values({ id: h.id, host: h.host.slice(0, 255), pid: h.pid, started_at: Date.now(), expires_at: sql<number>`${this.now()} + ${h.ttlMs}`, beats: 0 })
      .execute();
  }

  /** Renews the holder; false when it had been presumed dead (its row is gone). */
  private async renew(tx: Tx, h: Holder): Promise<boolean> {
    const r = await tx
      .updateTable('ledger_holders')
      // beats changes the row on every renewal: MySQL counts only changed rows as updated.
      .set({ expires_at: sql<number>`${this.now()} + ${h.ttlMs}`, beats: sql<number>`beats + 1` })
      .where('id', '=', h.id)
      .executeTakeFirst();
    return Number(r.numUpdatedRows) > 0;
  }

  /** Moves `delta` into the account's balance (negative takes out, to below zero if it must) and counts usage. */
  private async credit(tx: Tx, kind: AccountKind, id: number, delta: number, used: number, requests: number, lastUsedAt?: number): Promise<void> {
    if (kind === 'user') {
      if (delta === 0 && used === 0 && requests === 0) return;
      await tx
        .updateTable('users')
        .set({ balance: sql`balance + ${delta}`, used: sql`used + ${used}`, request_count: sql`request_count + ${requests}` })
        .where('id', '=', id)
        .execute();
    } else {
      if (delta === 0 && lastUsedAt === undefined) return;
      await tx
        .updateTable('tokens')
        .set({ quota_used: sql`quota_used - ${delta}`, ...(lastUsedAt !== undefined ? { last_used_at: lastUsedAt } : {}) })
        .where('id', '=', id)
        .execute();
    }
  }

  /** Sets this holder's lease row from `before` to `after` (the holder is its only writer). */
  private async setLease(tx: Tx, holderId: string, kind: AccountKind, id: number, before: number, after: number): Promise<void> {
    if (before === after) return;
    const row = (q: any) => q.where('holder_id', '=', holderId).where('kind', '=', kind).where('account_id', '=', id);
    if (before === 0) await tx.insertInto('balance_leases').values({ holder_id: holderId, kind, account_id: id, amount: after }).execute();
    else if (after === 0) await row(tx.deleteFrom('balance_leases')).execute();
    else await row(tx.updateTable('balance_leases').set({ amount: after })).execute();
  }

  /**
   * Writes log rows and the account changes they and the holder's leases
   * make, in one transaction. Writes nothing and answers `lost` when the
   * holder had been presumed dead (its leases already given back): the
   * ledger then revives it (revive) and writes again.
   */
  async commit(h: Holder, rows: NewLog[], writes: AccountWrite[]): Promise<{ lost: boolean }> {
    return this.transaction(async (tx) => {
      if (!(await this.renew(tx, h))) return { lost: true };
      await this.logs.insertMany(rows, tx);
      for (const w of [...writes].sort(byAccount)) {
        await this.credit(tx, w.kind, w.id, w.held - w.newHeld - w.charge, w.kind === 'user' ? w.charge : 0, w.requests, w.lastUsedAt);
        await this.setLease(tx, h.id, w.kind, w.id, w.held, w.newHeld);
      }
      return { lost: false };
    });
  }

  /** Renews the holder alone; false when it had been presumed dead. */
  async renewHolder(h: Holder): Promise<boolean> {
    return this.transaction((tx) => this.renew(tx, h));
  }

  /**
   * Registers a holder presumed dead again and takes from the balances, as
   * new leases, what it owes for requests in flight and rows not yet written
   * (`takes`), below zero if it must: those were served. Nothing more: the
   * rest of its old leases stays with the balances, and the holder leases
   * again as any other would. False when the holder was alive after all.
   */
  async revive(h: Holder, takes: { kind: AccountKind; id: number; amount: number }[]): Promise<boolean> {
    return this.transaction(async (tx) => {
      if (await this.renew(tx, h)) return false;
      await this.insertHolder(tx, h);
      for (const t of [...takes].sort(byAccount)) {
        if (t.amount <= 0) continue;
        await this.credit(tx, t.kind, t.id, -t.amount, 0, 0);
        await this.setLease(tx, h.id, t.kind, t.id, 0, t.amount);
      }
      return true;
    });
  }

  /**
   * Takes money for a lease: at least `need`, at most `maxLease`, and never
   * more than a quarter of what is left unless `need` is more, so that near
   * the end of a balance no process holds what another one needs.
   * `held` is this holder's lease on the account now.
   */
  async acquire(h: Holder, kind: AccountKind, id: number, need: number, maxLease: number, held: number): Promise<AcquireResult> {
    return this.transaction(async (tx) => {
      if (!(await this.renew(tx, h))) return { lost: true };
      const available = await this.lockAvailable(tx, kind, id);
      if (available === null || available < need) {
        const others = await this.leasedBy(tx, kind, id, h.id);
        return { taken: 0, othersHold: others };
      }
      const take = Math.min(available, Math.max(need, Math.min(maxLease, Math.floor(available / 4))));
      await this.credit(tx, kind, id, -take, 0, 0);
      await this.setLease(tx, h.id, kind, id, held, held + take);
      return { taken: take };
    });
  }

  /** What the account can still lease, with its row locked; null when it has no limit (tokens) or is gone. */
  private async lockAvailable(tx: Tx, kind: AccountKind, id: number): Promise<number | null> {
    if (kind === 'user') {
      const u = await tx.selectFrom('users').select('balance').where('id', '=', id).forUpdate().executeTakeFirst();
      return u ? Number(u.balance) : null;
    }
    const t = await tx.selectFrom('tokens').select(['quota_limit', 'quota_used']).where('id', '=', id).forUpdate().executeTakeFirst();
    return t && t.quota_limit !== null ? Number(t.quota_limit) - Number(t.quota_used) : null;
  }

  /** The sum of leases on one account, of every holder but `exceptHolder`. */
  private async leasedBy(db: Kysely<GatewayTables> | Tx, kind: AccountKind, id: number, exceptHolder?: string): Promise<number> {
    let q = db
      .selectFrom('balance_leases')
      .select((eb) => eb.fn.sum<number>('amount').as('n'))
      .where('kind', '=', kind)
      .where('account_id', '=', id);
    if (exceptHolder) q = q.where('holder_id', '<>', exceptHolder);
    return Number((await q.executeTakeFirst())?.n ?? 0);
  }

  /** The sums of leases held on these accounts (what the admin pages add to a balance). */
  async leasedOn(kind: AccountKind, ids: number[]): Promise<Map<number, number>> {
    if (ids.length === 0) return new Map();
    const rows = await this.db
      .selectFrom('balance_leases')
      .select(['account_id', (eb) => eb.fn.sum<number>('amount').as('n')])
      .where('kind', '=', kind)
      .where('account_id', 'in', ids)
      .groupBy('account_id')
      .execute();
    return new Map(rows.map((r) => [Number(r.account_id), Number(r.n)]));
  }

  /**
   * Gives back the leases of holders presumed dead (expired, or with `all`
   * every holder but `except`: for the embedded store, which one process
   * opens at a time). Returns what went back to which account.
   */
  async reclaim(except: string, all = false): Promise<{ holder: string; kind: AccountKind; id: number; amount: number }[]> {
    let q = this.db.selectFrom('ledger_holders').select('id').where('id', '<>', except);
    if (!all) q = q.where('expires_at', '<', this.now());
    const dead = await q.execute();
    const returned: { holder: string; kind: AccountKind; id: number; amount: number }[] = [];
    for (const { id: holder } of dead) {
      const done = await this.transaction(async (tx) => {
        // Whoever deletes the holder row gives its leases back; the holder itself, if it was
        // only slow, waits on this row lock and then finds itself gone (renew).
        let del = tx.deleteFrom('ledger_holders').where('id', '=', holder);
        if (!all) del = del.where('expires_at', '<', this.now());
        if (Number((await del.executeTakeFirst()).numDeletedRows) === 0) return [];
        const leases = await tx.selectFrom('balance_leases').select(['kind', 'account_id', 'amount']).where('holder_id', '=', holder).execute();
        const out = leases.map((l) => ({ holder, kind: l.kind, id: Number(l.account_id), amount: Number(l.amount) })).sort(byAccount);
        for (const l of out) {
          await this.credit(tx, l.kind, l.id, l.amount, 0, 0);
          await this.setLease(tx, holder, l.kind, l.id, l.amount, 0);
        }
        return out;
      });
      returned.push(...done);
    }
    return returned;
  }

  /** Removes a holder that holds nothing (a clean shutdown). */
  async deregister(h: Holder): Promise<void> {
    await this.transaction(async (tx) => {
      const held = await tx.selectFrom('balance_leases').select('account_id').where('holder_id', '=', h.id).limit(1).execute();
      if (held.length === 0) await tx.deleteFrom('ledger_holders').where('id', '=', h.id).execute();
    });
  }

  /**
   * Sets a user's balance as people mean it: what the user has, counting the
   * leases processes hold as the user's (they come back unless spent). With
   * `delta`, adds to it; taking away never goes below zero, nor deeper than
   * an existing debt.
   */
  async changeBalance(id: number, change: { set: number } | { delta: number }): Promise<boolean> {
    return this.transaction(async (tx) => {
      const u = await tx.selectFrom('users').select('balance').where('id', '=', id).forUpdate().executeTakeFirst();
      if (!u) return false;
      const leased = await this.leasedBy(tx, 'user', id);
      const now = Number(u.balance) + leased;
      let next: number;
      if ('set' in change) next = change.set;
      else next = change.delta >= 0 ? now + change.delta : Math.max(now + change.delta, Math.min(now, 0));
      await tx
        .updateTable('users')
        .set({ balance: next - leased })
        .where('id', '=', id)
        .execute();
      return true;
    });
  }
}
