// What the ledger tests share: a ledger on a store, users and tokens, log
// rows as the relay writes them, and the books of one user as the store has
// them (balance, leases, logged costs), whose sum never changes.
import { randomBytes } from 'node:crypto';
import { sql } from 'kysely';
import { BalanceLedger, type LedgerOptions, type Reservation } from '../src/accounts/ledger.js';
import { LedgerStore } from '../src/accounts/ledger-store.js';
import type { AccountsStore } from '../src/accounts/store.js';
import { LogsStore } from '../src/logs/store.js';
import type { Store } from '../src/store/db.js';
import type { NewLog } from '../src/store/schema.js';

/** A started ledger on `store`, with short intervals so that tests run quickly. */
export async function ledgerOn(store: Store, opts: Partial<LedgerOptions> = {}): Promise<{ ledger: BalanceLedger; ledgerStore: LedgerStore }> {
  const ledgerStore = new LedgerStore(store.db, store.kind, new LogsStore(store.db, store.kind === 'pglite'));
  const ledger = new BalanceLedger(ledgerStore, { leaseMicros: 1_000_000, flushMs: 200, logFlushMs: 50, graceMs: 300, ...opts });
  await ledger.start();
  return { ledger, ledgerStore };
}

export function newUser(accounts: AccountsStore, balance: number): Promise<number> {
  return accounts.insertUser({ username: `u-${randomBytes(6).toString('hex')}`, password_hash: 'h', role: 'user', group_name: 'default', balance });
}

export function newToken(accounts: AccountsStore, userId: number, quotaLimit: number | null): Promise<number> {
  return accounts.insertToken({
    user_id: userId,
    name: 't',
    key_hash: `key-${randomBytes(8).toString('hex')}`,
    key_hint: 'sk-…',
    status: 'enabled',
    expires_at: null,
    quota_limit: quotaLimit,
    models: null,
    ip_allow: null,
  });
}

/** A request log row for a settled reservation, as relay/run.ts makes it. */
export function logRow(r: Reservation, cost: number, over: Partial<NewLog> = {}): NewLog {
  return {
    request_id: `req-${randomBytes(6).toString('hex')}`,
    created_at: Date.now(),
    user_id: r.userId,
    token_id: r.tokenId,
    channel_id: null,
    endpoint: 'chat',
    model: 'sim-chat',
    upstream_model: null,
    is_stream: 0,
    prompt_tokens: 10,
    completion_tokens: 10,
    usage_source: 'upstream',
    cost,
    latency_ms: 1,
    ttft_ms: null,
    status: 200,
    error: null,
    attempts: 1,
    request_body: null,
    ...over,
  };
}

export interface Books {
  balance: number;
  leased: number;
  logged: number;
  rows: number;
}

/**
 * One user's money as the store has it: initial balance + top-ups = balance + leased + logged, always.
 * Read in one statement, so that a lease taken in the background between two reads cannot count twice.
 */
export async function books(store: Store, userId: number): Promise<Books> {
  const r = await sql<{ balance: number; leased: number; logged: number; log_rows: number }>`select
      (select balance from users where id = ${userId}) as balance,
      (select coalesce(sum(amount), 0) from balance_leases where kind = 'user' and account_id = ${userId}) as leased,
      (select coalesce(sum(cost), 0) from logs where user_id = ${userId}) as logged,
      (select count(*) from logs where user_id = ${userId}) as log_rows`.execute(store.db);
  const b = r.rows[0]!;
  return { balance: Number(b.balance), leased: Number(b.leased), logged: Number(b.logged), rows: Number(b.log_rows) };
}
