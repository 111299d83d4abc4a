// Retrieval's own tables, merged into the platform's migrations:
//  - BM25 postings: search_terms (one row per term per data item, with the
//    item's length so that scoring needs no second lookup), search_docs (one
//    row per indexed item) and search_stats (document count and total length
//    per dataset, kept by statement triggers so that cascaded deletes of data,
//    collections or datasets keep them right too).
//  - Vectors: one table per dimension, vectors_<dims>, made on demand by
//    ensureVectorTable (store.ts), so any model's dimension fits unpadded.
import { sql, type Kysely, type Migration } from 'kysely';

export const retrievalMigrations: Record<string, Migration> = {
  '1001_retrieval_fulltext': {
    async up(db: Kysely<any>) {
      await db.schema
        .createTable('search_docs')
        .addColumn('data_id', 'varchar(32)', (c) => c.primaryKey().references('data.id').onDelete('cascade'))
        .addColumn('dataset_id', 'varchar(32)', (c) => c.notNull())
        .addColumn('length', 'integer', (c) => c.notNull())
        .execute();
      await db.schema
        .createTable('search_terms')
        .addColumn('dataset_id', 'varchar(32)', (c) => c.notNull())
        .addColumn('term', 'text', (c) => c.notNull())
        .addColumn('data_id', 'varchar(32)', (c) => c.notNull())
        .addColumn('tf', 'integer', (c) => c.notNull())
        .addColumn('doc_length', 'integer', (c) => c.notNull())
        .execute();
      // "All postings of these terms in this dataset" is the only read; the
      // included columns make it an index-only scan where the visibility map allows.
      await sql`create unique index search_terms_lookup on search_terms (dataset_id, term, data_id) include (tf, doc_length)`.execute(db);
      // No foreign key here: it would cost a lookup per posting (~100 per item);
      // search_docs' delete trigger removes a document's postings instead, found through this index.
      await db.schema.createIndex('search_terms_data_idx').on('search_terms').column('data_id').execute();
      await db.schema
        .createTable('search_stats')
        .addColumn('dataset_id', 'varchar(32)', (c) => c.primaryKey())
        .addColumn('doc_count', 'bigint', (c) => c.notNull())
        .addColumn('total_length', 'bigint', (c) => c.notNull())
        .execute();
      // Statement-level triggers with transition tables: one stats update per
      // statement, however many rows it wrote or a cascade removed.
      await sql`
        create function search_stats_add() returns trigger language plpgsql as $$
        begin
          insert into search_stats (dataset_id, doc_count, total_length)
            select dataset_id, count(*), coalesce(sum(length), 0) from new_rows group by dataset_id
          on conflict (dataset_id) do update
            set doc_count = search_stats.doc_count + excluded.doc_count,
                total_length = search_stats.total_length + excluded.total_length;
          return null;
        end $$`.execute(db);
      await sql`
        create function search_stats_remove() returns trigger language plpgsql as $$
        begin
          delete from search_terms t using old_rows o where t.data_id = o.data_id;
          update search_stats s set doc_count = s.doc_count - o.n, total_length = s.total_length - o.len
            from (select dataset_id, count(*) as n, coalesce(sum(length), 0) as len from old_rows group by dataset_id) o
           where s.dataset_id = o.dataset_id;
          return null;
        end $$`.execute(db);
      await sql`create trigger search_docs_added after insert on search_docs referencing new table as new_rows
                for each statement execute function search_stats_add()`.execute(db);
      await sql`create trigger search_docs_removed after delete on search_docs referencing old table as old_rows
                for each statement execute function search_stats_remove()`.execute(db);
    },
  },
  // What in-memory full-text indexes (fulltext-cache.ts) need to follow the
  // store: every indexed document gets a sequence number, and the stats say the
  // highest so far and how many documents were ever removed, so that a process
  // can tell from one row whether its copy is current and what to read to catch up.
  '4001_fulltext_sequence': {
    async up(db: Kysely<any>) {
      await sql`alter table search_docs add column seq bigserial`.execute(db);
      await sql`create index search_docs_dataset_seq on search_docs (dataset_id, seq)`.execute(db);
      await sql`alter table search_stats add column last_seq bigint not null default 0, add column removed bigint not null default 0`.execute(db);
      await sql`update search_stats s set last_seq = coalesce((select max(seq) from search_docs d where d.dataset_id = s.dataset_id), 0)`.execute(db);
      await sql`
        create or replace function search_stats_add() returns trigger language plpgsql as $$
        begin
          insert into search_stats (dataset_id, doc_count, total_length, last_seq)
            select dataset_id, count(*), coalesce(sum(length), 0), max(seq) from new_rows group by dataset_id
          on conflict (dataset_id) do update
            set doc_count = search_stats.doc_count + excluded.doc_count,
                total_length = search_stats.total_length + excluded.total_length,
                last_seq = greatest(search_stats.last_seq, excluded.last_seq);
          return null;
        end $$`.execute(db);
      await sql`
        create or replace function search_stats_remove() returns trigger language plpgsql as $$
        begin
          delete from search_terms t using old_rows o where t.data_id = o.data_id;
          update search_stats s set doc_count = s.doc_count - o.n, total_length = s.total_length - o.len, removed = s.removed + o.n
            from (select dataset_id, count(*) as n, coalesce(sum(length), 0) as len from old_rows group by dataset_id) o
           where s.dataset_id = o.dataset_id;
          return null;
        end $$`.execute(db);
    },
  },
  // What in-memory vector copies (vector-cache.ts) need to follow the store, as
  // 4001 did for full text: every stored vector gets a sequence number (one
  // sequence for all vectors_<dims> tables), and vector_stats says per dataset
  // and dimension how many vectors there are, the highest seq and how many were
  // ever removed (replacing one counts). Tables made later get the same from
  // ensureVectorTable (vectorTableDdl).
  '4002_vector_sequence': {
    async up(db: Kysely<any>) {
      await sql`create sequence if not exists vector_seq`.execute(db);
      await sql`create table vector_stats (
        dataset_id varchar(32) not null, dims integer not null, vector_count bigint not null,
        last_seq bigint not null default 0, removed bigint not null default 0, primary key (dataset_id, dims))`.execute(db);
      await sql`
        create function vector_stats_add() returns trigger language plpgsql as $$
        begin
          insert into vector_stats (dataset_id, dims, vector_count, last_seq)
            select dataset_id, TG_ARGV[0]::int, count(*), coalesce(max(seq), 0) from new_rows group by dataset_id
          on conflict (dataset_id, dims) do update
            set vector_count = vector_stats.vector_count + excluded.vector_count,
                last_seq = greatest(vector_stats.last_seq, excluded.last_seq);
          return null;
        end $$`.execute(db);
      await sql`
        create function vector_stats_remove() returns trigger language plpgsql as $$
        begin
          update vector_stats s set vector_count = s.vector_count - o.n, removed = s.removed + o.n
            from (select dataset_id, count(*) as n from old_rows group by dataset_id) o
           where s.dataset_id = o.dataset_id and s.dims = TG_ARGV[0]::int;
          return null;
        end $$`.execute(db);
      const { rows } = await sql<{ name: string }>`select tablename as name from pg_tables
        where schemaname = current_schema() and tablename ~ '^vectors_[0-9]+$'`.execute(db);
      for (const { name } of rows) {
        const dims = Number(name.slice('vectors_'.length));
        // No default while adding: a volatile one would rewrite the table and rebuild its HNSW graph. Old rows keep a null seq.
        await sql.raw(`alter table ${name} add column seq bigint`).execute(db);
        for (const statement of vectorTableDdl(dims).slice(1)) await sql.raw(statement).execute(db);
        await sql`insert into vector_stats (dataset_id, dims, vector_count)
                  select dataset_id, ${dims}::int, count(*) from ${sql.table(name)} group by dataset_id`.execute(db);
      }
    },
  },
};

