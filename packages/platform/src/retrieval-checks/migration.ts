// Saved retrieval checks of a dataset and the runs of them. A run keeps its
// results as JSON: it is read whole (one run, its diff to the one before) and
// never queried inside, and only the last RUNS_KEPT of a dataset are kept.
import { sql, type Kysely, type Migration } from 'kysely';

export const retrievalCheckMigrations: Record<string, Migration> = {
  '6001_retrieval_checks': {
    async up(db: Kysely<any>) {
      await db.schema
        .createTable('retrieval_checks')
        .addColumn('id', 'varchar(32)', (c) => c.primaryKey())
        .addColumn('team_id', 'varchar(32)', (c) => c.notNull())
        .addColumn('dataset_id', 'varchar(32)', (c) => c.notNull().references('datasets.id').onDelete('cascade'))
        .addColumn('question', 'text', (c) => c.notNull())
        // JSON: [{text?, collectionId?, dataId?, label?}]
        .addColumn('expected', 'text', (c) => c.notNull())
        // JSON: searchTest's settings (searchMode, similarity, limit, ...)
        .addColumn('settings', 'text', (c) => c.notNull())
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .addColumn('updated_at', 'bigint', (c) => c.notNull())
        .execute();
      await db.schema.createIndex('retrieval_checks_dataset_idx').on('retrieval_checks').columns(['dataset_id', 'created_at']).execute();
      await db.schema
        .createTable('retrieval_check_runs')
        .addColumn('id', 'varchar(32)', (c) => c.primaryKey())
        .addColumn('team_id', 'varchar(32)', (c) => c.notNull())
        .addColumn('dataset_id', 'varchar(32)', (c) => c.notNull().references('datasets.id').onDelete('cascade'))
        // running | done | interrupted (its process ended first)
        .addColumn('status', 'varchar(16)', (c) => c.notNull())
        .addColumn('total', 'integer', (c) => c.notNull())
        .addColumn('done', 'integer', (c) => c.notNull())
        .addColumn('passed', 'integer', (c) => c.notNull())
        .addColumn('vector_model', 'text', (c) => c.notNull())
        // JSON: {fingerprint, collections, chunks, pending}: the dataset's chunking when the run began
        .addColumn('chunking', 'text', (c) => c.notNull())
        // JSON: one result per check, in the checks' order
        .addColumn('results', 'text', (c) => c.notNull())
        .addColumn('started_at', 'bigint', (c) => c.notNull())
        // Moves after every check: a running run that stops moving was cut off (its process ended).
        .addColumn('updated_at', 'bigint', (c) => c.notNull())
        .addColumn('finished_at', 'bigint')
        .execute();
      await db.schema.createIndex('retrieval_check_runs_dataset_idx').on('retrieval_check_runs').columns(['dataset_id', 'started_at']).execute();
      // One run at a time per dataset, even when two requests start one together.
      await db.schema
        .createIndex('retrieval_check_runs_one_running')
        .on('retrieval_check_runs')
        .column('dataset_id')
        .unique()
        .where(sql.ref('status'), '=', 'running')
        .execute();
    },
  },
};
