// Balance reservations through local leases. A request reserves its most
// likely cost before the upstream call and settles after it. Each process
// takes money from the stored balance in leases (one conditional UPDATE,
// `balance >= amount`, so the store can never hand out more than there is,
// also to several gateway processes on one database), serves reservations
// from the lease in memory, and every flush gives back what is left together
// with the usage counts in one UPDATE per account. A busy gateway therefore
// writes a few rows a second instead of two per request. The price: a process
// that dies holds at most one lease (BALANCE_LEASE_UNITS) per active account
// out of the balance, which stays lost like any pre-charge of a crashed relay.
import type { AccountsStore } from './store.js';

type Kind = 'user' | 'token';

interface Account {
  kind: Kind;
  id: number;
  /** Taken from the store, not yet reserved by a request. */
  lease: number;
  /** Charged beyond what was reserved and leased; taken at the next flush. */
  debt: number;
  used: number;
  requests: number;
  touched: boolean;
  acquiring: Promise<boolean> | null;
}

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
  /** How often leases are given back and usage is written (ms). */
  flushMs: number;
}

export class BalanceLedger {
  private accounts = new Map<string, Account>();
  private timer: NodeJS.Timeout | undefined;
  private flushing: Promise<void> = Promise.resolve();

  constructor(
    private readonly store: AccountsStore,
    private readonly opts: LedgerOptions = { leaseMicros: 1_000_000, flushMs: 1000 },
  ) {}

  /** Reserves `amount` from the user and, when the token has its own limit, from the token. */
  async reserve(userId: number, tokenId: number | null, tokenLimited: boolean, amount: number): Promise<Reservation | 'user' | 'token'> {
    const limitedTokenId = tokenLimited ? tokenId : null;
    if (amount > 0) {
      if (limitedTokenId !== null && !(await this.take(this.account('token', limitedTokenId), amount))) return 'token';
      if (!(await this.take(this.account('user', userId), amount))) {
        if (limitedTokenId !== null) this.giveBack(this.account('token', limitedTokenId), amount);
        return 'user';
      }
    }
    return { userId, limitedTokenId, tokenId, amount: Math.max(amount, 0) };
  }

  /** Gives back what was reserved but not used and counts the use; written at the next flush. */
  settle(r: Reservation, actualCost: number): void {
    const user = this.account('user', r.userId);
    this.giveBack(user, r.amount - actualCost);
    user.used += actualCost;
    user.requests += 1;
    if (r.limitedTokenId !== null) this.giveBack(this.account('token', r.limitedTokenId), r.amount - actualCost);
    if (r.tokenId !== null) this.account('token', r.tokenId).touched = true;
    this.schedule();
  }

  /** Writes leases and usage back to the store; resolves when they are there. */
  flush(): Promise<void> {
    if (this.timer) {
      clearTimeout(this.timer);
      this.timer = undefined;
    }
    this.flushing = this.flushing.then(() => this.writeBack());
    return this.flushing;
  }

  private account(kind: Kind, id: number): Account {
    const key = kind === 'user' ? id : -id - 1; // one map, two id spaces
    let a = this.accounts.get(String(key));
    if (!a) {
      a = { kind, id, lease: 0, debt: 0, used: 0, requests: 0, touched: false, acquiring: null };
      this.accounts.set(String(key), a);
    }
    return a;
  }

  private giveBack(a: Account, amount: number): void {
    a.lease += amount;
    if (a.lease < 0) {
      a.debt -= a.lease;
      a.lease = 0;
    }
  }

  private schedule(): void {
    if (this.timer) return;
    this.timer = setTimeout(() => void this.flush(), this.opts.flushMs);
    this.timer.unref();
  }

  private debit(a: Account, amount: number): Promise<boolean> {
    return a.kind === 'user' ? this.store.debitUser(a.id, amount) : this.store.debitToken(a.id, amount);
  }

  /** Takes `amount` from the lease, topping it up from the store (one caller at a time). */
  private async take(a: Account, amount: number): Promise<boolean> {
    for (;;) {
      if (a.lease >= amount) {
        a.lease -= amount;
        return true;
      }
      if (a.acquiring) {
        await a.acquiring;
        continue;
      }
      const need = amount - a.lease;
      a.acquiring = (async () => {
        const chunk = Math.max(need, this.opts.leaseMicros);
        if (chunk > need && (await this.debit(a, chunk))) a.lease += chunk;
        else if (await this.debit(a, need)) a.lease += need;
        else return false;
        return true;
      })().finally(() => {
        a.acquiring = null;
      });
      if (!(await a.acquiring) && a.lease < amount) return false;
      this.schedule();
    }
  }

  private async writeBack(): Promise<void> {
    const now = Date.now();
    const writes: Promise<void>[] = [];
    for (const a of this.accounts.values()) {
      const refund = a.lease - a.debt;
      if (refund === 0 && a.used === 0 && a.requests === 0 && !a.touched) continue;
      const { used, requests } = a;
      a.lease = 0;
      a.debt = 0;
      a.used = 0;
      a.requests = 0;
      a.touched = false;
      const write = a.kind === 'user' ? this.store.settleUser(a.id, refund, used, requests) : this.store.settleToken(a.id, refund, now);
      writes.push(
        write.catch((err: Error) => {
          // Keep what could not be written: it goes with the next flush.
          this.giveBack(a, refund);
          a.used += used;
          a.requests += requests;
          this.schedule();
          console.error(`kbchat gateway: writing back ${a.kind} ${a.id} failed (kept for the next flush): ${err.message}`);
        }),
      );
    }
    await Promise.all(writes);
    // Forget accounts with nothing outstanding (new activity recreates them);
    // one still topping up its lease or holding money must stay.
    for (const [key, a] of this.accounts) {
      if (!a.acquiring && a.lease === 0 && a.debt === 0 && a.used === 0 && a.requests === 0 && !a.touched) this.accounts.delete(key);
    }
  }
}
