// Annotations: curated question/answer pairs of one application. The
// question's vector is kept with the model that made it, so a restart (or
// another process) matches without embedding them again.
import { sql, type Kysely, type Migration } from 'kysely';

export const annotationMigrations: Record<string, Migration> = {
  '9010_app_annotations': {
    async up(db: Kysely<any>) {
      await db.schema
        .createTable('annotations')
        .addColumn('id', 'varchar(32)', (c) => c.primaryKey())
        .addColumn('team_id', 'varchar(32)', (c) => c.notNull())
        .addColumn('app_id', 'varchar(32)', (c) => c.notNull().references('apps.id').onDelete('cascade'))
        .addColumn('question', 'text', (c) => c.notNull())
        .addColumn('answer', 'text', (c) => c.notNull())
        .addColumn('chat_id', 'varchar(64)')
        .addColumn('data_id', 'varchar(64)')
        .addColumn('vector_model', 'text')
        .addColumn('vector', sql`real[]`)
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .addColumn('updated_at', 'bigint', (c) => c.notNull())
        .execute();
      await db.schema.createIndex('annotations_app_idx').on('annotations').columns(['app_id', 'updated_at']).execute();
      await db.schema.createIndex('annotations_answer_idx').on('annotations').columns(['app_id', 'chat_id', 'data_id']).execute();
    },
  },
};
