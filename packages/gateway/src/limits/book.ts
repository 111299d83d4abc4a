// The rate limits in force, read whole into memory and re-read like prices
// (refreshed-book.ts): a request's limits cost no query. Empty (the usual
// case) means the relay checks nothing at all.
import { RefreshedBook } from '../refreshed-book.js';
import type { LimitRow, LimitScope, RateLimitsStore } from './store.js';

export type LimitKind = 'rpm' | 'tpm' | 'rpd';
export const LIMIT_KINDS: readonly LimitKind[] = ['rpm', 'tpm', 'rpd'];
export const LIMIT_SCOPES: readonly LimitScope[] = ['token', 'user', 'group', 'model'];

export class LimitsBook extends RefreshedBook<LimitRow[]> {
  private rows = new Map<string, LimitRow>();

  constructor(private readonly store: RateLimitsStore) {
    super();
  }

  protected read(): Promise<LimitRow[]> {
    return this.store.list();
  }

  protected take(rows: LimitRow[]): void {
    this.rows = new Map(rows.map((r) => [`${r.scope}:${r.subject}`, r]));
  }

  get empty(): boolean {
    return this.rows.size === 0;
  }

  of(scope: LimitScope, subject: string): LimitRow | undefined {
    return this.rows.get(`${scope}:${subject}`);
  }

  list(scope?: LimitScope): LimitRow[] {
    return [...this.rows.values()].filter((r) => !scope || r.scope === scope);
  }

  /** Sets a subject's limits and budget; all null removes its row. */
  async set(row: LimitRow): Promise<void> {
    if (row.rpm === null && row.tpm === null && row.rpd === null && row.budget === null) {
      await this.remove(row.scope, row.subject);
      return;
    }
    await this.edit(this.store.set(row));
    this.rows.set(`${row.scope}:${row.subject}`, row);
  }

  async remove(scope: LimitScope, subject: string): Promise<boolean> {
    const gone = await this.edit(this.store.delete(scope, subject));
    this.rows.delete(`${scope}:${subject}`);
    return gone;
  }
}
