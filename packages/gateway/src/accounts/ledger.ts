// Balances, reservations and the request log, kept so that money always adds
// up across processes and crashes.
//
// - A request reserves its most likely cost before the upstream call. The
//   money comes from a *lease* this process holds on the balance (taken in
//   one transaction, never more than there is), so that a busy gateway writes
//   a few rows a second instead of two per request.
// - After the call the request is settled at its real cost, even when that is
//   more than was reserved (post-consume: the balance may go below zero by the
//   overrun of requests already in flight; then requests are refused).
// - A settled request's log row and its charge are written together, in one
//   transaction every LOG_FLUSH_MS: no charge without a log row, no log row
//   without its charge. A process killed before that loses both.
// - Every LEDGER_FLUSH_MS the unused part of each lease goes back and the
//   process renews itself as a holder. Leases are rows in the store
//   (ledger-store.ts); those of a holder that stopped renewing go back to the
//   balances by themselves, done by whichever process looks next. A process
//   serves from its leases only while it knows itself alive (renewed within
//   the holder TTL by its own clock); past that, a request waits for a
//   renewal, so that a process that was only stalled never spends leases
//   that went back to the balances meanwhile.
import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import type { NewLog } from '../store/schema.js';
import { LedgerAccounts, type Account, type Entry, type GiveBack } from './ledger-accounts.js';
import type { AccountKind, AcquireResult, Holder, LedgerStore } from './ledger-store.js';

export interface Reservation {
  userId: number;
  /** The token whose own limit was reserved from, or null. */
  limitedTokenId: number | null;
  /** The token that made the request (its last use is recorded). */
  tokenId: number | null;
  amount: number;
}

export interface LedgerOptions {
  /** Largest lease a process takes at once (micro-units). */
  leaseMicros: number;
  /** How often unused leases go back, the holder is renewed and dead holders are looked for (ms). */
  flushMs: number;
  /** How often log rows and their charges are written (ms). */
  logFlushMs: number;
  /** How long past one flush interval a silent holder still counts as alive (ms). */
  graceMs?: number;
  /** The store is opened by this process alone (embedded): every other holder is dead. */
  exclusiveStore?: boolean;
  onError?: (err: Error) => void;
  /** A monotonic clock in ms (tests stall a process with it). Default performance.now. */
  now?: () => number;
}

/** Rows in one transaction at most; more queued than this are written at once rather than at the next tick. */
const ROWS_PER_WRITE = 2000;
/** Rows kept while the store cannot be written; older ones beyond this are given up (and not charged). */
const MAX_PENDING_ROWS = 100_000;
export const DEFAULT_GRACE_MS = 3000;
/** How much sooner than the store this process stops trusting its own renewal (clock rates, scheduling). */
const ALIVE_MARGIN_MS = 250;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
/** A store call's answer when this holder had been presumed dead: nothing was written. */
const LOST = Symbol('holder lost');

export class BalanceLedger {
  readonly holder: Holder;
  private readonly accounts: LedgerAccounts;
  private pending: Entry[] = [];
  /** Every store write of this process runs in this chain, one at a time. */
  private chain: Promise<unknown> = Promise.resolve();
  private rowTimer: NodeJS.Timeout | undefined;
  private rowWriteQueued = false;
  private tickTimer: NodeJS.Timeout | undefined;
  private storeDown = false;
  private readonly onError: (err: Error) => void;
  private readonly now: () => number;
  /** Until when (this.now()) no other process can have presumed this one dead. */
  private aliveUntil = 0;
  /** A renewal that requests wait for, once this process is past aliveUntil. */
  private confirming: Promise<void> | null = null;

  constructor(
    private readonly store: LedgerStore,
    private readonly opts: LedgerOptions,
  ) {
    this.onError = opts.onError ?? ((err) => console.error(`kbchat gateway: ${err.message}`));
    this.accounts = new LedgerAccounts(opts.leaseMicros);
    this.now = opts.now ?? (() => performance.now());
    this.holder = {
      id: randomBytes(12).toString('hex'),
      host: hostname(),
      pid: process.pid,
      ttlMs: opts.flushMs + (opts.graceMs ?? DEFAULT_GRACE_MS),
    };
  }

  /** Registers this process as a holder, gives back what dead holders held, and starts the clock. */
  async start(): Promise<void> {
    const began = this.now();
    await this.store.register(this.holder);
    this.renewed(began);
    await this.reclaim(this.opts.exclusiveStore);
    this.tickTimer = setInterval(() => void this.tick(), this.opts.flushMs);
    this.tickTimer.unref();
  }

