// Top-up codes: made by administrators (a random key, shown once and kept as
// its hash, with a hint), redeemed by a signed-in user exactly once. The
// redemption, the balance and the ledger row that records the money are one
// transaction whose first statement takes the code only while it is unused,
// so that two gateways redeeming it at the same moment credit it once.
import { randomBytes } from 'node:crypto';
import { sql, type Kysely, type Selectable } from 'kysely';
import { errors } from '../errors.js';
import { retriedTransaction } from '../store/db.js';
import type { GatewayTables, RedemptionsTable } from '../store/schema.js';
import { hashKey, keyHint } from './secrets.js';
import { whereContains } from './store.js';

export type RedemptionRow = Selectable<RedemptionsTable> & { redeemed_by_username: string | null };

/** A code: recognisable, and 192 random bits (no code can be guessed). */
export function newRedemptionKey(): string {
  return `kbr-${randomBytes(24).toString('base64url')}`;
}

export class RedemptionsStore {
  constructor(private readonly db: Kysely<GatewayTables>) {}

  /** Makes `count` codes of `quota` micro-units: their keys (shown once) and rows. */
  async create(input: { name: string; quota: number; count: number; createdBy: number }): Promise<{ keys: string[]; rows: RedemptionRow[] }> {
    const now = Date.now();
    const keys = Array.from({ length: input.count }, newRedemptionKey);
    const hashes = keys.map(hashKey);
    await this.db
      .insertInto('redemptions')
      .values(
        keys.map((key, i) => ({
          name: input.name,
          key_hash: hashes[i]!,
          key_hint: keyHint(key),
          quota: input.quota,
          status: 'unused' as const,
          created_by: input.createdBy,
          created_at: now,
          redeemed_by: null,
          redeemed_at: null,
        })),
      )
      .execute();
    // MySQL returns no ids from an insert: the rows are read back by their hashes, each key beside its row.
    const rows = await this.base().where('r.key_hash', 'in', hashes).orderBy('r.id').execute();
    const keyOf = new Map(hashes.map((h, i) => [h, keys[i]!]));
    return { keys: rows.map((r) => keyOf.get(r.key_hash)!), rows: rows.map(normalise) };
  }

  private base() {
    return this.db.selectFrom('redemptions as r').leftJoin('users as u', 'u.id', 'r.redeemed_by').selectAll('r').select('u.username as redeemed_by_username');
  }

  /** Newest first; `search` in the name. */
  async list(offset: number, limit: number, search?: string): Promise<{ rows: RedemptionRow[]; total: number }> {
    const q = whereContains(this.base(), 'r.name', search);
    const n = whereContains(this.db.selectFrom('redemptions as r'), 'r.name', search);
    const rows = await q.orderBy('r.created_at', 'desc').orderBy('r.id', 'desc').offset(offset).limit(limit).execute();
    const total = await n.select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow();
    return { rows: rows.map(normalise), total: Number(total.n) };
  }

  async get(id: number): Promise<RedemptionRow | undefined> {
    const row = await this.base().where('r.id', '=', id).executeTakeFirst();
    return row && normalise(row);
  }

  /** Disables an unused code, or enables a disabled one; a redeemed code stays as it is (false). */
  async setStatus(id: number, status: 'unused' | 'disabled'): Promise<boolean> {
    const r = await this.db.updateTable('redemptions').set({ status }).where('id', '=', id).where('status', '!=', 'redeemed').executeTakeFirst();
    return Number(r.numUpdatedRows) > 0 || (await this.get(id))?.status === status;
  }

  async delete(id: number): Promise<boolean> {
    const r = await this.db.deleteFrom('redemptions').where('id', '=', id).executeTakeFirst();
    return Number(r.numDeletedRows) > 0;
  }

  /**
   * Redeems the code for `userId`: the micro-units added, or a 400 when no
   * unused code has this key (unknown, used, disabled: one answer for all,
   * so that nobody learns which codes exist).
   */
  async redeem(key: string, userId: number): Promise<number> {
    const hash = hashKey(key);
    const now = Date.now();
    const added = await retriedTransaction(this.db, async (tx) => {
      const taken = await tx
        .updateTable('redemptions')
        .set({ status: 'redeemed', redeemed_by: userId, redeemed_at: now })
        .where('key_hash', '=', hash)
        .where('status', '=', 'unused')
        .executeTakeFirst();
      if (Number(taken.numUpdatedRows) !== 1) return undefined;
      const code = await tx.selectFrom('redemptions').select(['id', 'quota']).where('key_hash', '=', hash).executeTakeFirstOrThrow();
      const quota = Number(code.quota);
      await tx
        .updateTable('users')
        .set({ balance: sql`balance + ${quota}` })
        .where('id', '=', userId)
        .execute();
      await tx.insertInto('balance_changes').values({ user_id: userId, delta: quota, reason: 'topup', ref_id: code.id, created_at: now }).execute();
      return quota;
    });
    if (added === undefined) throw errors.badField('key', "Invalid 'key': this code does not exist, was already used, or was disabled");
    return added;
  }
}

/** bigint columns come back as strings on some drivers. */
function normalise(r: RedemptionRow): RedemptionRow {
  return {
    ...r,
    quota: Number(r.quota),
    created_at: Number(r.created_at),
    redeemed_at: r.redeemed_at === null ? null : Number(r.redeemed_at),
  };
}
