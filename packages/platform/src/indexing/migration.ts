// The indexing queue's table. Items are durable: a restart (or kill -9) finds
// every one still there, either claimable or, once done, deleted together
// with the writes of the batch that did it.
import { sql, type Kysely, type Migration } from 'kysely';

export const indexingMigrations: Record<string, Migration> = {
  '2001_indexing_queue': {
    async up(db: Kysely<any>) {
      await db.schema
        .createTable('training_queue')
        .addColumn('id', 'serial', (c) => c.primaryKey())
        .addColumn('team_id', 'varchar(32)', (c) => c.notNull())
        .addColumn('dataset_id', 'varchar(32)', (c) => c.notNull().references('datasets.id').onDelete('cascade'))
        .addColumn('collection_id', 'varchar(32)', (c) => c.notNull().references('collections.id').onDelete('cascade'))
        // chunk items point at a data row; a deleted data row takes its item with it.
        .addColumn('data_id', 'varchar(32)', (c) => c.references('data.id').onDelete('cascade'))
        .addColumn('mode', 'varchar(8)', (c) => c.notNull())
        // qa items carry their source chunk: {"text","chunkIndex"} (there is no data row yet).
        .addColumn('payload', 'text')
        // queued | leased | failed; done items are deleted.
        .addColumn('status', 'varchar(8)', (c) => c.notNull().defaultTo('queued'))
        .addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(0))
        .addColumn('lease_owner', 'varchar(64)')
        .addColumn('lease_until', 'bigint')
        .addColumn('next_attempt_at', 'bigint', (c) => c.notNull())
        .addColumn('error', 'text')
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .addColumn('updated_at', 'bigint', (c) => c.notNull())
        .execute();
      // Claiming: due queued items in id order, and expired leases.
      await sql`create index training_queue_due_idx on training_queue (next_attempt_at, id) where status = 'queued'`.execute(db);
      await sql`create index training_queue_lease_idx on training_queue (lease_until) where status = 'leased'`.execute(db);
      // Progress per collection (and per dataset through the collection's rows).
      await db.schema.createIndex('training_queue_collection_idx').on('training_queue').columns(['collection_id', 'status']).execute();
      await db.schema.createIndex('training_queue_dataset_idx').on('training_queue').column('dataset_id').execute();
      await db.schema.createIndex('training_queue_data_idx').on('training_queue').column('data_id').execute();
    },
  },
  // Why an item waits or failed, kept when it happens (the error object is gone by the time
  // anyone reads the list), and the attempt limit of the worker that counted its attempts.
  // Named after every migration already run anywhere (5002): the migrator refuses one that sorts before them.
  '7001_training_queue_reason': {
    async up(db: Kysely<any>) {
      await db.schema.alterTable('training_queue').addColumn('reason', 'varchar(16)').execute();
      await db.schema.alterTable('training_queue').addColumn('max_attempts', 'integer').execute();
      // Items written before this: the texts the worker wrote for a wait are known exactly.
      await sql`update training_queue set reason = case
          when error in ('no vector model configured', 'no QA model configured') then 'model_missing'
          when error like 'rate limited, waiting %' then 'rate_limited'
          else 'other' end
        where error is not null`.execute(db);
    },
  },
  // How fast each worker indexed with each model lately (rate-store.ts): what
  // an import's estimate and the time left of a collection are computed from.
  '9003_indexing_rates': {
    async up(db: Kysely<any>) {
      await db.schema
        .createTable('indexing_rates')
        .addColumn('model', 'text', (c) => c.notNull())
        .addColumn('mode', 'varchar(8)', (c) => c.notNull())
        // A worker's id, or 'probe': a timed call made for an estimate before anything was measured.
        .addColumn('worker_id', 'varchar(64)', (c) => c.notNull())
        .addColumn('items_per_second', 'float8', (c) => c.notNull())
        .addColumn('items', 'integer', (c) => c.notNull())
        .addColumn('busy_ms', 'bigint', (c) => c.notNull())
        .addColumn('measured_at', 'bigint', (c) => c.notNull())
        .addPrimaryKeyConstraint('indexing_rates_pk', ['model', 'mode', 'worker_id'])
        .execute();
    },
  },
};