/**
 * A vectors table and what goes with it: the data_id index (deletes), the seq
 * default, the (dataset_id, seq) index the copies catch up by, and the
 * triggers that keep vector_stats. The first statement creates the table.
 */
export function vectorTableDdl(dims: number): string[] {
  const table = vectorTableName(dims);
  return [
    `create table if not exists ${table} (
       index_id integer primary key references data_indexes(id) on delete cascade,
       data_id varchar(32) not null references data(id) on delete cascade,
       dataset_id varchar(32) not null,
       embedding vector(${dims}) not null,
       seq bigint)`,
    `alter table ${table} alter column seq set default nextval('vector_seq')`,
    `create index if not exists ${table}_data_idx on ${table} (data_id)`,
    `create index if not exists ${table}_seq_idx on ${table} (dataset_id, seq)`,
    `create or replace trigger ${table}_added after insert on ${table} referencing new table as new_rows
       for each statement execute function vector_stats_add('${dims}')`,
    `create or replace trigger ${table}_removed after delete on ${table} referencing old table as old_rows
       for each statement execute function vector_stats_remove('${dims}')`,
  ];
}

/** pgvector's HNSW indexes `vector` up to 2,000 dimensions and `halfvec` up to 4,000. */
export const HNSW_MAX_VECTOR_DIMS = 2000;
export const HNSW_MAX_HALFVEC_DIMS = 4000;
/** pgvector's column limit. */
export const MAX_VECTOR_DIMS = 16000;

export function vectorTableName(dims: number): string {
  if (!Number.isInteger(dims) || dims < 1 || dims > MAX_VECTOR_DIMS)
    throw new RangeError(`vector dimensions must be an integer from 1 to ${MAX_VECTOR_DIMS} (got ${dims})`);
  return `vectors_${dims}`;
}

/**
 * The expression the HNSW index is built on, and that searches must order by
 * for the index to be used: the column itself, or its half-precision cast past
 * 2,000 dimensions (none past 4,000: an exact scan, still correct).
 */
export function vectorIndexedExpression(dims: number): { expr: string; cast: string; indexed: boolean } {
  if (dims <= HNSW_MAX_VECTOR_DIMS) return { expr: 'embedding', cast: `vector(${dims})`, indexed: true };
  if (dims <= HNSW_MAX_HALFVEC_DIMS) return { expr: `(embedding::halfvec(${dims}))`, cast: `halfvec(${dims})`, indexed: true };
  return { expr: 'embedding', cast: `vector(${dims})`, indexed: false };
}