  /** Reserves `amount` from the user and, when the token has its own limit, from the token. */
  async reserve(userId: number, tokenId: number | null, tokenLimited: boolean, amount: number): Promise<Reservation | 'user' | 'token'> {
    const limitedTokenId = tokenLimited ? tokenId : null;
    if (amount > 0) {
      if (limitedTokenId !== null && !(await this.take(this.account('token', limitedTokenId), amount))) return 'token';
      // The token's share goes back when the user cannot pay, or the store fails.
      const userPays = await this.take(this.account('user', userId), amount).catch((err: unknown) => err as Error);
      if (userPays !== true) {
        if (limitedTokenId !== null) this.account('token', limitedTokenId).free += amount;
        if (userPays instanceof Error) throw userPays;
        return 'user';
      }
    }
    return { userId, limitedTokenId, tokenId, amount: Math.max(amount, 0) };
  }

  /** Log rows (with their charges) waiting for the next write: /metrics shows it. */
  get pendingRows(): number {
    return this.pending.length;
  }

  /**
   * Settles a request at its real cost and queues its log row; the two are
   * written together within LOG_FLUSH_MS.
   */
  settle(r: Reservation, cost: number, row: NewLog): void {
    this.account('user', r.userId).free += r.amount - cost;
    if (r.limitedTokenId !== null) this.account('token', r.limitedTokenId).free += r.amount - cost;
    this.pending.push({ row, cost, userId: r.userId, limitedTokenId: r.limitedTokenId, tokenId: r.tokenId });
    if (this.pending.length >= ROWS_PER_WRITE) this.writeRowsSoon();
    // The tick writes rows too: a timer of their own only when they are due more often.
    else if (!this.rowTimer && this.opts.logFlushMs < this.opts.flushMs) {
      this.rowTimer = setTimeout(() => {
        this.rowTimer = undefined;
        this.writeRowsSoon();
      }, this.opts.logFlushMs);
      this.rowTimer.unref();
    }
  }

  /** Queues one write of the pending rows, unless one is queued already (it will take them). */
  private writeRowsSoon(): void {
    if (this.rowWriteQueued) return;
    this.rowWriteQueued = true;
    void this.serial(() => {
      this.rowWriteQueued = false;
      return this.write('none');
    }).catch((err: Error) => this.onError(err));
  }

  /** Writes every queued row and gives back unused leases; resolves when they are in the store. */
  flush(): Promise<void> {
    return this.serial(() => this.write('all'));
  }

  /** A user's balance set or changed by an admin, counting the leases of every process as the user's. */
  async changeBalance(userId: number, change: { set: number } | { delta: number }): Promise<boolean> {
    await this.flush();
    return this.store.changeBalance(userId, change);
  }

  /** What processes hold on these accounts: part of what a user has (the admin pages add it). */
  leasedOn(kind: AccountKind, ids: number[]): Promise<Map<number, number>> {
    return this.store.leasedOn(kind, ids);
  }

  async close(): Promise<void> {
    if (this.tickTimer) clearInterval(this.tickTimer);
    if (this.rowTimer) clearTimeout(this.rowTimer);
    try {
      await this.flush();
      // A lease still held (a request that outlived shutdown) stays for the next process to reclaim.
      await this.serial(() => this.store.deregister(this.holder));
    } catch (err) {
      this.onError(new Error(`closing the ledger: ${(err as Error).message} (leases still held go back within ${this.holder.ttlMs + this.opts.flushMs} ms)`));
    }
  }

  private account(kind: AccountKind, id: number): Account {
    return this.accounts.get(kind, id);
  }

  /** Runs store writes of this process one at a time; a failure does not stop the ones after it. */
  private serial<T>(fn: () => Promise<T>): Promise<T> {
    const run = this.chain.then(fn, fn);
    this.chain = run.catch(() => undefined);
    return run;
  }

  private async tick(): Promise<void> {
    await this.serial(() => this.write('idle')).catch((err: Error) => this.onError(err));
    await this.reclaim(false);
  }

  private async reclaim(all = false): Promise<void> {
    if (this.storeDown) return; // said once already; the next tick after it answers looks again
    try {
      const returned = await this.store.reclaim(this.holder.id, all);
      for (const r of returned) {
        this.onError(new Error(`gave back ${r.amount} micro-units leased on ${r.kind} ${r.id} by gateway process ${r.holder}, presumed dead`));
      }
    } catch (err) {
      this.onError(new Error(`looking for leases of dead gateway processes failed: ${(err as Error).message}`));
    }
  }

