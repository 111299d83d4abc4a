// Users and tokens as the admin API and start-up see them: validation of
// admin input, root bootstrap, key generation. Knows no HTTP.
import type { GatewayUser as PublicUser, GatewayToken as PublicToken } from '@kbchat/contracts';
import { randomSecret } from '@kbchat/shared';
import { errors } from '../errors.js';
import { isUniqueViolation } from '../store/db.js';
import type { TokenRow, UserRow } from '../store/schema.js';
import { parseIpAllow } from './auth.js';
import type { GroupBook } from './groups.js';
import type { BalanceLedger } from './ledger.js';
import { MICROS, unitsToMicros } from './pricing.js';
import { hashKey, hashPassword, keyHint, shownKeyHint, verifyPassword } from './secrets.js';
import type { AccountsStore, TokenPatch } from './store.js';

export type { PublicUser, PublicToken };

/** A user as the admin API shows it; `leased` is what gateway processes hold on the balance. */
export function publicUser(u: UserRow, leased = 0): PublicUser {
  const balance = Number(u.balance) + leased;
  return {
    id: u.id,
    username: u.username,
    role: u.role,
    status: u.status,
    group: u.group_name,
    balance: balance / MICROS,
    balance_micros: balance,
    leased_micros: leased,
    used_micros: Number(u.used),
    request_count: Number(u.request_count),
    created_at: Number(u.created_at),
  };
}

/** A token as the admin API shows it; `leased` is what gateway processes hold on its limit (not used yet). */
export function publicToken(t: TokenRow, leased = 0, platformTokenHash?: string): PublicToken {
  return {
    id: t.id,
    user_id: t.user_id,
    name: t.name,
    key_hint: shownKeyHint(t.key_hint),
    status: t.status,
    expires_at: t.expires_at === null ? null : Number(t.expires_at),
    quota_limit_micros: t.quota_limit === null ? null : Number(t.quota_limit),
    quota_used_micros: Number(t.quota_used) - leased,
    models: t.models ? (JSON.parse(t.models) as string[]) : [],
    ip_allow: t.ip_allow,
    group: t.group_name,
    created_at: Number(t.created_at),
    last_used_at: t.last_used_at === null ? null : Number(t.last_used_at),
    platform: platformTokenHash !== undefined && t.key_hash === platformTokenHash,
  };
}

export interface TokenInput {
  name?: string;
  status?: 'enabled' | 'disabled';
  expires_at?: number | null;
  quota_limit_micros?: number | null;
  models?: string[];
  ip_allow?: string | null;
  /** The token's own group; null: its user's. */
  group?: string | null;
}

export class AccountsService {
  /** The hash of the token the platform uses here, when the gateway is told it (GatewayConfig.platformToken). */
  private readonly platformTokenHash?: string;

  constructor(
    private readonly store: AccountsStore,
    private readonly ledger: BalanceLedger,
    private readonly groups: GroupBook,
    platformToken?: string,
  ) {
    this.platformTokenHash = platformToken ? hashKey(platformToken) : undefined;
  }

  /** A 400 naming `field` unless the group exists: users and tokens are only put in groups that do. */
  private async assertGroup(field: string, name: string | null | undefined): Promise<void> {
    if (name === null || name === undefined) return;
    if (!(await this.groups.exists(name))) throw errors.badField(field, `Invalid '${field}': there is no group named ${name} (add it on /api/groups first)`);
  }

  /** Users as the admin API shows them, with the leases held on their balances. */
  async publicUsers(rows: UserRow[]): Promise<PublicUser[]> {
    const leased = await this.ledger.leasedOn(
      'user',
      rows.map((u) => u.id),
    );
    return rows.map((u) => publicUser(u, leased.get(u.id)));
  }

  async publicTokens(rows: TokenRow[]): Promise<PublicToken[]> {
    const leased = await this.ledger.leasedOn(
      'token',
      rows.filter((t) => t.quota_limit !== null).map((t) => t.id),
    );
    return rows.map((t) => publicToken(t, leased.get(t.id), this.platformTokenHash));
  }

  /** First start: creates root. Returns the generated password when one was made (print it once). */
  async ensureRoot(opts: {
    rootPassword?: string;
    rootPasswordGenerated?: boolean;
    initialBalanceUnits: number;
    initialRootToken?: string;
  }): Promise<{ generatedPassword?: string }> {
    let generatedPassword: string | undefined;
    let root = await this.store.userByName('root');
    if (!root) {
      const password = opts.rootPassword ?? randomSecret('', 12);
      try {
        await this.store.insertUser({
          username: 'root',
          password_hash: await hashPassword(password),
          role: 'root',
          group_name: 'default',
          // unitsToMicros rounds: 8.2 * 1e6 is 8199999.999999999 in floating point, which no bigint column takes.
          balance: unitsToMicros(opts.initialBalanceUnits),
        });
        if (!opts.rootPassword || opts.rootPasswordGenerated) generatedPassword = password;
      } catch (err) {
        // Several processes starting at once on a fresh database: one of them creates root.
        if (!isUniqueViolation(err)) throw err;
      }
      root = await this.store.userByName('root');
    }
    if (opts.initialRootToken && root) {
      const existing = await this.store.tokenByHash(hashKey(opts.initialRootToken));
      if (!existing) {
        await this.insertToken(root.id, opts.initialRootToken, { name: 'kbchat platform' }).catch((err) => {
          if (!isUniqueViolation(err)) throw err;
        });
      }
    }
    return { generatedPassword };
  }

