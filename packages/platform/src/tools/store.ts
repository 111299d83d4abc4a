// SQL for tool sources. Every query is scoped by team.
import type { Selectable } from 'kysely';
import type { PlatformDb } from '../store/database.js';
import type { ToolSourcesTable } from './tables.js';

export type ToolSourceRow = Selectable<ToolSourcesTable>;

export class ToolSourcesStore {
  constructor(private readonly db: PlatformDb) {}

  async insert(row: ToolSourceRow): Promise<void> {
    await this.db.insertInto('tool_sources').values(row).execute();
  }

  get(teamId: string, id: string): Promise<ToolSourceRow | undefined> {
    return this.db.selectFrom('tool_sources').selectAll().where('team_id', '=', teamId).where('id', '=', id).executeTakeFirst();
  }

  /** The team's sources among these ids. */
  some(teamId: string, ids: string[]): Promise<ToolSourceRow[]> {
    if (ids.length === 0) return Promise.resolve([]);
    return this.db.selectFrom('tool_sources').selectAll().where('team_id', '=', teamId).where('id', 'in', ids).execute();
  }

  /** Oldest first, as they were added. */
  list(teamId: string): Promise<ToolSourceRow[]> {
    return this.db.selectFrom('tool_sources').selectAll().where('team_id', '=', teamId).orderBy('created_at').orderBy('id').execute();
  }

  async setTools(teamId: string, id: string, set: { tools: string; transport: string | null; base_url: string | null; listed_at: number }): Promise<boolean> {
    const r = await this.db
      .updateTable('tool_sources')
      .set({ ...set, updated_at: set.listed_at })
      .where('team_id', '=', teamId)
      .where('id', '=', id)
      .executeTakeFirst();
    return Number(r.numUpdatedRows) > 0;
  }

  async delete(teamId: string, id: string): Promise<boolean> {
    const r = await this.db.deleteFrom('tool_sources').where('team_id', '=', teamId).where('id', '=', id).executeTakeFirst();
    return Number(r.numDeletedRows) > 0;
  }
}
