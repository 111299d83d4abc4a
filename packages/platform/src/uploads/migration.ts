// Uploads: one row per file sent to a dataset, by tus (resumable) or in one
// multipart request. While unfinished it says whose bytes are on disk and
// until when; once imported it is the file's content identity (sha256) and
// the collection it became, so the same content is not imported twice.
import { sql, type Kysely, type Migration } from 'kysely';

export const uploadMigrations: Record<string, Migration> = {
  '8001_uploads': {
    async up(db: Kysely<any>) {
      await db.schema
        .createTable('uploads')
        .addColumn('id', 'varchar(32)', (c) => c.primaryKey())
        .addColumn('team_id', 'varchar(32)', (c) => c.notNull())
        .addColumn('dataset_id', 'varchar(32)', (c) => c.notNull().references('datasets.id').onDelete('cascade'))
        .addColumn('file_name', 'text', (c) => c.notNull())
        .addColumn('file_type', 'text')
        .addColumn('size', 'bigint', (c) => c.notNull())
        // Declared by the client, then the server's own over the bytes it received.
        .addColumn('sha256', 'varchar(64)')
        .addColumn('idempotency_key', 'varchar(128)')
        // Set once imported; the row goes with its collection, so deleted content can be imported again.
        .addColumn('collection_id', 'varchar(32)', (c) => c.references('collections.id').onDelete('cascade'))
        // True when the collection was an earlier import of the same content (nothing new was made).
        .addColumn('reused', 'boolean', (c) => c.notNull().defaultTo(false))
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        // Unfinished uploads only: their bytes are removed after this.
        .addColumn('expires_at', 'bigint')
        .execute();
      await db.schema.createIndex('uploads_team_dataset_idx').on('uploads').columns(['team_id', 'dataset_id', 'created_at']).execute();
      await db.schema.createIndex('uploads_content_idx').on('uploads').columns(['dataset_id', 'sha256']).execute();
      await sql`create unique index uploads_idempotency_idx on uploads (team_id, idempotency_key) where idempotency_key is not null`.execute(db);
    },
  },
  // Named after every migration already run anywhere (9003): the migrator refuses one that sorts before them.
  '9004_upload_estimates': {
    async up(db: Kysely<any>) {
      // A finished upload's last estimate and the settings it was made with (JSON): what the user was asked, asked again after a reload.
      await db.schema.alterTable('uploads').addColumn('estimate', 'text').execute();
    },
  },
};
