// SQL for applications. Every query is scoped by team.
import type { Selectable } from 'kysely';
import { containing } from '../datasets/store.js';
import type { PlatformDb } from '../store/database.js';
import type { AppsTable } from './tables.js';

export type AppRow = Selectable<AppsTable>;

export class AppsStore {
  constructor(private readonly db: PlatformDb) {}

  async insert(row: AppRow): Promise<void> {
    await this.db.insertInto('apps').values(row).execute();
  }

  app(teamId: string, id: string): Promise<AppRow | undefined> {
    return this.db.selectFrom('apps').selectAll().where('id', '=', id).where('team_id', '=', teamId).executeTakeFirst();
  }

  async list(teamId: string, searchKey: string | undefined, offset: number, limit: number): Promise<{ rows: AppRow[]; total: number }> {
    let base = this.db.selectFrom('apps').where('team_id', '=', teamId);
    if (searchKey) base = base.where('name', 'ilike', containing(searchKey));
    const rows = await base.selectAll().orderBy('created_at', 'desc').orderBy('id').offset(offset).limit(limit).execute();
    const total = await base.select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow();
    return { rows, total: Number(total.n) };
  }

  async update(teamId: string, id: string, set: Pick<AppRow, 'name' | 'intro' | 'config' | 'updated_at'>): Promise<boolean> {
    const r = await this.db.updateTable('apps').set(set).where('id', '=', id).where('team_id', '=', teamId).executeTakeFirst();
    return Number(r.numUpdatedRows) > 0;
  }

  async delete(teamId: string, id: string): Promise<boolean> {
    const r = await this.db.deleteFrom('apps').where('id', '=', id).where('team_id', '=', teamId).executeTakeFirst();
    return Number(r.numDeletedRows) > 0;
  }
}
