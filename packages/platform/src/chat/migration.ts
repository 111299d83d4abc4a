// The chat's own columns added after the chats table (apps/migration.ts made it).
import type { Kysely, Migration } from 'kysely';

export const chatMigrations: Record<string, Migration> = {
  // The variables a chat was answered with (JSON): FastGPT keeps them on the
  // chat, so that a reopened chat (or a turn that sends none) still has them.
  '5003_chat_variables': {
    async up(db: Kysely<any>) {
      await db.schema.alterTable('chats').addColumn('variables', 'text').execute();
    },
  },
};
