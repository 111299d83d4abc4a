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
  // A turn is stored when its question arrives, its answer as 'running' until
  // it ends (done, stopped or failed): a question is never lost to a client
  // that leaves. updated_at is the running answer's heartbeat (a process that
  // died leaves one that stops beating); error is the failure as JSON.
  '9001_chat_item_status': {
    async up(db: Kysely<any>) {
      await db.schema
        .alterTable('chat_items')
        .addColumn('status', 'varchar(16)', (c) => c.notNull().defaultTo('done'))
        .execute();
      await db.schema.alterTable('chat_items').addColumn('error', 'text').execute();
      await db.schema.alterTable('chat_items').addColumn('updated_at', 'bigint').execute();
    },
  },
  // What the chat log's figures and export read of an answer, written when
  // it ends: the annotation that gave it, the quotes it cited, the time to its
  // first text, its tokens and model, and the gateway's cost (filled in once
  // the gateway's log has it; null where it cannot be read).
  '9009_chat_item_figures': {
    async up(db: Kysely<any>) {
      for (const [name, type] of [
        ['annotation_id', 'varchar(32)'],
        ['quote_count', 'integer'],
        ['ttft_ms', 'integer'],
        ['tokens', 'integer'],
        ['model', 'text'],
        ['cost', 'double precision'],
      ] as const) {
        await db.schema.alterTable('chat_items').addColumn(name, type).execute();
      }
      await db.schema.createIndex('chat_items_annotation_idx').on('chat_items').column('annotation_id').execute();
    },
  },
};
