// Creating, listing and revoking API keys. A key is returned once, at
// creation; only its sha256 and first characters are stored.
import { errors } from '../http/errors.js';
import { apiKeyRow, newApiKey, type KeyAuthenticator, type KeyCaller } from './auth.js';
import type { ApiKeyRow, KeysStore } from './store.js';

export interface NewKeyInput {
  name: string;
  /** An application key: opens only this app's chat and chat history. */
  appId?: string;
  /** Epoch ms after which the key is refused. */
  expiresAt?: number;
}

export class KeysService {
  constructor(
    private readonly store: KeysStore,
    private readonly auth: KeyAuthenticator,
    /** Whether the caller's team has this app. */
    private readonly appExists: (teamId: string, appId: string) => Promise<boolean>,
  ) {}

  async create(caller: KeyCaller, input: NewKeyInput): Promise<{ key: string; row: ApiKeyRow }> {
    if (input.appId && !(await this.appExists(caller.teamId, input.appId))) throw errors.notFound(`App ${input.appId}`);
    if (input.expiresAt !== undefined && input.expiresAt <= Date.now()) throw errors.badField('expiredTime', 'the expiry time is in the past');
    const key = newApiKey();
    const row = apiKeyRow(key, { teamId: caller.teamId, appId: input.appId ?? null, name: input.name, expiresAt: input.expiresAt ?? null });
    const id = await this.store.insertKey(row);
    return { key, row: { ...row, id, last_used_at: null, revoked_at: null } };
  }

  list(caller: KeyCaller, appId?: string): Promise<ApiKeyRow[]> {
    return this.store.list(caller.teamId, appId);
  }

  async revoke(caller: KeyCaller, id: number): Promise<void> {
    if (!(await this.store.revoke(caller.teamId, id))) throw errors.notFound(`API key ${id}`);
    // This process stops accepting it at once; others within the auth cache's 2 s.
    this.auth.forget();
  }

  async revokeForApp(teamId: string, appId: string): Promise<void> {
    await this.store.revokeForApp(teamId, appId);
    this.auth.forget();
  }
}