  /** Takes `amount` from the account's lease, topping it up from the store when it is short. */
  private async take(a: Account, amount: number): Promise<boolean> {
    if (!this.opts.exclusiveStore && this.now() > this.aliveUntil) await this.confirmAlive();
    for (;;) {
      if (a.free >= amount) {
        a.free -= amount;
        a.reservedSinceTick += amount;
        this.topUpEarly(a);
        return true;
      }
      if (a.acquiring) {
        // A lease is being taken: it may cover this request too. If it could not be had
        // for a reservation as big as this one or smaller, this one fails as well.
        const got = await a.acquiring;
        if (!got.ok && got.amount <= amount && a.free < amount) return false;
        continue;
      }
      const acquiring = this.acquire(a, amount).then((ok) => ({ ok, amount }));
      a.acquiring = acquiring.finally(() => (a.acquiring = null));
      if (!(await a.acquiring).ok && a.free < amount) return false;
    }
  }

  /**
   * Takes more before the lease runs out, so that requests seldom wait for a
   * lease (a store write, behind the log rows being written): when less than
   * half of the last lease is left. Not again within a flush interval of a
   * refusal, so that an exhausted balance is not asked after every request.
   */
  private topUpEarly(a: Account): void {
    if (a.acquiring || a.free >= a.lastLease / 2 || Date.now() - a.refusedAt < this.opts.flushMs) return;
    const acquiring = this.serial(() => this.leaseOnce(a, 1)).then(
      (got) => {
        if (!got.taken) a.refusedAt = Date.now();
        return { ok: true, amount: 0 };
      },
      // A waiter then tries for itself, and sees the store's error there.
      () => ({ ok: false, amount: Infinity }),
    );
    a.acquiring = acquiring.finally(() => (a.acquiring = null));
  }

  /** One lease from the store for at least `need` (in the write chain); re-registers a holder presumed dead. */
  private async leaseOnce(a: Account, need: number): Promise<{ taken: number; othersHold: number }> {
    // A revival in between empties the lease: what it had free is then needed too.
    const freeBefore = a.free;
    const got = await this.renewing<Exclude<AcquireResult, { lost: true }>>(async () => {
      const r = await this.store.acquire(this.holder, a.kind, a.id, need + freeBefore - a.free, this.opts.leaseMicros, a.held);
      return 'lost' in r ? LOST : r;
    });
    a.held += got.taken;
    a.free += got.taken;
    if (got.taken > 0) a.lastLease = got.taken;
    return { taken: got.taken, othersHold: 'othersHold' in got ? got.othersHold : 0 };
  }

  /**
   * Takes a new lease big enough for `amount`. When the balance is short but
   * other processes hold leases on it, waits once for their next flush (they
   * give back what they do not use) before saying the money is gone.
   */
  private async acquire(a: Account, amount: number): Promise<boolean> {
    for (let waited = false; ; waited = true) {
      const othersHold = await this.serial(async () => {
        const need = amount - a.free;
        return need > 0 ? (await this.leaseOnce(a, need)).othersHold : 0;
      });
      if (a.free >= amount || waited || othersHold <= 0) return a.free >= amount;
      await sleep(this.opts.flushMs + 100);
    }
  }

  /** Writes queued rows with their charges, ROWS_PER_WRITE at a time, and gives back leases as `giveBack` says. */
  private async write(giveBack: GiveBack): Promise<void> {
    // Only the rows queued by now: those that arrive meanwhile wait for their own
    // batch, or a busy gateway would write a small transaction after another.
    let queued = this.pending.length;
    while (queued > 0 || giveBack !== 'none') {
      const entries = this.pending.splice(0, Math.min(queued, ROWS_PER_WRITE));
      queued -= entries.length;
      try {
        await this.commit(entries, giveBack);
        giveBack = 'none';
        if (this.storeDown) this.onError(new Error('the gateway store takes writes again; request logs and charges are written'));
        this.storeDown = false;
      } catch (err) {
        // Without rows to blame, a store that answers refused the account writes themselves: report it.
        if (entries.length === 0) throw err;
        if (!(await this.writeOneByOne(entries, err as Error))) return;
      }
    }
    this.accounts.forgetIdle();
  }

