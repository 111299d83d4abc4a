// Balance reservations with group commit. A request reserves its most likely
// cost before the upstream call and settles after it. Reservations that arrive
// in the same event-loop turn for the same account are taken in ONE conditional
// UPDATE (balance >= sum), so that a busy gateway makes one write per account
// per turn instead of one per request; when the sum does not fit, they are
// retried one by one, so nobody is refused while their own share fits.
// The UPDATE is conditional in the database, so concurrent requests, also from
// several gateway processes on one database, can never overdraw a balance.
import type { AccountsStore } from './store.js';

type Account = 'user' | 'token';
interface Pending {
  amount: number;
  resolve: (ok: boolean) => void;
  reject: (err: unknown) => void;
}
interface Settlement {
  refund: number;
  used: number;
  requests: number;
}

export interface Reservation {
  userId: number;
  tokenId: number | null;
  amount: number;
}

export class BalanceLedger {
  private reserveQueue = new Map<string, Pending[]>();
  private settleQueue = new Map<string, Settlement>();
  private reserveScheduled = false;
  private settleScheduled = false;
  private inFlight = new Set<Promise<void>>();

  constructor(private readonly store: AccountsStore) {}

  /**
   * Reserves `amount` from the user and, when the token has its own limit, from
   * the token. Resolves null with the reason when either does not have it.
   */
  async reserve(userId: number, tokenId: number | null, tokenLimited: boolean, amount: number): Promise<Reservation | 'user' | 'token'> {
    if (amount <= 0) return { userId, tokenId, amount: 0 };
    if (tokenLimited && tokenId !== null) {
      if (!(await this.enqueue('token', tokenId, amount))) return 'token';
    }
    if (!(await this.enqueue('user', userId, amount))) {
      if (tokenLimited && tokenId !== null) this.settle({ userId: -1, tokenId, amount }, 0, false);
      return 'user';
    }
    return { userId, tokenId, amount };
  }

  /** Gives back what was reserved but not used, counts the use; batched, not awaited by the caller. */
  settle(r: Reservation, actualCost: number, countRequest = true): void {
    const refund = r.amount - actualCost;
    if (r.userId >= 0) this.addSettlement(`user:${r.userId}`, refund, actualCost, countRequest ? 1 : 0);
    if (r.tokenId !== null) this.addSettlement(`token:${r.tokenId}`, refund, actualCost, 0);
  }

  /** Resolves when every queued write has reached the store (shutdown, tests). */
  async flush(): Promise<void> {
    while (this.reserveQueue.size || this.settleQueue.size || this.inFlight.size) {
      if (this.settleQueue.size) this.track(this.writeSettlements());
      if (this.reserveQueue.size) this.track(this.writeReservations());
      await Promise.all([...this.inFlight]);
    }
  }

  private enqueue(account: Account, id: number, amount: number): Promise<boolean> {
    return new Promise<boolean>((resolve, reject) => {
      const key = `${account}:${id}`;
      const list = this.reserveQueue.get(key);
      if (list) list.push({ amount, resolve, reject });
      else this.reserveQueue.set(key, [{ amount, resolve, reject }]);
      if (!this.reserveScheduled) {
        this.reserveScheduled = true;
        setImmediate(() => this.track(this.writeReservations()));
      }
    });
  }

  private addSettlement(key: string, refund: number, used: number, requests: number): void {
    const s = this.settleQueue.get(key);
    if (s) {
      s.refund += refund;
      s.used += used;
      s.requests += requests;
    } else this.settleQueue.set(key, { refund, used, requests });
    if (!this.settleScheduled) {
      this.settleScheduled = true;
      setImmediate(() => this.track(this.writeSettlements()));
    }
  }

  private track(p: Promise<void>): void {
    this.inFlight.add(p);
    p.finally(() => this.inFlight.delete(p));
  }

  private debit(account: Account, id: number, amount: number): Promise<boolean> {
    return account === 'user' ? this.store.debitUser(id, amount) : this.store.debitToken(id, amount);
  }

  private async writeReservations(): Promise<void> {
    this.reserveScheduled = false;
    const batch = this.reserveQueue;
    this.reserveQueue = new Map();
    await Promise.all(
      [...batch].map(async ([key, items]) => {
        const [account, idText] = key.split(':') as [Account, string];
        const id = Number(idText);
        try {
          const total = items.reduce((n, p) => n + p.amount, 0);
          if (await this.debit(account, id, total)) {
            for (const p of items) p.resolve(true);
            return;
          }
          if (items.length === 1) return items[0]!.resolve(false);
          for (const p of items) p.resolve(await this.debit(account, id, p.amount));
        } catch (err) {
          for (const p of items) p.reject(err);
        }
      }),
    );
  }

  private async writeSettlements(): Promise<void> {
    this.settleScheduled = false;
    const batch = this.settleQueue;
    this.settleQueue = new Map();
    const now = Date.now();
    await Promise.all(
      [...batch].map(async ([key, s]) => {
        const [account, idText] = key.split(':');
        const id = Number(idText);
        try {
          if (account === 'user') await this.store.settleUser(id, s.refund, s.used, s.requests);
          else await this.store.settleToken(id, s.refund, now);
        } catch (err) {
          // A lost settlement only ever leaves the balance lower than it should be
          // (the reservation stays taken); say so loudly rather than crash.
          console.error(`kbchat gateway: settling ${key} failed: ${(err as Error).message}`);
        }
      }),
    );
  }
}
