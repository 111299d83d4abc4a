// API keys: general keys belong to a team; application keys also carry one
// application id and open only that application's chat. Keys are shown once
// and stored as sha256 hashes.
import { createHash, randomBytes } from 'node:crypto';
import { errors } from '../http/errors.js';
import type { ApiKeyRow, KeysStore } from './store.js';

export interface KeyCaller {
  /** The API key, or null for a signed-in session. */
  keyId: number | null;
  teamId: string;
  /** Set for an application key. */
  appId: string | null;
}

export function hashKey(key: string): string {
  return createHash('sha256').update(key).digest('hex');
}

export function newId(): string {
  return randomBytes(12).toString('hex');
}

export function newApiKey(): string {
  return `kbchat-${randomBytes(24).toString('base64url')}`;
}

/** The row stored for a key: its sha256 and first characters, never the key itself. */
export function apiKeyRow(
  key: string,
  opts: { teamId: string; appId: string | null; name: string; expiresAt: number | null },
): Omit<ApiKeyRow, 'id' | 'last_used_at' | 'revoked_at'> {
  return {
    team_id: opts.teamId,
    app_id: opts.appId,
    name: opts.name,
    key_hash: hashKey(key),
    key_prefix: key.slice(0, 12),
    created_at: Date.now(),
    expires_at: opts.expiresAt,
  };
}

/** lastUsedTime is kept to this precision: a busy key costs one write a minute, not one a request. */
export const KEY_USE_PRECISION_MS = 60_000;

export class KeyAuthenticator {
  /** Recently seen keys, so that a busy client does not cost a query per request. */
  private cache = new Map<string, { row: ApiKeyRow | undefined; at: number }>();
  /** key id -> when this process last recorded a use */
  private recordedUse = new Map<number, number>();

  constructor(
    private readonly store: KeysStore,
    private readonly cacheMs = 2_000,
  ) {}

  async authenticate(header: string | undefined): Promise<KeyCaller> {
    const m = header ? /^Bearer\s+(\S+)\s*$/i.exec(header) : null;
    if (!m) throw errors.missingKey();
    const hash = hashKey(m[1]!);
    const now = Date.now();
    let hit = this.cache.get(hash);
    if (!hit || now - hit.at > this.cacheMs) {
      hit = { row: await this.store.byHash(hash), at: now };
      if (this.cache.size > 10_000) this.cache.clear();
      this.cache.set(hash, hit);
    }
    const row = hit.row;
    if (!row || row.revoked_at !== null || (row.expires_at !== null && row.expires_at <= now)) throw errors.invalidKey();
    this.recordUse(row.id, now);
    return { keyId: row.id, teamId: row.team_id, appId: row.app_id };
  }

  /** Off the request's path: a use that fails to be recorded costs the request nothing. */
  private recordUse(id: number, now: number): void {
    if (now - (this.recordedUse.get(id) ?? 0) < KEY_USE_PRECISION_MS) return;
    if (this.recordedUse.size > 10_000) this.recordedUse.clear();
    this.recordedUse.set(id, now);
    this.store.touch(id, now, KEY_USE_PRECISION_MS).catch(() => this.recordedUse.delete(id));
  }

  /** Dataset and management endpoints take general keys only. */
  async general(header: string | undefined): Promise<KeyCaller> {
    const caller = await this.authenticate(header);
    if (caller.appId) throw errors.appKeyNotAllowed();
    return caller;
  }

  forget(): void {
    this.cache.clear();
  }
}

/**
 * First start: the root team, and the INITIAL_API_KEY as its general key
 * (idempotent: the same key again changes nothing).
 */
export async function ensureRootTeam(store: KeysStore, initialApiKey: string | undefined): Promise<{ teamId: string; notes: string[] }> {
  const notes: string[] = [];
  let team = await store.firstTeam();
  if (!team) {
    await store.insertTeam(newId(), 'root');
    team = (await store.firstTeam())!;
    notes.push(`root team created (${team.id})`);
  }
  if (initialApiKey) {
    const hash = hashKey(initialApiKey);
    const existing = await store.byHash(hash);
    if (!existing) {
      await store.insertKey(apiKeyRow(initialApiKey, { teamId: team.id, appId: null, name: 'initial key (INITIAL_API_KEY)', expiresAt: null }));
      notes.push('INITIAL_API_KEY: general key created for the root team');
    }
  }
  return { teamId: team.id, notes };
}
