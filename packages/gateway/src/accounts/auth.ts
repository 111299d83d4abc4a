// Turns a bearer key into the token and user it belongs to, checking status,
// expiry, IP allow-list and model allow-list. Lookups are cached briefly
// (CHANNEL_REFRESH_MS): the money checks never rely on the cache, they are
// conditional UPDATEs at reservation time (ledger.ts).
import { BlockList, isIP } from 'node:net';
import { errors } from '../errors.js';
import type { TokenRow, UserRow } from '../store/schema.js';
import { hashKey } from './secrets.js';
import type { AccountsStore } from './store.js';

export interface Caller {
  token: TokenRow;
  user: UserRow;
  models: Set<string> | null;
  ipAllow: BlockList | null;
}

/** The price group a caller is charged and routed as: its token's, where the token names one, else its user's. */
export function callerGroup(caller: Caller): string {
  return caller.token.group_name ?? caller.user.group_name;
}

export function parseIpAllow(text: string | null): BlockList | null {
  if (!text || !text.trim()) return null;
  const list = new BlockList();
  for (const raw of text.split(/[\s,]+/)) {
    const entry = raw.trim();
    if (!entry) continue;
    const [addr, bits] = entry.split('/');
    const family = isIP(addr ?? '');
    if (!family) throw errors.badField('ip_allow', `Invalid 'ip_allow': "${entry}" is not an IP address or subnet`);
    const type = family === 6 ? 'ipv6' : 'ipv4';
    if (bits === undefined) list.addAddress(addr!, type);
    else {
      const prefix = Number(bits);
      if (!Number.isInteger(prefix) || prefix < 0 || prefix > (family === 6 ? 128 : 32)) {
        throw errors.badField('ip_allow', `Invalid 'ip_allow': "${entry}" has a bad prefix length`);
      }
      list.addSubnet(addr!, prefix, type);
    }
  }
  return list;
}

export function ipAllowed(list: BlockList, ip: string): boolean {
  const bare = ip.startsWith('::ffff:') ? ip.slice(7) : ip;
  const family = isIP(bare);
  if (!family) return false;
  return list.check(bare, family === 6 ? 'ipv6' : 'ipv4');
}

export class TokenAuthenticator {
  private cache = new Map<string, { caller: Caller | null; at: number }>();

  constructor(
    private readonly store: AccountsStore,
    private readonly ttlMs: number,
  ) {}

  invalidate(): void {
    this.cache.clear();
  }

  private async load(keyHash: string): Promise<Caller | null> {
    const token = await this.store.tokenByHash(keyHash);
    if (!token) return null;
    const user = await this.store.userById(token.user_id);
    if (!user) return null;
    let models: Set<string> | null = null;
    if (token.models) {
      const list = JSON.parse(token.models) as string[];
      if (list.length) models = new Set(list);
    }
    return { token, user, models, ipAllow: parseIpAllow(token.ip_allow) };
  }

  /** The caller behind an Authorization header; throws the matching GatewayError. */
  async authenticate(authorization: string | undefined, ip: string, now = Date.now()): Promise<Caller> {
    const key = bearer(authorization);
    if (!key) throw errors.missingToken();
    // Keyed by the key itself (it is in memory with the request anyway): a
    // cache hit then costs no sha256. Only the hash is ever stored.
    let hit = this.cache.get(key);
    if (!hit || now - hit.at > this.ttlMs) {
      hit = { caller: await this.load(hashKey(key)), at: now };
      if (this.cache.size > 10_000) this.cache.clear();
      this.cache.set(key, hit);
    }
    const caller = hit.caller;
    if (!caller) throw errors.invalidToken();
    if (caller.token.status !== 'enabled') throw errors.tokenDisabled();
    if (caller.token.expires_at !== null && Number(caller.token.expires_at) <= now) throw errors.tokenExpired();
    if (caller.user.status !== 'enabled') throw errors.userDisabled();
    if (caller.ipAllow && !ipAllowed(caller.ipAllow, ip)) throw errors.ipNotAllowed(ip);
    return caller;
  }

  static checkModel(caller: Caller, model: string): void {
    if (caller.models && !caller.models.has(model)) throw errors.modelNotAllowed(model);
  }
}

export function bearer(authorization: string | undefined): string | undefined {
  if (!authorization) return undefined;
  const m = /^Bearer\s+(.+)$/i.exec(authorization.trim());
  return m ? m[1]!.trim() : undefined;
}
