// SQL for datasets, collections and data. Every query is scoped by team: a key
// never reaches another team's rows, whatever ids it sends.
import { sql, type NotNull, type RawBuilder, type Selectable } from 'kysely';
import type { PlatformDb, PlatformTx } from '../store/database.js';
import type { CollectionJobsTable, CollectionsTable, DatasetsTable, DataTable, JobKind } from './tables.js';

export type DatasetRow = DatasetsTable;
export type CollectionRow = CollectionsTable;
export type DataRow = DataTable;
export type Db = PlatformDb | PlatformTx;
export type { JobKind };

/** A collection's import or delete in progress (collection_jobs). */
export type JobRow = Selectable<CollectionJobsTable>;

const normaliseJob = (r: JobRow): JobRow => ({
  ...r,
  done: Number(r.done),
  total: Number(r.total),
  heartbeat_at: Number(r.heartbeat_at),
  created_at: Number(r.created_at),
});

export interface NewDataItem {
  /** A new row; its pages only where its document has them (a chunk of a PDF). */
  row: Omit<DataRow, 'page_start' | 'page_end'> & Partial<Pick<DataRow, 'page_start' | 'page_end'>>;
  /** Texts embedded for this item; the first is its default index (q, plus a when there is one). */
  indexes: string[];
}

