// SQL for price groups, and for what uses one (users, tokens, channels).
import type { Kysely } from 'kysely';
import { updateElseInsert } from '../store/db.js';
import type { GatewayTables, GroupRow } from '../store/schema.js';

/** What names a group: a group in use is not deleted. */
export interface GroupUsage {
  users: number;
  tokens: number;
  channels: number;
}

/** The groups a channel row serves (its `groups` column): none named, every group. */
export function channelGroups(json: string | null): string[] {
  if (!json) return [];
  try {
    const v = JSON.parse(json);
    return Array.isArray(v) ? v.filter((g): g is string => typeof g === 'string') : [];
  } catch {
    return [];
  }
}

export class GroupsStore {
  constructor(private readonly db: Kysely<GatewayTables>) {}

  async list(): Promise<GroupRow[]> {
    const rows = await this.db.selectFrom('groups').selectAll().orderBy('name').execute();
    return rows.map((r) => ({ ...r, ratio_micros: Number(r.ratio_micros), created_at: Number(r.created_at), updated_at: Number(r.updated_at) }));
  }

  async has(name: string): Promise<boolean> {
    return (await this.db.selectFrom('groups').select('name').where('name', '=', name).executeTakeFirst()) !== undefined;
  }

  /** Creates the group or changes its ratio (and its description, when given). */
  async upsert(name: string, ratioMicros: number, description: string | undefined): Promise<void> {
    const now = Date.now();
    await updateElseInsert(
      () =>
        this.db
          .updateTable('groups')
          .set({ ratio_micros: ratioMicros, updated_at: now, ...(description === undefined ? {} : { description }) })
          .where('name', '=', name)
          .executeTakeFirst(),
      () =>
        this.db
          .insertInto('groups')
          .values({ name, ratio_micros: ratioMicros, description: description ?? '', created_at: now, updated_at: now })
          .execute(),
    );
  }

  async delete(name: string): Promise<boolean> {
    const r = await this.db.deleteFrom('groups').where('name', '=', name).executeTakeFirst();
    return Number(r.numDeletedRows) > 0;
  }

  /** For each group named anywhere, how many users, tokens and channels name it. */
  async usage(): Promise<Map<string, GroupUsage>> {
    const [users, tokens, channels] = await Promise.all([
      this.db
        .selectFrom('users')
        .select((eb) => ['group_name', eb.fn.countAll<number>().as('n')])
        .groupBy('group_name')
        .execute(),
      this.db
        .selectFrom('tokens')
        .select((eb) => ['group_name', eb.fn.countAll<number>().as('n')])
        .where('group_name', 'is not', null)
        .groupBy('group_name')
        .execute(),
      // Channels are few, and their groups a JSON list: counted here.
      this.db.selectFrom('channels').select('groups').where('groups', 'is not', null).execute(),
    ]);
    const usage = new Map<string, GroupUsage>();
    const of = (name: string) => {
      let u = usage.get(name);
      if (!u) usage.set(name, (u = { users: 0, tokens: 0, channels: 0 }));
      return u;
    };
    for (const r of users) of(r.group_name).users += Number(r.n);
    for (const r of tokens) of(r.group_name!).tokens += Number(r.n);
    for (const r of channels) for (const g of channelGroups(r.groups)) of(g).channels++;
    return usage;
  }
}
