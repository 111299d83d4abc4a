// The ledger's accounts in memory (one per user, and per token with its own
// limit) and the plan of a write: what each lease becomes once queued log
// rows are charged to it, unused money goes back and overruns are taken from
// the balance. No I/O: ledger.ts sends the plan to the store and keeps it
// only once the store has it.
import type { NewLog } from '../store/schema.js';
import type { AccountKind, AccountWrite } from './ledger-store.js';

export interface Account {
  kind: AccountKind;
  id: number;
  /** This process's lease on the account, as the store has it. */
  held: number;
  /**
   * The part of `held` that no reservation and no unwritten cost uses.
   * Negative: costs beyond what was reserved, taken from the balance at the next write.
   */
  free: number;
  /** A lease being taken (one at a time per account) for a reservation of `amount`. */
  acquiring: Promise<{ ok: boolean; amount: number }> | null;
  /** The size of the last lease taken, and when the store last had nothing to lease (ms). */
  lastLease: number;
  refusedAt: number;
  /** Reserved since unused leases last went back: what this process needs for a flush interval. */
  reservedSinceTick: number;
}

/** A settled request: its log row and the accounts its cost is charged to. */
export interface Entry {
  row: NewLog;
  cost: number;
  userId: number;
  limitedTokenId: number | null;
  tokenId: number | null;
}

/** What a write gives back: nothing, what a busy process will not need (each tick), or everything unused (flush). */
export type GiveBack = 'none' | 'idle' | 'all';

export interface WritePlan {
  /** writes[i] is the write of accounts[i]; the writes after them are tokens' last uses only. */
  writes: AccountWrite[];
  accounts: Account[];
  /** Puts back the money the plan moved in memory, when the store did not take it. */
  undo(): void;
}

/** The accounts of one process, keyed so that users and tokens share one map. */
export class LedgerAccounts {
  private readonly map = new Map<number, Account>();

  constructor(private readonly leaseMicros: number) {}

  get(kind: AccountKind, id: number): Account {
    const key = kind === 'user' ? id : -id - 1;
    let a = this.map.get(key);
    if (!a) {
      a = { kind, id, held: 0, free: 0, acquiring: null, lastLease: 0, refusedAt: 0, reservedSinceTick: 0 };
      this.map.set(key, a);
    }
    return a;
  }

  all(): Account[] {
    return [...this.map.values()];
  }

  /** Accounts that hold nothing and owe nothing are forgotten; new activity makes them again. */
  forgetIdle(): void {
    for (const [key, a] of this.map) if (a.held === 0 && a.free === 0 && !a.acquiring) this.map.delete(key);
  }

  /**
   * What each account's lease becomes: less the costs of the rows written,
   * less what is unused (as `giveBack` says), plus what was charged beyond it
   * (taken from the balance, which may go below zero). Moves that money in
   * memory at once, so that no reservation can take it meanwhile.
   */
  plan(entries: Entry[], giveBack: GiveBack): WritePlan {
    const charges = new Map<Account, { charge: number; requests: number }>();
    const lastUse = new Map<number, number>();
    const charge = (a: Account, cost: number, requests: number) => {
      const c = charges.get(a) ?? { charge: 0, requests: 0 };
      c.charge += cost;
      c.requests += requests;
      charges.set(a, c);
    };
    for (const e of entries) {
      charge(this.get('user', e.userId), e.cost, 1);
      if (e.limitedTokenId !== null) charge(this.get('token', e.limitedTokenId), e.cost, 0);
      if (e.tokenId !== null) lastUse.set(e.tokenId, Math.max(lastUse.get(e.tokenId) ?? 0, Number(e.row.created_at)));
    }
    const writes: AccountWrite[] = [];
    const accounts: Account[] = [];
    const moved: [Account, number][] = [];
    for (const a of this.map.values()) {
      accounts.push(a);
      const c = charges.get(a) ?? { charge: 0, requests: 0 };
      const giveBackNow = this.unused(a, giveBack);
      const topUp = a.free < 0 ? -a.free : 0;
      if (giveBackNow || topUp) {
        a.free += topUp - giveBackNow;
        moved.push([a, topUp - giveBackNow]);
      }
      const lastUsedAt = a.kind === 'token' ? lastUse.get(a.id) : undefined;
      if (lastUsedAt !== undefined) lastUse.delete(a.id);
      writes.push({
        kind: a.kind,
        id: a.id,
        held: a.held,
        newHeld: a.held - c.charge - giveBackNow + topUp,
        charge: c.charge,
        requests: c.requests,
        lastUsedAt,
      });
    }
    // Tokens without their own limit have no account; only their last use is written.
    for (const [id, at] of lastUse) writes.push({ kind: 'token', id, held: 0, newHeld: 0, charge: 0, requests: 0, lastUsedAt: at });
    return { writes, accounts, undo: () => moved.forEach(([a, d]) => (a.free -= d)) };
  }

  /**
   * What goes back. At a tick ('idle'), while a balance has plenty (the last
   * lease was a full one), a busy process keeps what it reserved in the last
   * interval, so that its requests do not wait for a new lease every tick;
   * near the end of a balance (smaller leases) everything unused goes back,
   * for other processes to have. A flush ('all': admin edits, shutdown)
   * gives back all that is unused.
   */
  private unused(a: Account, giveBack: GiveBack): number {
    if (giveBack === 'none') return 0;
    const keep = giveBack === 'idle' && a.lastLease >= this.leaseMicros ? a.reservedSinceTick : 0;
    a.reservedSinceTick = 0;
    return Math.max(0, a.free - keep);
  }
}
