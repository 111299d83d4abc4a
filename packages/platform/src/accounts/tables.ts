// Platform users and their browser sessions (accounts/migration.ts).
import type { Generated } from 'kysely';

export interface UsersTable {
  id: string;
  team_id: string;
  username: string;
  password_hash: string;
  /** root manages the team's members; a member does everything else. */
  role: 'root' | 'member';
  created_at: number;
}

export interface SessionsTable {
  id: Generated<number>;
  token_hash: string;
  user_id: string;
  expires_at: number;
  created_at: number;
}

export interface AccountsTables {
  users: UsersTable;
  sessions: SessionsTable;
}
