// Price groups: a user and a token have a group (a token's own, else its
// user's: auth.ts callerGroup); a group's ratio multiplies every cost its
// callers are charged (relay/run.ts, pricing.ts atRatio). Read whole into
// memory and re-read like prices (refreshed-book.ts), so that the relay never
// queries the store for a ratio.
import { DEFAULT_GROUP } from '@kbchat/contracts';
import type { GroupRow } from '../store/schema.js';
import { RefreshedBook } from '../refreshed-book.js';
import type { GroupsStore } from './groups-store.js';
import { MICROS } from './pricing.js';

export { DEFAULT_GROUP };

export class GroupBook extends RefreshedBook<GroupRow[]> {
  private byName = new Map<string, GroupRow>();

  constructor(private readonly store: GroupsStore) {
    super();
  }

  protected read(): Promise<GroupRow[]> {
    return this.store.list();
  }

  protected take(rows: GroupRow[]): void {
    this.byName = new Map(rows.map((r) => [r.name, r]));
  }

  /**
   * The group's ratio in millionths. A group this process does not know (made
   * by another process since the last re-read) is charged full price until
   * the next one: never a discount by mistake.
   */
  ratioOf(name: string): number {
    return this.byName.get(name)?.ratio_micros ?? MICROS;
  }

  get(name: string): GroupRow | undefined {
    return this.byName.get(name);
  }

  /** Every group, `default` first, then by name. */
  list(): GroupRow[] {
    return [...this.byName.values()].sort((a, b) =>
      a.name === DEFAULT_GROUP ? -1 : b.name === DEFAULT_GROUP ? 1 : a.name < b.name ? -1 : a.name > b.name ? 1 : 0,
    );
  }

  /** Whether the group exists, asking the store when this process has not seen it (another may have just made it). */
  async exists(name: string): Promise<boolean> {
    return name === DEFAULT_GROUP || this.byName.has(name) || (await this.store.has(name));
  }

  async set(name: string, ratioMicros: number, description?: string): Promise<GroupRow> {
    await this.edit(this.store.upsert(name, ratioMicros, description));
    const now = Date.now();
    const before = this.byName.get(name);
    const row: GroupRow = {
      name,
      ratio_micros: ratioMicros,
      description: description ?? before?.description ?? '',
      created_at: before?.created_at ?? now,
      updated_at: now,
    };
    this.byName.set(name, row);
    return row;
  }

  async remove(name: string): Promise<boolean> {
    const gone = await this.edit(this.store.delete(name));
    this.byName.delete(name);
    return gone;
  }
}
