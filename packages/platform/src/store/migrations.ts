// Platform schema migrations, run at every start. PostgreSQL only (PGlite
// embedded, or a server with the pgvector extension).
import { Migrator, sql, type Kysely, type Migration } from 'kysely';

const migrations: Record<string, Migration> = {
  '0001_initial': {
    async up(db: Kysely<any>) {
      await sql`create extension if not exists vector`.execute(db);
      await db.schema
        .createTable('teams')
        .addColumn('id', 'varchar(32)', (c) => c.primaryKey())
        .addColumn('name', 'text', (c) => c.notNull())
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .execute();
      await db.schema
        .createTable('api_keys')
        .addColumn('id', 'serial', (c) => c.primaryKey())
        .addColumn('team_id', 'varchar(32)', (c) => c.notNull().references('teams.id').onDelete('cascade'))
        .addColumn('app_id', 'varchar(32)')
        .addColumn('name', 'text', (c) => c.notNull())
        .addColumn('key_hash', 'varchar(64)', (c) => c.notNull().unique())
        .addColumn('key_prefix', 'varchar(16)', (c) => c.notNull())
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .addColumn('expires_at', 'bigint')
        .addColumn('revoked_at', 'bigint')
        .addColumn('last_used_at', 'bigint')
        .execute();
      await db.schema
        .createTable('datasets')
        .addColumn('id', 'varchar(32)', (c) => c.primaryKey())
        .addColumn('team_id', 'varchar(32)', (c) => c.notNull().references('teams.id').onDelete('cascade'))
        .addColumn('name', 'text', (c) => c.notNull())
        .addColumn('intro', 'text', (c) => c.notNull().defaultTo(''))
        .addColumn('vector_model', 'text', (c) => c.notNull())
        .addColumn('vector_dimensions', 'integer')
        .addColumn('agent_model', 'text')
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .addColumn('updated_at', 'bigint', (c) => c.notNull())
        .execute();
      await db.schema.createIndex('datasets_team_idx').on('datasets').column('team_id').execute();
      await db.schema
        .createTable('collections')
        .addColumn('id', 'varchar(32)', (c) => c.primaryKey())
        .addColumn('dataset_id', 'varchar(32)', (c) => c.notNull().references('datasets.id').onDelete('cascade'))
        .addColumn('team_id', 'varchar(32)', (c) => c.notNull())
        .addColumn('name', 'text', (c) => c.notNull())
        .addColumn('type', 'varchar(16)', (c) => c.notNull())
        .addColumn('source', 'text')
        .addColumn('training_type', 'varchar(16)', (c) => c.notNull())
        .addColumn('chunk_size', 'integer', (c) => c.notNull())
        .addColumn('chunk_splitter', 'text')
        .addColumn('qa_prompt', 'text')
        .addColumn('metadata', 'text', (c) => c.notNull().defaultTo('{}'))
        .addColumn('raw_text', 'text')
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .addColumn('updated_at', 'bigint', (c) => c.notNull())
        .execute();
      await db.schema.createIndex('collections_dataset_idx').on('collections').columns(['dataset_id', 'created_at']).execute();
      await db.schema
        .createTable('data')
        .addColumn('id', 'varchar(32)', (c) => c.primaryKey())
        .addColumn('dataset_id', 'varchar(32)', (c) => c.notNull().references('datasets.id').onDelete('cascade'))
        .addColumn('collection_id', 'varchar(32)', (c) => c.notNull().references('collections.id').onDelete('cascade'))
        .addColumn('team_id', 'varchar(32)', (c) => c.notNull())
        .addColumn('q', 'text', (c) => c.notNull())
        .addColumn('a', 'text', (c) => c.notNull().defaultTo(''))
        .addColumn('chunk_index', 'integer', (c) => c.notNull())
        .addColumn('title_path', 'text', (c) => c.notNull().defaultTo('[]'))
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .addColumn('updated_at', 'bigint', (c) => c.notNull())
        .execute();
      await db.schema.createIndex('data_collection_idx').on('data').columns(['collection_id', 'chunk_index']).execute();
      await db.schema.createIndex('data_dataset_idx').on('data').column('dataset_id').execute();
      await db.schema
        .createTable('data_indexes')
        .addColumn('id', 'serial', (c) => c.primaryKey())
        .addColumn('data_id', 'varchar(32)', (c) => c.notNull().references('data.id').onDelete('cascade'))
        .addColumn('dataset_id', 'varchar(32)', (c) => c.notNull())
        .addColumn('text', 'text', (c) => c.notNull())
        .addColumn('is_default', 'boolean', (c) => c.notNull())
        .execute();
      await db.schema.createIndex('data_indexes_data_idx').on('data_indexes').column('data_id').execute();
    },
  },
  // Where in its document a chunk stands (a PDF's pages), for citations; named after every
  // migration already run anywhere (9004): the migrator refuses one that sorts before them.
  '9005_data_pages': {
    async up(db: Kysely<any>) {
      await db.schema.alterTable('data').addColumn('page_start', 'integer').execute();
      await db.schema.alterTable('data').addColumn('page_end', 'integer').execute();
    },
  },
  // Which rows of a spreadsheet or CSV file a chunk holds, for citations (row-locator.ts),
  // read by retrieval as the pages are. Named after every migration already run anywhere (9007).
  '9008_data_rows': {
    async up(db: Kysely<any>) {
      await db.schema.alterTable('data').addColumn('row_start', 'integer').execute();
      await db.schema.alterTable('data').addColumn('row_end', 'integer').execute();
    },
  },
};

/** Migrations of other modules (retrieval's search tables), run after the platform's own. */
export type ExtraMigrations = Record<string, Migration>;

export async function migratePlatform(db: Kysely<any>, extra: ExtraMigrations = {}): Promise<void> {
  const migrator = new Migrator({
    db,
    provider: { getMigrations: async () => ({ ...migrations, ...extra }) },
    migrationTableName: 'kbchat_platform_migrations',
    migrationLockTableName: 'kbchat_platform_migrations_lock',
  });
  const { error, results } = await migrator.migrateToLatest();
  const failed = results?.find((r) => r.status === 'Error');
  if (error || failed) {
    const message = (error as Error)?.message ?? String(error);
    if (/extension "vector"|vector\.control/i.test(message)) {
      throw new Error(
        'the platform store needs the pgvector extension: install it on the PostgreSQL server (package postgresql-<version>-pgvector) or use the embedded store',
      );
    }
    throw new Error(`platform store migration ${failed?.migrationName ?? ''} failed: ${message}`);
  }
}

/** The migrations (the platform's and `extra`) the store has not run: readiness (/readyz) names them. */
export async function pendingMigrations(db: Kysely<any>, extra: ExtraMigrations = {}): Promise<string[]> {
  const rows = await db.selectFrom('kbchat_platform_migrations').select('name').execute();
  const done = new Set(rows.map((r: { name: string }) => r.name));
  return Object.keys({ ...migrations, ...extra }).filter((name) => !done.has(name));
}
