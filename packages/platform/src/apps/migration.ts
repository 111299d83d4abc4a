// Applications, and the chats and chat items stored for them (when a request
// carries a chatId). An app's settings are one validated JSON document: they
// are read whole on every chat and never queried by field.
import type { Kysely, Migration } from 'kysely';

export const appMigrations: Record<string, Migration> = {
  '3001_apps_and_chats': {
    async up(db: Kysely<any>) {
      await db.schema
        .createTable('apps')
        .addColumn('id', 'varchar(32)', (c) => c.primaryKey())
        .addColumn('team_id', 'varchar(32)', (c) => c.notNull().references('teams.id').onDelete('cascade'))
        .addColumn('name', 'text', (c) => c.notNull())
        .addColumn('intro', 'text', (c) => c.notNull().defaultTo(''))
        .addColumn('config', 'text', (c) => c.notNull())
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .addColumn('updated_at', 'bigint', (c) => c.notNull())
        .execute();
      await db.schema.createIndex('apps_team_idx').on('apps').columns(['team_id', 'created_at']).execute();
      await db.schema
        .createTable('chats')
        .addColumn('id', 'serial', (c) => c.primaryKey())
        .addColumn('app_id', 'varchar(32)', (c) => c.notNull().references('apps.id').onDelete('cascade'))
        .addColumn('team_id', 'varchar(32)', (c) => c.notNull())
        // The client's chatId: unique within its application.
        .addColumn('chat_id', 'varchar(64)', (c) => c.notNull())
        .addColumn('title', 'text', (c) => c.notNull())
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .addColumn('updated_at', 'bigint', (c) => c.notNull())
        .addUniqueConstraint('chats_app_chat_unique', ['app_id', 'chat_id'])
        .execute();
      await db.schema.createIndex('chats_app_updated_idx').on('chats').columns(['app_id', 'updated_at']).execute();
      await db.schema
        .createTable('chat_items')
        .addColumn('id', 'serial', (c) => c.primaryKey())
        .addColumn('chat_pk', 'integer', (c) => c.notNull().references('chats.id').onDelete('cascade'))
        // responseChatItemId for answers, or a generated id.
        .addColumn('data_id', 'varchar(64)', (c) => c.notNull())
        .addColumn('role', 'varchar(16)', (c) => c.notNull())
        .addColumn('content', 'text', (c) => c.notNull())
        // The answer's responseData (JSON), kept so a chat can be audited later.
        .addColumn('response_data', 'text')
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .execute();
      await db.schema.createIndex('chat_items_chat_idx').on('chat_items').columns(['chat_pk', 'id']).execute();
    },
  },
};
