// Teams and their API keys (the platform's first tables, store/migrations.ts).
// Times are epoch milliseconds in bigint columns, read as numbers (see
// store/database.ts).
import type { Generated } from 'kysely';

export interface TeamsTable {
  id: string;
  name: string;
  created_at: number;
}

export interface ApiKeysTable {
  id: Generated<number>;
  team_id: string;
  /** Set for an application key: it opens only that application's chat. */
  app_id: string | null;
  name: string;
  /** sha256 of the key; the key itself is shown once and never stored. */
  key_hash: string;
  /** The first characters, so that a user can tell keys apart. */
  key_prefix: string;
  created_at: number;
  expires_at: number | null;
  revoked_at: number | null;
  last_used_at: number | null;
}

export interface KeysTables {
  teams: TeamsTable;
  api_keys: ApiKeysTable;
}
