// SQL for teams and API keys.
import type { Selectable } from 'kysely';
import type { PlatformDb } from '../store/database.js';
import type { ApiKeysTable } from './tables.js';

export type ApiKeyRow = Selectable<ApiKeysTable>;

export class KeysStore {
  constructor(private readonly db: PlatformDb) {}

  async firstTeam(): Promise<{ id: string; name: string } | undefined> {
    return this.db.selectFrom('teams').select(['id', 'name']).orderBy('created_at').limit(1).executeTakeFirst();
  }

  async insertTeam(id: string, name: string): Promise<void> {
    await this.db
      .insertInto('teams')
      .values({ id, name, created_at: Date.now() })
      .onConflict((c) => c.doNothing())
      .execute();
  }

  async insertKey(row: Omit<ApiKeyRow, 'id' | 'last_used_at' | 'revoked_at'>): Promise<number> {
    const r = await this.db
      .insertInto('api_keys')
      .values({ ...row, last_used_at: null, revoked_at: null })
      .onConflict((c) => c.column('key_hash').doNothing())
      .returning('id')
      .executeTakeFirst();
    return r?.id ?? 0;
  }

  byHash(hash: string): Promise<ApiKeyRow | undefined> {
    return this.db.selectFrom('api_keys').selectAll().where('key_hash', '=', hash).executeTakeFirst();
  }

  /** Records a use of the key (lastUsedTime); a no-op when the stored time is already within `withinMs`. */
  async touch(id: number, now: number, withinMs: number): Promise<void> {
    await this.db
      .updateTable('api_keys')
      .set({ last_used_at: now })
      .where('id', '=', id)
      .where((eb) => eb.or([eb('last_used_at', 'is', null), eb('last_used_at', '<', now - withinMs)]))
      .execute();
  }

  list(teamId: string, appId?: string): Promise<ApiKeyRow[]> {
    let q = this.db.selectFrom('api_keys').selectAll().where('team_id', '=', teamId).where('revoked_at', 'is', null);
    if (appId !== undefined) q = q.where('app_id', '=', appId);
    return q.orderBy('id').execute();
  }

  async revoke(teamId: string, id: number): Promise<boolean> {
    const r = await this.db
      .updateTable('api_keys')
      .set({ revoked_at: Date.now() })
      .where('id', '=', id)
      .where('team_id', '=', teamId)
      .where('revoked_at', 'is', null)
      .executeTakeFirst();
    return Number(r.numUpdatedRows) > 0;
  }

  /** An application's keys die with it. */
  async revokeForApp(teamId: string, appId: string): Promise<void> {
    await this.db
      .updateTable('api_keys')
      .set({ revoked_at: Date.now() })
      .where('team_id', '=', teamId)
      .where('app_id', '=', appId)
      .where('revoked_at', 'is', null)
      .execute();
  }
}
