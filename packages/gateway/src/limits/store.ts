// The rate limits' rows (rate_limits) and the shared-database counters
// (rate_counters): the only SQL of limits/.
import { sql, type Kysely } from 'kysely';
import { updateElseInsert, retriedTransaction, type StoreKind } from '../store/db.js';
import type { GatewayTables, RateLimitsTable } from '../store/schema.js';

export type LimitScope = RateLimitsTable['scope'];
export type LimitRow = Pick<RateLimitsTable, 'scope' | 'subject' | 'rpm' | 'tpm' | 'rpd' | 'budget' | 'budget_period'>;
export type BudgetPeriod = NonNullable<RateLimitsTable['budget_period']>;

export class RateLimitsStore {
  constructor(
    private readonly db: Kysely<GatewayTables>,
    private readonly kind: StoreKind,
  ) {}

  list(): Promise<LimitRow[]> {
    return this.db
      .selectFrom('rate_limits')
      .select(['scope', 'subject', 'rpm', 'tpm', 'rpd', 'budget', 'budget_period'])
      .orderBy('scope')
      .orderBy('subject')
      .execute();
  }

  async set(row: LimitRow): Promise<void> {
    const values = { ...row, updated_at: Date.now() };
    await updateElseInsert(
      () => this.db.updateTable('rate_limits').set(values).where('scope', '=', row.scope).where('subject', '=', row.subject).executeTakeFirst(),
      () => this.db.insertInto('rate_limits').values(values).execute(),
    );
  }

  async delete(scope: LimitScope, subject: string): Promise<boolean> {
    const r = await this.db.deleteFrom('rate_limits').where('scope', '=', scope).where('subject', '=', subject).executeTakeFirst();
    return Number(r.numDeletedRows) > 0;
  }

  /**
   * Adds `points` to a window's count and returns the count and when the
   * window ends: a window that has ended starts again at `points`, ending
   * `durationMs` from now (negative points: see giveBack). One statement on PostgreSQL; a locked row in a
   * transaction on MySQL, which cannot return the row it upserted.
   */
  async add(key: string, points: number, durationMs: number, now = Date.now()): Promise<{ points: number; expiresAt: number }> {
    if (points < 0) return this.giveBack(key, -points, durationMs, now);
    const fresh = { key, points, expires_at: now + durationMs };
    if (this.kind !== 'mysql') {
      const row = await this.db
        .insertInto('rate_counters')
        .values(fresh)
        .onConflict((oc) =>
          oc.column('key').doUpdateSet({
            points: sql`case when rate_counters.expires_at <= ${now} then excluded.points else rate_counters.points + excluded.points end`,
            expires_at: sql`case when rate_counters.expires_at <= ${now} then excluded.expires_at else rate_counters.expires_at end`,
          }),
        )
        .returning(['points', 'expires_at'])
        .executeTakeFirstOrThrow();
      return { points: Number(row.points), expiresAt: Number(row.expires_at) };
    }
    return retriedTransaction(this.db, async (tx) => {
      // MySQL runs the SET list left to right: `points` is judged by the old expires_at, as is `expires_at` itself.
      await tx
        .insertInto('rate_counters')
        .values(fresh)
        .onDuplicateKeyUpdate({
          points: sql`if(expires_at <= ${now}, values(points), points + values(points))`,
          expires_at: sql`if(expires_at <= ${now}, values(expires_at), expires_at)`,
        })
        .execute();
      const row = await tx.selectFrom('rate_counters').select(['points', 'expires_at']).where('key', '=', key).executeTakeFirstOrThrow();
      return { points: Number(row.points), expiresAt: Number(row.expires_at) };
    });
  }

  /** What a token or user has been charged since `since` (epoch ms), from the ledger's rows (the log). */
  async spentSince(scope: 'token' | 'user', id: number, since: number): Promise<number> {
    const row = await this.db
      .selectFrom('logs')
      .select((eb) => eb.fn.sum<number | string | null>('cost').as('spent'))
      .where(scope === 'token' ? 'token_id' : 'user_id', '=', id)
      .where('created_at', '>=', since)
      .executeTakeFirst();
    return Number(row?.spent ?? 0);
  }

  /** Takes points off a window that has not ended; one that has gives nothing back (the next starts clean). */
  private async giveBack(key: string, points: number, durationMs: number, now: number): Promise<{ points: number; expiresAt: number }> {
    await this.db
      .updateTable('rate_counters')
      .set({ points: sql`points - ${points}` })
      .where('key', '=', key)
      .where('expires_at', '>', now)
      .execute();
    const row = await this.db
      .selectFrom('rate_counters')
      .select(['points', 'expires_at'])
      .where('key', '=', key)
      .where('expires_at', '>', now)
      .executeTakeFirst();
    return row ? { points: Number(row.points), expiresAt: Number(row.expires_at) } : { points: 0, expiresAt: now + durationMs };
  }

  /** Drops windows that ended (they are only ever restarted, never read, once ended). */
  async sweep(now = Date.now()): Promise<void> {
    await this.db.deleteFrom('rate_counters').where('expires_at', '<', now).execute();
  }
}
