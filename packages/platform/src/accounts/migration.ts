// Platform users (members of a team, signing in with a password) and their
// browser sessions. API keys stay as they are; a session is another way to
// be a team's caller.
import { sql, type Kysely, type Migration } from 'kysely';

export const accountMigrations: Record<string, Migration> = {
  '4001_users_and_sessions': {
    async up(db: Kysely<any>) {
      await db.schema
        .createTable('users')
        .addColumn('id', 'varchar(32)', (c) => c.primaryKey())
        .addColumn('team_id', 'varchar(32)', (c) => c.notNull().references('teams.id').onDelete('cascade'))
        .addColumn('username', 'text', (c) => c.notNull())
        .addColumn('password_hash', 'text', (c) => c.notNull())
        .addColumn('role', 'varchar(16)', (c) => c.notNull())
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .execute();
      // One name per person across teams, whatever its case: "Root" is root.
      await sql`create unique index users_username_unique on users (lower(username))`.execute(db);
      await db.schema
        .createTable('sessions')
        .addColumn('id', 'serial', (c) => c.primaryKey())
        .addColumn('token_hash', 'varchar(64)', (c) => c.notNull().unique())
        .addColumn('user_id', 'varchar(32)', (c) => c.notNull().references('users.id').onDelete('cascade'))
        .addColumn('expires_at', 'bigint', (c) => c.notNull())
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .execute();
      await db.schema.createIndex('sessions_user_idx').on('sessions').column('user_id').execute();
    },
  },
};
