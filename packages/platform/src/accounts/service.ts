// Platform users and their sessions: signing in with a password (scrypt),
// sessions that expire and can be ended, the root user made at first start,
// and root adding and removing the members of its team. A session acts for
// its team exactly as a general API key does.
import { randomBytes } from 'node:crypto';
import type { PublicUser } from '@kbchat/contracts';
import { csrfTokenOf, hashPassword, verifyPassword } from '@kbchat/server-kit';
import { errors, PlatformError } from '../http/errors.js';
import { hashKey, newId, type KeyCaller } from '../keys/auth.js';
import type { UserRow, UsersStore } from './store.js';

export const SESSION_TTL_MS = 7 * 24 * 3600 * 1000;
/** Failed sign-ins per name before it is refused for a while (guessing passwords costs time). */
const MAX_FAILURES = 10;
const FAILURE_WINDOW_MS = 10 * 60 * 1000;

export type { PublicUser };

export interface SignedIn {
  /** The session token: set as an httpOnly cookie, never shown to scripts. */
  token: string;
  /** Sent back by the page in X-CSRF-Token with every change it asks for. */
  csrfToken: string;
  expiresAt: number;
  user: PublicUser;
}

export interface SessionCaller extends KeyCaller {
  user: PublicUser;
  csrfToken: string;
}

export function publicUser(u: UserRow): PublicUser {
  return { id: u.id, username: u.username, role: u.role, teamId: u.team_id, createTime: new Date(Number(u.created_at)).toISOString() };
}

const USERNAME = /^[\p{L}\p{N}._@-]{1,64}$/u;

export class AccountsService {
  private readonly failures = new Map<string, { count: number; since: number }>();
  /** Compared against when a name is unknown, so that a wrong name takes as long as a wrong password. */
  private readonly dummyHash = hashPassword(randomBytes(16).toString('hex'));

  constructor(
    private readonly store: UsersStore,
    private readonly sessionTtlMs = SESSION_TTL_MS,
  ) {}

  /** First start: root in the root team, with ROOT_PASSWORD or a generated password (returned, to be printed once). */
  async ensureRoot(teamId: string, rootPassword: string | undefined, generatedElsewhere = false): Promise<{ created: boolean; generatedPassword?: string }> {
    if (await this.store.byName('root')) return { created: false };
    const password = rootPassword ?? randomBytes(9).toString('base64url');
    const created = await this.store.insert({
      id: newId(),
      team_id: teamId,
      username: 'root',
      password_hash: await hashPassword(password),
      role: 'root',
      created_at: Date.now(),
    });
    return { created, generatedPassword: created && (!rootPassword || generatedElsewhere) ? password : undefined };
  }

  async signIn(username: string, password: string): Promise<SignedIn> {
    const key = username.toLowerCase();
    const now = Date.now();
    const failed = this.failures.get(key);
    if (failed && now - failed.since < FAILURE_WINDOW_MS && failed.count >= MAX_FAILURES) {
      const waitS = Math.ceil((failed.since + FAILURE_WINDOW_MS - now) / 1000);
      throw new PlatformError(429, 'too_many_sign_ins', `Too many failed sign-ins for this name: try again in ${waitS} s`);
    }
    const user = await this.store.byName(username);
    const good = await verifyPassword(password, user?.password_hash ?? (await this.dummyHash));
    if (!user || !good) {
      const f = failed && now - failed.since < FAILURE_WINDOW_MS ? failed : { count: 0, since: now };
      f.count++;
      if (this.failures.size > 10_000) this.failures.clear();
      this.failures.set(key, f);
      throw new PlatformError(401, 'invalid_credentials', 'Wrong username or password');
    }
    this.failures.delete(key);
    const token = `kbs-${randomBytes(24).toString('base64url')}`;
    const expiresAt = now + this.sessionTtlMs;
    await this.store.insertSession(hashKey(token), user.id, expiresAt);
    void this.store.deleteExpiredSessions(now).catch(() => {});
    return { token, csrfToken: csrfTokenOf(token), expiresAt, user: publicUser(user) };
  }

  async signOut(token: string): Promise<void> {
    await this.store.deleteSession(hashKey(token));
  }

  /** The caller a session token stands for, or undefined when it is unknown or expired. */
  async sessionCaller(token: string): Promise<SessionCaller | undefined> {
    const u = await this.store.sessionUser(hashKey(token), Date.now());
    if (!u) return undefined;
    return { keyId: null, teamId: u.team_id, appId: null, user: publicUser(u), csrfToken: csrfTokenOf(token) };
  }

  async members(caller: KeyCaller): Promise<PublicUser[]> {
    return (await this.store.members(caller.teamId)).map(publicUser);
  }

  async addMember(caller: SessionCaller, username: string, password: string): Promise<PublicUser> {
    this.mustBeRoot(caller);
    if (!USERNAME.test(username)) throw errors.badField('username', 'use 1 to 64 letters, digits, ".", "_", "-" or "@"');
    if (password.length < 8) throw errors.badField('password', 'use at least 8 characters');
    const row: UserRow = { id: newId(), team_id: caller.teamId, username, password_hash: await hashPassword(password), role: 'member', created_at: Date.now() };
    if (!(await this.store.insert(row))) throw errors.conflict(`The username "${username}" is taken`);
    return publicUser(row);
  }

  async removeMember(caller: SessionCaller, id: string): Promise<void> {
    this.mustBeRoot(caller);
    if (id === caller.user.id) throw errors.badField('id', 'root cannot remove itself');
    if (!(await this.store.delete(caller.teamId, id))) throw errors.notFound(`Member ${id}`);
  }

  private mustBeRoot(caller: SessionCaller): void {
    if (caller.user.role !== 'root') throw new PlatformError(403, 'forbidden', "Only the team's root user manages its members");
  }
}
