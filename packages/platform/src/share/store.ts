// SQL for share links, scoped by team (management) or by shareId (visitors).
import { sql, type Insertable, type Selectable, type Updateable } from 'kysely';
import type { PlatformDb } from '../store/database.js';
import type { OutLinksTable } from './tables.js';

export type OutLinkRow = Selectable<OutLinksTable>;

export class OutLinksStore {
  constructor(private readonly db: PlatformDb) {}

  async insert(row: Insertable<OutLinksTable>): Promise<void> {
    await this.db.insertInto('out_links').values(row).execute();
  }

  async list(teamId: string, appId: string): Promise<OutLinkRow[]> {
    const rows = await this.db
      .selectFrom('out_links')
      .selectAll()
      .where('team_id', '=', teamId)
      .where('app_id', '=', appId)
      .orderBy('created_at', 'desc')
      .execute();
    return rows.map(normalise);
  }

  async get(teamId: string, id: string): Promise<OutLinkRow | undefined> {
    const row = await this.db.selectFrom('out_links').selectAll().where('team_id', '=', teamId).where('id', '=', id).executeTakeFirst();
    return row && normalise(row);
  }

  async update(teamId: string, id: string, set: Updateable<OutLinksTable>): Promise<boolean> {
    const r = await this.db.updateTable('out_links').set(set).where('team_id', '=', teamId).where('id', '=', id).executeTakeFirst();
    return Number(r.numUpdatedRows) > 0;
  }

  async remove(teamId: string, id: string): Promise<boolean> {
    const r = await this.db.deleteFrom('out_links').where('team_id', '=', teamId).where('id', '=', id).executeTakeFirst();
    return Number(r.numDeletedRows) > 0;
  }

  async byShareId(shareId: string): Promise<OutLinkRow | undefined> {
    const row = await this.db.selectFrom('out_links').selectAll().where('share_id', '=', shareId).executeTakeFirst();
    return row && normalise(row);
  }

  async touch(id: string, at: number): Promise<void> {
    await this.db.updateTable('out_links').set({ last_used_at: at }).where('id', '=', id).execute();
  }

  /** Adds an answer's cost to what the link has spent (in one statement: answers end in any order, in any process). */
  async addUsage(shareId: string, cost: number): Promise<void> {
    await this.db
      .updateTable('out_links')
      .set({ used_points: sql`used_points + ${cost}` })
      .where('share_id', '=', shareId)
      .execute();
  }
}

/** bigint columns come back as strings from PostgreSQL. */
function normalise(r: OutLinkRow): OutLinkRow {
  return {
    ...r,
    expires_at: r.expires_at === null ? null : Number(r.expires_at),
    created_at: Number(r.created_at),
    last_used_at: r.last_used_at === null ? null : Number(r.last_used_at),
    qpm: r.qpm === null ? null : Number(r.qpm),
    link_qpm: r.link_qpm === null ? null : Number(r.link_qpm),
    max_usage_points: r.max_usage_points === null ? null : Number(r.max_usage_points),
    used_points: Number(r.used_points),
  };
}

/** A link's allowed origins (stored as a JSON array). */
export function allowedOrigins(r: OutLinkRow): string[] {
  try {
    const v = JSON.parse(r.allowed_origins);
    return Array.isArray(v) ? v.filter((o): o is string => typeof o === 'string') : [];
  } catch {
    return [];
  }
}