  /** One transaction: rows, their charges, lease changes; the in-memory leases follow only once it is in. */
  private async commit(entries: Entry[], giveBack: GiveBack): Promise<void> {
    // Planned again after a revival: the revival changes the leases the plan starts from.
    const { writes, accounts } = await this.renewing(async () => {
      const plan = this.accounts.plan(entries, giveBack);
      let lost: boolean;
      try {
        ({ lost } = await this.store.commit(
          this.holder,
          entries.map((e) => e.row),
          plan.writes,
        ));
      } catch (err) {
        plan.undo();
        throw err;
      }
      if (lost) plan.undo();
      return lost ? LOST : plan;
    });
    accounts.forEach((a, i) => (a.held = writes[i]!.newHeld));
  }

  /**
   * Runs a store call that renews this holder first. If the holder had been
   * presumed dead meanwhile (the call answers LOST, having written nothing),
   * revives it and runs the call once more.
   */
  private async renewing<T>(call: () => Promise<T | typeof LOST>): Promise<T> {
    for (let revived = false; ; revived = true) {
      const began = this.now();
      const r = await call();
      if (r !== LOST) {
        this.renewed(began);
        return r;
      }
      if (revived) throw new Error('the gateway store keeps dropping this process as a lease holder');
      await this.revive();
    }
  }

  /** A store write that renewed this holder began at `began`: nobody can presume it dead for a TTL from then. */
  private renewed(began: number): void {
    this.aliveUntil = Math.max(this.aliveUntil, began + this.holder.ttlMs - ALIVE_MARGIN_MS);
  }

  /** Renews this holder before its leases are used again (in the write chain); revives it if it had been presumed dead. */
  private confirmAlive(): Promise<void> {
    this.confirming ??= this.serial(async () => {
      if (this.now() <= this.aliveUntil) return; // a write renewed it meanwhile
      await this.renewing(async () => ((await this.store.renewHolder(this.holder)) ? true : LOST));
    }).finally(() => (this.confirming = null));
    return this.confirming;
  }

  /**
   * This process was presumed dead and its leases went back to the balances.
   * It takes back only what it owes (reservations in flight and rows not yet
   * written: held − free), below zero if it must, and leases afresh for the rest.
   */
  private async revive(): Promise<void> {
    const began = this.now();
    const all = this.accounts.all();
    const takes = all.map((a) => ({ kind: a.kind, id: a.id, amount: Math.max(0, a.held - a.free) }));
    if (await this.store.revive(this.holder, takes)) {
      all.forEach((a, i) => {
        a.held = takes[i]!.amount;
        a.free = 0;
      });
      const owed = takes.reduce((n, t) => n + t.amount, 0);
      this.onError(
        new Error(
          `this gateway process had been presumed dead (no renewal within ${this.holder.ttlMs} ms) and its leases given back; it registered again and took back ${owed} micro-units for requests in flight and unwritten logs`,
        ),
      );
    }
    this.renewed(began);
  }

  /**
   * A write that failed: while the store answers, one row is bad (a value it
   * refuses), so rows go one at a time and only a refused row is dropped, with
   * its cost given back (no charge without a log row). While the store does
   * not answer, everything waits for the next write; returns false then.
   */
  private async writeOneByOne(entries: Entry[], err: Error): Promise<boolean> {
    if (!(await this.store.ping())) return this.keepForLater(entries, err);
    for (let i = 0; i < entries.length; i++) {
      try {
        await this.commit([entries[i]!], 'none');
      } catch (rowErr) {
        if (!(await this.store.ping())) return this.keepForLater(entries.slice(i), rowErr as Error);
        this.drop(entries[i]!, rowErr as Error);
      }
    }
    return true;
  }

  private keepForLater(entries: Entry[], err: Error): false {
    this.pending.unshift(...entries);
    const over = this.pending.length - MAX_PENDING_ROWS;
    if (over > 0) {
      for (const e of this.pending.splice(0, over)) this.giveBackCost(e);
      this.onError(new Error(`the gateway store has not taken writes for a while: ${over} request log rows were given up, and not charged`));
    }
    if (!this.storeDown) this.onError(new Error(`writing request logs and charges failed (kept for the next try): ${err.message}`));
    this.storeDown = true;
    return false;
  }

  /** Reports a row the store refused: its request id and the store's message, never the body. */
  private drop(e: Entry, err: Error): void {
    this.giveBackCost(e);
    const short = err.message.length > 300 ? `${err.message.slice(0, 300)}...` : err.message;
    this.onError(new Error(`request log ${e.row.request_id} dropped (and not charged): ${short}`));
  }

  private giveBackCost(e: Entry): void {
    this.account('user', e.userId).free += e.cost;
    if (e.limitedTokenId !== null) this.account('token', e.limitedTokenId).free += e.cost;
  }
}