/** A LIKE pattern matching `text` anywhere, its own %, _ and backslash taken literally. */
export function containing(text: string): string {
  return `%${text.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
}

export class DatasetsStore {
  constructor(readonly db: PlatformDb) {}

  transaction<T>(fn: (tx: PlatformTx) => Promise<T>): Promise<T> {
    return this.db.transaction().execute(fn);
  }

  async insertDataset(row: DatasetRow): Promise<void> {
    await this.db.insertInto('datasets').values(row).execute();
  }

  async updateDataset(teamId: string, id: string, change: Partial<Pick<DatasetRow, 'name' | 'intro' | 'ocr'>>, now = Date.now()): Promise<boolean> {
    const r = await this.db
      .updateTable('datasets')
      .set({ ...change, updated_at: now })
      .where('id', '=', id)
      .where('team_id', '=', teamId)
      .executeTakeFirst();
    return Number(r.numUpdatedRows) > 0;
  }

  dataset(teamId: string, id: string): Promise<DatasetRow | undefined> {
    return this.db.selectFrom('datasets').selectAll().where('id', '=', id).where('team_id', '=', teamId).executeTakeFirst();
  }

  listDatasets(teamId: string, searchKey?: string): Promise<(DatasetRow & { collection_count: number; data_count: number })[]> {
    let q = this.db
      .selectFrom('datasets as d')
      .selectAll('d')
      .select((eb) => [
        eb.selectFrom('collections as c').whereRef('c.dataset_id', '=', 'd.id').select(eb.fn.countAll<number>().as('n')).as('collection_count'),
        eb.selectFrom('data as x').whereRef('x.dataset_id', '=', 'd.id').select(eb.fn.countAll<number>().as('n')).as('data_count'),
      ])
      .where('d.team_id', '=', teamId);
    if (searchKey) q = q.where('d.name', 'ilike', containing(searchKey));
    // A count is never null, though Kysely types a scalar subquery as nullable.
    return q.orderBy('d.created_at', 'desc').$narrowType<{ collection_count: NotNull; data_count: NotNull }>().execute();
  }

  async deleteDataset(teamId: string, id: string): Promise<boolean> {
    const r = await this.db.deleteFrom('datasets').where('id', '=', id).where('team_id', '=', teamId).executeTakeFirst();
    return Number(r.numDeletedRows) > 0;
  }

  /** The models a dataset is bound to (any team: for the indexing worker). */
  models(id: string): Promise<{ vector_model: string; agent_model: string | null } | undefined> {
    return this.db.selectFrom('datasets').select(['vector_model', 'agent_model']).where('id', '=', id).executeTakeFirst();
  }

  /** A team's datasets among `ids`, with their vector models. */
  teamDatasets(teamId: string, ids: string[]): Promise<{ id: string; vector_model: string }[]> {
    return this.db.selectFrom('datasets').select(['id', 'vector_model']).where('team_id', '=', teamId).where('id', 'in', ids).execute();
  }

  /** The first vectors fix a dataset's dimensions (set once; later writes change nothing). */
  async setDimensions(datasetId: string, dims: number, db: Db = this.db): Promise<void> {
    await db.updateTable('datasets').set({ vector_dimensions: dims }).where('id', '=', datasetId).where('vector_dimensions', 'is', null).execute();
  }

  async insertCollection(row: CollectionRow, db: Db = this.db): Promise<void> {
    await db.insertInto('collections').values(row).execute();
  }

  collection(teamId: string, id: string): Promise<CollectionRow | undefined> {
    return this.db.selectFrom('collections').selectAll().where('id', '=', id).where('team_id', '=', teamId).executeTakeFirst();
  }

  async listCollections(
    teamId: string,
    datasetId: string,
    offset: number,
    limit: number,
    searchText?: string,
  ): Promise<{ rows: (CollectionRow & { data_amount: number })[]; total: number }> {
    let base = this.db.selectFrom('collections as c').where('c.team_id', '=', teamId).where('c.dataset_id', '=', datasetId);
    if (searchText) base = base.where('c.name', 'ilike', containing(searchText));
    const rows = await base
      .selectAll('c')
      .select((eb) => eb.selectFrom('data as x').whereRef('x.collection_id', '=', 'c.id').select(eb.fn.countAll<number>().as('n')).as('data_amount'))
      .$narrowType<{ data_amount: NotNull }>()
      .orderBy('c.created_at', 'desc')
      .orderBy('c.id')
      .offset(offset)
      .limit(limit)
      .execute();
    const total = await base.select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow();
    return { rows, total: Number(total.n) };
  }

  async deleteCollection(teamId: string, id: string): Promise<boolean> {
    const r = await this.db.deleteFrom('collections').where('id', '=', id).where('team_id', '=', teamId).executeTakeFirst();
    return Number(r.numDeletedRows) > 0;
  }

  /** Data rows of a collection (or of a whole dataset). */
  async countData(where: { collectionId: string } | { datasetId: string }): Promise<number> {
    const q = this.db.selectFrom('data').select((eb) => eb.fn.countAll<number>().as('n'));
    const r = await (
      'collectionId' in where ? q.where('collection_id', '=', where.collectionId) : q.where('dataset_id', '=', where.datasetId)
    ).executeTakeFirstOrThrow();
    return Number(r.n);
  }

  /**
   * Removes up to `limit` data rows of a collection (or dataset) in one
   * statement, their indexes, vectors, postings and queue items going with
   * them (foreign keys); a collection's job row counts them. Returns how many.
   */
  async deleteDataBatch(where: { collectionId: string } | { datasetId: string }, limit: number, now = Date.now()): Promise<number> {
    const match = 'collectionId' in where ? sql`collection_id = ${where.collectionId}` : sql`dataset_id = ${where.datasetId}`;
    const job =
      'collectionId' in where
        ? sql`, job as (update collection_jobs set done = done + (select count(*) from gone), heartbeat_at = ${now} where collection_id = ${where.collectionId})`
        : sql``;
    const { rows } = await sql<{ n: number }>`with gone as (delete from data where id in (select id from data where ${match} limit ${limit}) returning 1)${job}
      select count(*)::int as n from gone`.execute(this.db);
    return Number(rows[0]?.n ?? 0);
  }

  /** Starts (or takes over) the job of a collection; an import's row becomes a delete's, counted afresh. */
  async startJob(
    job: { collectionId: string; teamId: string; datasetId: string; kind: JobKind; total: number; owner: string },
    now = Date.now(),
  ): Promise<void> {
    await sql`insert into collection_jobs (collection_id, team_id, dataset_id, kind, done, total, owner, heartbeat_at, created_at)
      values (${job.collectionId}, ${job.teamId}, ${job.datasetId}, ${job.kind}, 0, ${job.total}, ${job.owner}, ${now}, ${now})
      on conflict (collection_id) do update set kind = excluded.kind, done = 0, total = excluded.total, owner = excluded.owner, heartbeat_at = excluded.heartbeat_at`.execute(
      this.db,
    );
  }

  /** Runs a statement part made here (a job's progress) on its own. */
  async run(statement: RawBuilder<unknown>, db: Db = this.db): Promise<void> {
    await statement.execute(db);
  }

  /** The job row of a new collection, to run in the statement that writes the collection. */
  jobInsertStatement(
    job: { collectionId: string; teamId: string; datasetId: string; kind: JobKind; total: number; owner: string },
    now = Date.now(),
  ): RawBuilder<unknown> {
    return sql`insert into collection_jobs (collection_id, team_id, dataset_id, kind, done, total, owner, heartbeat_at, created_at)
      values (${job.collectionId}, ${job.teamId}, ${job.datasetId}, ${job.kind}, 0, ${job.total}, ${job.owner}, ${now}, ${now})`;
  }

  /** The statement part that counts `n` more chunks written by an import (alongside its insert). */
  jobProgressStatement(collectionId: string, n: number, now = Date.now()): RawBuilder<unknown> {
    return sql`update collection_jobs set done = done + ${n}, heartbeat_at = ${now} where collection_id = ${collectionId}`;
  }

  /** What reading a scan found: its pages' OCR confidences, or why it could not be read; the job ends with it. */
  async endRead(collectionId: string, result: { ocrPages?: string; readError?: string }, now = Date.now()): Promise<void> {
    await sql`with job as (delete from collection_jobs where collection_id = ${collectionId})
      update collections set ocr_pages = coalesce(${result.ocrPages ?? null}, ocr_pages), read_error = ${result.readError ?? null}, updated_at = ${now}
      where id = ${collectionId}`.execute(this.db);
  }

  async endJob(collectionId: string): Promise<void> {
    await sql`delete from collection_jobs where collection_id = ${collectionId}`.execute(this.db);
  }

  job(collectionId: string): Promise<JobRow | undefined> {
    return sql<JobRow>`select * from collection_jobs where collection_id = ${collectionId}`.execute(this.db).then((r) => r.rows[0] && normaliseJob(r.rows[0]));
  }

  /**
   * Takes over jobs whose owner stopped beating before `staleBefore` (or every
   * job not `owner`'s, when `all`: on the embedded store, which one process
   * opens, any job found is a dead process's). Returns them.
   */
  async claimStaleJobs(owner: string, staleBefore: number, all: boolean, now = Date.now()): Promise<JobRow[]> {
    const { rows } = await sql<JobRow>`update collection_jobs set owner = ${owner}, heartbeat_at = ${now}
      where owner <> ${owner} and (${all} or heartbeat_at < ${staleBefore}) returning *`.execute(this.db);
    return rows.map(normaliseJob);
  }

  /**
   * Fresh statistics for the tables a delete of data rows cascades into.
   * PGlite never analyzes by itself, and statistics taken while they were
   * empty (the worker's quiet-time VACUUM ANALYZE at start) made the first
   * step of deleting 1,000 indexed chunks take 2-6 s instead of 0.1 s (plans
   * for empty tables). ANALYZE only samples them.
   */
  async analyzeForDelete(): Promise<void> {
    const { rows } = await sql<{ name: string }>`select tablename as name from pg_tables
      where schemaname = current_schema() and tablename ~ '^vectors_[0-9]+$'`.execute(this.db);
    const tables = ['data', 'data_indexes', 'training_queue', 'search_docs', 'search_terms', ...rows.map((r) => r.name)];
    await sql.raw(`analyze ${tables.join(', ')}`).execute(this.db);
  }

  /**
   * VACUUM of what a large delete emptied, so that the pages go back to the
   * free space map, and trailing empty pages back to the file system
   * (PGlite runs no autovacuum). Outside any transaction.
   */
  async vacuumAfterDelete(opts: { releaseWal: boolean }): Promise<void> {
    await sql`vacuum training_queue, collections, collection_jobs`.execute(this.db);
    // The write-ahead log the delete wrote (hundreds of MB) is otherwise kept
    // for reuse, up to max_wal_size (1 GB): a checkpoint without recycling
    // removes it. PGlite only: on a server, the WAL is its operator's, and
    // both need a superuser.
    if (opts.releaseWal) {
      await sql`set wal_recycle = off`.execute(this.db);
      await sql`checkpoint`.execute(this.db);
      await sql`reset wal_recycle`.execute(this.db);
    }
  }

  /**
   * Data rows and their index texts in one statement (data-modifying CTEs;
   * arrays as parameters), with the new collection's row first when given and
   * `alongside` (e.g. the queue items' insert) in the same statement: on the
   * embedded store each statement costs its own round trip into WASM, and one
   * statement is atomic without a transaction.
   */
  async insertData(items: NewDataItem[], db: Db = this.db, collection?: CollectionRow, alongside: RawBuilder<unknown>[] = []): Promise<void> {
    if (items.length === 0 && !collection) return;
    const rows = items.map((i) => i.row);
    const col = <K extends keyof DataRow>(k: K) => rows.map((r) => r[k]);
    // Chunks of an import index exactly their text: those index rows are made from the data rows in SQL,
    // so the statement carries each text once (half the parameters of a large import's statements).
    const onlyQ = items.length > 0 && items.every((i) => i.indexes.length === 1 && i.indexes[0] === i.row.q);
    const idx = onlyQ ? [] : items.flatMap((i) => i.indexes.map((text, k) => ({ data_id: i.row.id, dataset_id: i.row.dataset_id, text, is_default: k === 0 })));
    const withCollection = collection
      ? sql`c as (insert into collections (id, dataset_id, team_id, name, type, source, training_type, chunk_size, chunk_splitter, qa_prompt, metadata, raw_text, created_at, updated_at)
                values (${collection.id}, ${collection.dataset_id}, ${collection.team_id}, ${collection.name}, ${collection.type}, ${collection.source}, ${collection.training_type},
                        ${collection.chunk_size}, ${collection.chunk_splitter}, ${collection.qa_prompt}, ${collection.metadata}, ${collection.raw_text}, ${collection.created_at}, ${collection.updated_at})),`
      : sql``;
    await sql`with ${withCollection}
      d as (insert into data (id, dataset_id, collection_id, team_id, q, a, chunk_index, title_path, page_start, page_end, row_start, row_end, created_at, updated_at)
            select * from unnest(${col('id')}::varchar[], ${col('dataset_id')}::varchar[], ${col('collection_id')}::varchar[], ${col('team_id')}::varchar[],
                                 ${col('q')}::text[], ${col('a')}::text[], ${col('chunk_index')}::int[], ${col('title_path')}::text[],
                                 ${rows.map((r) => r.page_start ?? null)}::int[], ${rows.map((r) => r.page_end ?? null)}::int[],
                                 ${rows.map((r) => r.row_start ?? null)}::int[], ${rows.map((r) => r.row_end ?? null)}::int[], ${col('created_at')}::int8[], ${col('updated_at')}::int8[])
            returning id, dataset_id, q)
      ${
        alongside.length
          ? sql.join(
              alongside.map((a, i) => sql`, ${sql.raw(`alongside${i}`)} as (${a})`),
              sql``,
            )
          : sql``
      }
      insert into data_indexes (data_id, dataset_id, text, is_default)
      ${
        onlyQ
          ? sql`select id, dataset_id, q, true from d`
          : sql`select * from unnest(${idx.map((r) => r.data_id)}::varchar[], ${idx.map((r) => r.dataset_id)}::varchar[], ${idx.map((r) => r.text)}::text[], ${idx.map((r) => r.is_default)}::bool[])`
      }`.execute(db);
  }

  async nextChunkIndex(collectionId: string, db: Db = this.db): Promise<number> {
    const r = await db
      .selectFrom('data')
      .select((eb) => eb.fn.max('chunk_index').as('m'))
      .where('collection_id', '=', collectionId)
      .executeTakeFirst();
    return r?.m === null || r?.m === undefined ? 0 : Number(r.m) + 1;
  }

  dataItem(teamId: string, id: string): Promise<DataRow | undefined> {
    return this.db.selectFrom('data').selectAll().where('id', '=', id).where('team_id', '=', teamId).executeTakeFirst();
  }

  indexesOf(dataId: string): Promise<{ id: number; text: string; is_default: boolean }[]> {
    return this.db.selectFrom('data_indexes').select(['id', 'text', 'is_default']).where('data_id', '=', dataId).orderBy('id').execute();
  }

  async listData(teamId: string, collectionId: string, offset: number, limit: number, searchText?: string): Promise<{ rows: DataRow[]; total: number }> {
    let base = this.db.selectFrom('data').where('team_id', '=', teamId).where('collection_id', '=', collectionId);
    if (searchText) {
      const like = containing(searchText);
      base = base.where((eb) => eb.or([eb('q', 'ilike', like), eb('a', 'ilike', like)]));
    }
    const rows = await base.selectAll().orderBy('chunk_index').offset(offset).limit(limit).execute();
    const total = await base.select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow();
    return { rows, total: Number(total.n) };
  }

  /** Replaces an item's text and index texts; returns the new data_indexes ids. */
  async updateData(id: string, q: string, a: string, indexes: string[], db: Db): Promise<number[]> {
    const row = await db.updateTable('data').set({ q, a, updated_at: Date.now() }).where('id', '=', id).returning(['dataset_id']).executeTakeFirstOrThrow();
    await db.deleteFrom('data_indexes').where('data_id', '=', id).execute();
    const ids = await db
      .insertInto('data_indexes')
      .values(indexes.map((text, k) => ({ data_id: id, dataset_id: row.dataset_id, text, is_default: k === 0 })))
      .returning('id')
      .execute();
    return ids.map((r) => r.id);
  }

  async deleteData(teamId: string, id: string): Promise<boolean> {
    const r = await this.db.deleteFrom('data').where('id', '=', id).where('team_id', '=', teamId).executeTakeFirst();
    return Number(r.numDeletedRows) > 0;
  }
}
