// SQL for users, tokens and sessions. Balances and token quotas change only
// through the ledger's store (ledger-store.ts), which keeps leases with them.
import { sql, type Kysely } from 'kysely';
import type { GatewayTables, TokenRow, UserRow } from '../store/schema.js';

export type NewUser = Pick<UserRow, 'username' | 'password_hash' | 'role' | 'group_name' | 'balance'>;
export type NewToken = Omit<TokenRow, 'id' | 'quota_used' | 'last_used_at' | 'created_at' | 'group_name'> & { group_name?: string | null };
export type TokenPatch = Partial<Pick<TokenRow, 'name' | 'status' | 'expires_at' | 'quota_limit' | 'models' | 'ip_allow' | 'group_name'>>;
export type UserPatch = Partial<Pick<UserRow, 'status' | 'role' | 'group_name' | 'password_hash'>>;

/**
 * Which tokens a list covers: one user's, and/or those owned by `owners.selfId`
 * or by users of `owners.roles` (what an administrator may manage).
 */
export interface TokenScope {
  userId?: number;
  owners?: { selfId: number; roles: UserRow['role'][] };
}

export class AccountsStore {
  constructor(private readonly db: Kysely<GatewayTables>) {}

  async insertUser(u: NewUser): Promise<number> {
    const r = await this.db
      .insertInto('users')
      .values({ ...u, status: 'enabled', used: 0, request_count: 0, created_at: Date.now() })
      .executeTakeFirstOrThrow();
    return r.insertId !== undefined ? Number(r.insertId) : (await this.userByName(u.username))!.id;
  }

  userById(id: number): Promise<UserRow | undefined> {
    return this.db.selectFrom('users').selectAll().where('id', '=', id).executeTakeFirst();
  }

  userByName(username: string): Promise<UserRow | undefined> {
    return this.db.selectFrom('users').selectAll().where('username', '=', username).executeTakeFirst();
  }

  /** A page of the users, oldest first; with `search`, only those whose name contains it (any case). */
  listUsers(offset: number, limit: number, search?: string): Promise<UserRow[]> {
    return this.matching(this.db.selectFrom('users'), 'username', search).selectAll().orderBy('id').offset(offset).limit(limit).execute();
  }

  async countUsers(search?: string): Promise<number> {
    const r = await this.matching(this.db.selectFrom('users'), 'username', search)
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .executeTakeFirstOrThrow();
    return Number(r.n);
  }

  private matching<Q extends { where: (...args: any[]) => Q }>(q: Q, column: 'username' | 'name', search: string | undefined): Q {
    return whereContains(q, column, search);
  }

  async updateUser(id: number, patch: UserPatch): Promise<boolean> {
    if (Object.keys(patch).length === 0) return (await this.userById(id)) !== undefined;
    const r = await this.db.updateTable('users').set(patch).where('id', '=', id).executeTakeFirst();
    return Number(r.numUpdatedRows) > 0 || (await this.userById(id)) !== undefined;
  }

  async deleteUser(id: number): Promise<boolean> {
    await this.db.deleteFrom('tokens').where('user_id', '=', id).execute();
    await this.db.deleteFrom('sessions').where('user_id', '=', id).execute();
    const r = await this.db.deleteFrom('users').where('id', '=', id).executeTakeFirst();
    return Number(r.numDeletedRows) > 0;
  }

  async insertToken(t: NewToken): Promise<number> {
    const r = await this.db
      .insertInto('tokens')
      .values({ group_name: null, ...t, quota_used: 0, created_at: Date.now(), last_used_at: null })
      .executeTakeFirstOrThrow();
    if (r.insertId !== undefined) return Number(r.insertId);
    const row = await this.db.selectFrom('tokens').select('id').where('key_hash', '=', t.key_hash).executeTakeFirstOrThrow();
    return row.id;
  }

  tokenByHash(keyHash: string): Promise<TokenRow | undefined> {
    return this.db.selectFrom('tokens').selectAll().where('key_hash', '=', keyHash).executeTakeFirst();
  }

  tokenById(id: number): Promise<TokenRow | undefined> {
    return this.db.selectFrom('tokens').selectAll().where('id', '=', id).executeTakeFirst();
  }

  /** A page of the tokens in `scope`, oldest first; with `search`, only those whose name contains it (any case). */
  listTokens(scope: TokenScope, offset: number, limit: number, search?: string): Promise<TokenRow[]> {
    return this.matching(this.scoped(scope), 'name', search).selectAll().orderBy('id').offset(offset).limit(limit).execute();
  }

  async countTokens(scope: TokenScope, search?: string): Promise<number> {
    const r = await this.matching(this.scoped(scope), 'name', search)
      .select((eb) => eb.fn.countAll().as('n'))
      .executeTakeFirstOrThrow();
    return Number(r.n);
  }

  private scoped(scope: TokenScope) {
    let q = this.db.selectFrom('tokens');
    if (scope.userId !== undefined) q = q.where('user_id', '=', scope.userId);
    const owners = scope.owners;
    if (owners) {
      q = q.where((eb) =>
        eb.or([
          eb('user_id', '=', owners.selfId),
          ...(owners.roles.length ? [eb('user_id', 'in', eb.selectFrom('users').select('id').where('role', 'in', owners.roles))] : []),
        ]),
      );
    }
    return q;
  }

  async updateToken(id: number, patch: TokenPatch): Promise<boolean> {
    if (Object.keys(patch).length === 0) return (await this.tokenById(id)) !== undefined;
    await this.db.updateTable('tokens').set(patch).where('id', '=', id).execute();
    return (await this.tokenById(id)) !== undefined;
  }

  async deleteToken(id: number): Promise<boolean> {
    const r = await this.db.deleteFrom('tokens').where('id', '=', id).executeTakeFirst();
    return Number(r.numDeletedRows) > 0;
  }

  async insertSession(tokenHash: string, userId: number, expiresAt: number): Promise<void> {
    await this.db.insertInto('sessions').values({ token_hash: tokenHash, user_id: userId, expires_at: expiresAt }).execute();
  }

  async sessionUser(tokenHash: string, now: number): Promise<UserRow | undefined> {
    return this.db
      .selectFrom('sessions')
      .innerJoin('users', 'users.id', 'sessions.user_id')
      .selectAll('users')
      .where('sessions.token_hash', '=', tokenHash)
      .where('sessions.expires_at', '>', now)
      .executeTakeFirst();
  }

  async deleteSession(tokenHash: string): Promise<void> {
    await this.db.deleteFrom('sessions').where('token_hash', '=', tokenHash).execute();
  }

  async deleteSessionsOf(userId: number): Promise<void> {
    await this.db.deleteFrom('sessions').where('user_id', '=', userId).execute();
  }
}

/** Rows whose `column` contains `search`, any case; LIKE's wildcards in it are matched literally. */
export function whereContains<Q extends { where: (...args: any[]) => Q }>(q: Q, column: string, search: string | undefined): Q {
  if (!search) return q;
  // '!' escapes: a backslash reads differently in PostgreSQL's and MySQL's string literals.
  const pattern = `%${search.toLowerCase().replace(/[!%_]/g, (c) => `!${c}`)}%`;
  return q.where(sql`lower(${sql.ref(column)})`, 'like', sql`${pattern} escape '!'`);
}
