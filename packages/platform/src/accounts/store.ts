// SQL for users and sessions.
import { sql, type Selectable } from 'kysely';
import type { PlatformDb } from '../store/database.js';
import type { UsersTable } from './tables.js';

export type UserRow = Selectable<UsersTable>;

export class UsersStore {
  constructor(private readonly db: PlatformDb) {}

  byName(username: string): Promise<UserRow | undefined> {
    return this.db
      .selectFrom('users')
      .selectAll()
      .where((eb) => eb(eb.fn('lower', ['username']), '=', username.toLowerCase()))
      .executeTakeFirst();
  }

  /** False when the name is taken (in any case). */
  async insert(row: UserRow): Promise<boolean> {
    const r = await this.db
      .insertInto('users')
      .values(row)
      .onConflict((c) => c.expression(sql`lower(username)`).doNothing())
      .returning('id')
      .executeTakeFirst();
    return r !== undefined;
  }

  members(teamId: string): Promise<UserRow[]> {
    return this.db.selectFrom('users').selectAll().where('team_id', '=', teamId).orderBy('created_at').execute();
  }

  async delete(teamId: string, id: string): Promise<boolean> {
    const r = await this.db.deleteFrom('users').where('team_id', '=', teamId).where('id', '=', id).executeTakeFirst();
    return Number(r.numDeletedRows) > 0;
  }

  async insertSession(tokenHash: string, userId: string, expiresAt: number): Promise<void> {
    await this.db.insertInto('sessions').values({ token_hash: tokenHash, user_id: userId, expires_at: expiresAt, created_at: Date.now() }).execute();
  }

  /** The user of a session that has not expired. */
  sessionUser(tokenHash: string, now: number): Promise<(UserRow & { expires_at: number }) | undefined> {
    return this.db
      .selectFrom('sessions')
      .innerJoin('users', 'users.id', 'sessions.user_id')
      .selectAll('users')
      .select('sessions.expires_at')
      .where('sessions.token_hash', '=', tokenHash)
      .where('sessions.expires_at', '>', now)
      .executeTakeFirst();
  }

  async deleteSession(tokenHash: string): Promise<void> {
    await this.db.deleteFrom('sessions').where('token_hash', '=', tokenHash).execute();
  }

  async deleteExpiredSessions(now: number): Promise<void> {
    await this.db.deleteFrom('sessions').where('expires_at', '<=', now).execute();
  }
}
