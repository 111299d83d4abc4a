// Long work on one collection, in steps that each commit: a large import
// (its chunks written a batch a statement) or a delete (its data removed a
// batch a statement). The row says how far it got, for the progress the web
// app shows, and whose it is while its heartbeat is fresh: a process that
// died leaves a stale row, and whoever finds it finishes the delete (an
// import cut short is deleted, as if its one statement had failed).
import { sql, type Kysely, type Migration } from 'kysely';

export const datasetMigrations: Record<string, Migration> = {
  // Named after every migration already run anywhere (9001): the migrator refuses one that sorts before them.
  '9002_collection_jobs': {
    async up(db: Kysely<any>) {
      await db.schema
        .createTable('collection_jobs')
        .addColumn('collection_id', 'varchar(32)', (c) => c.primaryKey().references('collections.id').onDelete('cascade'))
        .addColumn('team_id', 'varchar(32)', (c) => c.notNull())
        .addColumn('dataset_id', 'varchar(32)', (c) => c.notNull())
        // import | delete
        .addColumn('kind', 'varchar(8)', (c) => c.notNull())
        // Chunks written (import) or removed (delete) so far, of total.
        .addColumn('done', 'integer', (c) => c.notNull().defaultTo(0))
        .addColumn('total', 'integer', (c) => c.notNull())
        .addColumn('owner', 'varchar(64)', (c) => c.notNull())
        .addColumn('heartbeat_at', 'bigint', (c) => c.notNull())
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .execute();
      await sql`create index collection_jobs_dataset_idx on collection_jobs (dataset_id)`.execute(db);
    },
  },
  // Scans read with OCR (ingest/ocr/): a dataset may turn it off; a collection keeps each
  // page's confidence, and why its file could not be read when reading it failed after the
  // upload was answered. Named after every migration already run anywhere (9005).
  '9006_ocr': {
    async up(db: Kysely<any>) {
      await db.schema
        .alterTable('datasets')
        .addColumn('ocr', 'boolean', (c) => c.notNull().defaultTo(true))
        .execute();
      await db.schema.alterTable('collections').addColumn('read_error', 'text').execute();
      await db.schema.alterTable('collections').addColumn('ocr_pages', 'text').execute();
      // A job's kind: import | delete | ocr (varchar(8) fits them).
    },
  },
  // Links synced again (link-sync.ts): a chunk the page no longer has is superseded (still
  // searchable) until the new chunks are indexed, then removed; a link collection may be
  // synced daily or weekly. Named after every migration already run anywhere (9006).
  '9007_link_sync': {
    async up(db: Kysely<any>) {
      await db.schema.alterTable('data').addColumn('superseded_at', 'bigint').execute();
      await sql`create index data_superseded_idx on data (collection_id) where superseded_at is not null`.execute(db);
      // off | daily | weekly
      await db.schema
        .alterTable('collections')
        .addColumn('sync_schedule', 'varchar(8)', (c) => c.notNull().defaultTo('off'))
        .execute();
      await db.schema.alterTable('collections').addColumn('synced_at', 'bigint').execute();
    },
  },
};