  async login(username: string, password: string): Promise<UserRow> {
    const user = await this.store.userByName(username);
    if (!user || !(await verifyPassword(password, user.password_hash))) throw errors.unauthorized('Wrong username or password');
    if (user.status !== 'enabled') throw errors.userDisabled();
    return user;
  }

  async createUser(input: { username: string; password: string; role?: 'admin' | 'user'; group?: string; balance_micros?: number }): Promise<UserRow> {
    if (await this.store.userByName(input.username)) throw errors.conflict(`A user named ${input.username} already exists`);
    await this.assertGroup('group', input.group);
    const id = await this.store.insertUser({
      username: input.username,
      password_hash: await hashPassword(input.password),
      role: input.role ?? 'user',
      group_name: input.group ?? 'default',
      balance: input.balance_micros ?? 0,
    });
    return (await this.store.userById(id))!;
  }

  /**
   * Edits a user. The balance counts the leases gateway processes hold on it
   * as the user's (they come back unless spent), so both ways of changing it
   * mean what they say on every process at once:
   *
   * - `balance_micros` sets what the user has;
   * - `balance_delta_micros` adds to it (negative takes away, but never below
   *   zero, nor deeper into a debt the user already has).
   *
   * A balance can be below zero: costs beyond a request's reservation are
   * always charged (ledger.ts). To cut a user off at once, disable the user
   * (this process at once, others at their next auth refresh).
   */
  async updateUser(
    id: number,
    input: {
      status?: 'enabled' | 'disabled';
      role?: 'admin' | 'user';
      group?: string;
      password?: string;
      balance_micros?: number;
      balance_delta_micros?: number;
    },
  ): Promise<UserRow> {
    if (input.balance_micros !== undefined && input.balance_delta_micros !== undefined) {
      throw errors.badField('balance_delta', `Invalid 'balance_delta': give either balance or balance_delta, not both`);
    }
    const user = await this.store.userById(id);
    if (!user) throw errors.notFound(`User ${id}`);
    if (user.role === 'root' && (input.role || input.status === 'disabled')) throw errors.forbidden('The root user cannot be demoted or disabled');
    await this.assertGroup('group', input.group);
    await this.store.updateUser(id, {
      ...(input.status ? { status: input.status } : {}),
      ...(input.role ? { role: input.role } : {}),
      ...(input.group ? { group_name: input.group } : {}),
      ...(input.password ? { password_hash: await hashPassword(input.password) } : {}),
    });
    // A new password (or a disabled account) ends every open session.
    if (input.password || input.status === 'disabled') await this.store.deleteSessionsOf(id);
    if (input.balance_micros !== undefined) await this.ledger.changeBalance(id, { set: input.balance_micros });
    if (input.balance_delta_micros !== undefined && input.balance_delta_micros !== 0) {
      await this.ledger.changeBalance(id, { delta: input.balance_delta_micros });
    }
    return (await this.store.userById(id))!;
  }

  async deleteUser(id: number): Promise<void> {
    const user = await this.store.userById(id);
    if (!user) throw errors.notFound(`User ${id}`);
    if (user.role === 'root') throw errors.forbidden('The root user cannot be deleted');
    await this.store.deleteUser(id);
  }

  /** Creates a token; the returned key is the only time it is ever shown. */
  async createToken(userId: number, input: TokenInput): Promise<{ token: TokenRow; key: string }> {
    if (!(await this.store.userById(userId))) throw errors.notFound(`User ${userId}`);
    const key = randomSecret('sk-', 36);
    const token = await this.insertToken(userId, key, input);
    return { token, key };
  }

  private async insertToken(userId: number, key: string, input: TokenInput): Promise<TokenRow> {
    parseIpAllow(input.ip_allow ?? null); // validates, names the field
    await this.assertGroup('group', input.group);
    const id = await this.store.insertToken({
      user_id: userId,
      name: input.name ?? 'token',
      key_hash: hashKey(key),
      key_hint: keyHint(key),
      status: input.status ?? 'enabled',
      expires_at: input.expires_at ?? null,
      quota_limit: input.quota_limit_micros ?? null,
      models: input.models?.length ? JSON.stringify(input.models) : null,
      ip_allow: input.ip_allow?.trim() ? input.ip_allow.trim() : null,
      group_name: input.group ?? null,
    });
    return (await this.store.tokenById(id))!;
  }

  async updateToken(id: number, input: TokenInput): Promise<TokenRow> {
    if (!(await this.store.tokenById(id))) throw errors.notFound(`Token ${id}`);
    if (input.ip_allow !== undefined) parseIpAllow(input.ip_allow);
    await this.assertGroup('group', input.group);
    const patch: TokenPatch = {};
    if (input.name !== undefined) patch.name = input.name;
    if (input.status !== undefined) patch.status = input.status;
    if (input.expires_at !== undefined) patch.expires_at = input.expires_at;
    if (input.quota_limit_micros !== undefined) patch.quota_limit = input.quota_limit_micros;
    if (input.models !== undefined) patch.models = input.models.length ? JSON.stringify(input.models) : null;
    if (input.ip_allow !== undefined) patch.ip_allow = input.ip_allow?.trim() ? input.ip_allow.trim() : null;
    if (input.group !== undefined) patch.group_name = input.group;
    await this.store.updateToken(id, patch);
    return (await this.store.tokenById(id))!;
  }
}
