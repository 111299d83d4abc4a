// Share links (FastGPT's outLink) and what their visitors leave: each chat is
// owned by one link and one visitor (outLinkUid), or by the team (both null);
// an answer may carry its user's feedback.
import type { Kysely, Migration } from 'kysely';

export const shareMigrations: Record<string, Migration> = {
  '5001_share_links_and_feedback': {
    async up(db: Kysely<any>) {
      await db.schema
        .createTable('out_links')
        .addColumn('id', 'varchar(32)', (c) => c.primaryKey())
        // The public id in /chat/share?shareId=: random, unguessable.
        .addColumn('share_id', 'varchar(64)', (c) => c.notNull().unique())
        .addColumn('team_id', 'varchar(32)', (c) => c.notNull())
        .addColumn('app_id', 'varchar(32)', (c) => c.notNull().references('apps.id').onDelete('cascade'))
        .addColumn('name', 'text', (c) => c.notNull())
        .addColumn('expires_at', 'bigint')
        // Requests per minute per visitor (null: no limit).
        .addColumn('qpm', 'integer')
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .addColumn('last_used_at', 'bigint')
        .execute();
      await db.schema.createIndex('out_links_app_idx').on('out_links').columns(['app_id', 'created_at']).execute();
      await db.schema.alterTable('chats').addColumn('share_id', 'varchar(64)').execute();
      await db.schema.alterTable('chats').addColumn('out_link_uid', 'varchar(128)').execute();
      await db.schema.createIndex('chats_visitor_idx').on('chats').columns(['app_id', 'share_id', 'out_link_uid', 'updated_at']).execute();
      await db.schema.alterTable('chat_items').addColumn('user_good_feedback', 'text').execute();
      await db.schema.alterTable('chat_items').addColumn('user_bad_feedback', 'text').execute();
    },
  },
  // Where a chat was started, for the chat log: 'online' (the web app, signed in), 'api' (an application key)
  // or 'share' (a share link's visitor). Chats from before it are the team's, shown as 'online' as before.
  '5002_chat_source': {
    async up(db: Kysely<any>) {
      await db.schema
        .alterTable('chats')
        .addColumn('source', 'varchar(16)', (c) => c.notNull().defaultTo('online'))
        .execute();
      await db.updateTable('chats').set({ source: 'share' }).where('share_id', 'is not', null).execute();
    },
  },
  // A link's further limits (a total QPM, the cost it may spend and what it
  // has spent), the operator's hook that says who may chat, and the sites that
  // may embed its page (JSON array; empty: any).
  '9011_share_link_limits': {
    async up(db: Kysely<any>) {
      await db.schema.alterTable('out_links').addColumn('link_qpm', 'integer').execute();
      await db.schema.alterTable('out_links').addColumn('max_usage_points', 'double precision').execute();
      await db.schema
        .alterTable('out_links')
        .addColumn('used_points', 'double precision', (c) => c.notNull().defaultTo(0))
        .execute();
      await db.schema.alterTable('out_links').addColumn('hook_url', 'text').execute();
      await db.schema
        .alterTable('out_links')
        .addColumn('allowed_origins', 'text', (c) => c.notNull().defaultTo('[]'))
        .execute();
    },
  },
};
