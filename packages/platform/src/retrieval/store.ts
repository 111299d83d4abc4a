// Retrieval's writes: BM25 postings and vectors. (Reads are in search-store.ts;
// these two files are the only SQL of retrieval.) Every write is one or a few
// statements whatever the number of rows: arrays are sent as parameters and
// unnested, which PGlite and PostgreSQL both take in one round trip.
import { sql, type Kysely } from 'kysely';
import { termCounts } from './analyzer.js';
import { notNormalisedMessage, RetrievalError } from './errors.js';
import { vectorIndexedExpression, vectorTableName } from './schema.js';

type Db = Kysely<any>;

/** Runs `fn` in the caller's transaction when there is one (the indexing worker commits with its queue items), else in a new one. */
function inTransaction(db: Db, fn: (trx: Kysely<any>) => Promise<void>): Promise<void> {
  return db.isTransaction ? fn(db) : db.transaction().execute(fn);
}

/** Rows per statement: bounds a statement's parameter size (postings run ~100 per item). */
const POSTINGS_PER_STATEMENT = 20_000;
const VECTORS_PER_STATEMENT = 500;
/** |norm - 1| allowed before a model counts as not normalised (float32 rounding is ~1e-7). */
export const UNIT_NORM_TOLERANCE = 1e-3;

const ensured = new WeakMap<Db, Set<number>>();

/**
 * Creates vectors_<dims> and its HNSW index if missing. Idempotent; two
 * processes racing on `create ... if not exists` can still collide on the
 * catalog, so a duplicate-object error counts as done.
 */
export async function ensureVectorTable(db: Db, dims: number): Promise<string> {
  const table = vectorTableName(dims);
  const done = ensured.get(db) ?? new Set<number>();
  ensured.set(db, done);
  if (done.has(dims)) return table;
  const { expr, cast, indexed } = vectorIndexedExpression(dims);
  const opclass = cast.startsWith('halfvec') ? 'halfvec_ip_ops' : 'vector_ip_ops';
  const statements = [
    `create table if not exists ${table} (
       index_id integer primary key references data_indexes(id) on delete cascade,
       data_id varchar(32) not null references data(id) on delete cascade,
       dataset_id varchar(32) not null,
       embedding vector(${dims}) not null)`,
    `create index if not exists ${table}_data_idx on ${table} (data_id)`,
    // Inner product: every stored vector is unit length (checkUnitVectors), so it is the cosine.
    ...(indexed ? [`create index if not exists ${table}_hnsw on ${table} using hnsw (${expr} ${opclass})`] : []),
  ];
  for (const statement of statements) {
    try {
      await sql.raw(statement).execute(db);
    } catch (err) {
      const code = (err as { code?: string }).code;
      if (code !== '23505' && code !== '42P07' && code !== '42710') throw err;
    }
  }
  done.add(dims);
  return table;
}

/** Throws RetrievalError('vector_not_normalised') unless every vector is unit length. */
export function checkUnitVectors(vectors: ArrayLike<number>[]): void {
  for (const v of vectors) {
    let sum = 0;
    for (let i = 0; i < v.length; i++) sum += v[i]! * v[i]!;
    const norm = Math.sqrt(sum);
    if (!(Math.abs(norm - 1) <= UNIT_NORM_TOLERANCE)) throw new RetrievalError('vector_not_normalised', notNormalisedMessage(norm));
  }
}

export function vectorLiteral(v: ArrayLike<number>): string {
  let s = '[';
  for (let i = 0; i < v.length; i++) {
    const x = v[i]!;
    if (!Number.isFinite(x)) throw new RetrievalError('vector_not_normalised', notNormalisedMessage(NaN));
    s += (i ? ',' : '') + x;
  }
  return s + ']';
}

export interface SearchItem {
  dataId: string;
  datasetId: string;
  /** What full-text search sees: usually q + '\n' + a. */
  text: string;
}

/** Writes the BM25 postings of the items, replacing what they had. */
export async function indexForSearch(db: Db, items: SearchItem[]): Promise<void> {
  if (items.length === 0) return;
  const docIds: string[] = [], docSets: string[] = [], docLens: number[] = [];
  const pSet: string[] = [], pTerm: string[] = [], pData: string[] = [], pTf: number[] = [], pLen: number[] = [];
  const seen = new Set<string>();
  for (const item of items) {
    if (seen.has(item.dataId)) continue; // the last copy would collide with the first
    seen.add(item.dataId);
    const { terms, length } = termCounts(item.text);
    docIds.push(item.dataId), docSets.push(item.datasetId), docLens.push(length);
    for (const [term, tf] of terms) pSet.push(item.datasetId), pTerm.push(term), pData.push(item.dataId), pTf.push(tf), pLen.push(length);
  }
  await inTransaction(db, async (trx) => {
    // Replacing: the cascade drops old postings, the trigger corrects the stats.
    await sql`delete from search_docs where data_id = any(${docIds}::varchar[])`.execute(trx);
    await sql`insert into search_docs (data_id, dataset_id, length)
              select * from unnest(${docIds}::varchar[], ${docSets}::varchar[], ${docLens}::int[])`.execute(trx);
    for (let i = 0; i < pTerm.length; i += POSTINGS_PER_STATEMENT) {
      const end = i + POSTINGS_PER_STATEMENT;
      await sql`insert into search_terms (dataset_id, term, data_id, tf, doc_length)
                select * from unnest(${pSet.slice(i, end)}::varchar[], ${pTerm.slice(i, end)}::text[], ${pData.slice(i, end)}::varchar[],
                                     ${pTf.slice(i, end)}::int[], ${pLen.slice(i, end)}::int[])`.execute(trx);
    }
  });
}

export interface VectorRow {
  /** data_indexes.id of the text the vector is of */
  indexId: number;
  dataId: string;
  datasetId: string;
  vector: Float32Array | number[];
}

/** Stores (or replaces) vectors of `dims` dimensions; refuses vectors that are not unit length. */
export async function storeVectors(db: Db, dims: number, rows: VectorRow[]): Promise<void> {
  if (rows.length === 0) return;
  for (const r of rows) {
    if (r.vector.length !== dims) {
      throw new RetrievalError('vector_dimensions_mismatch', `a vector has ${r.vector.length} dimensions where the dataset's model has ${dims}`);
    }
  }
  checkUnitVectors(rows.map((r) => r.vector));
  const table = await ensureVectorTable(db, dims);
  await inTransaction(db, async (trx) => {
    for (let i = 0; i < rows.length; i += VECTORS_PER_STATEMENT) {
      const part = rows.slice(i, i + VECTORS_PER_STATEMENT);
      await sql`insert into ${sql.table(table)} (index_id, data_id, dataset_id, embedding)
                select * from unnest(${part.map((r) => r.indexId)}::int[], ${part.map((r) => r.dataId)}::varchar[],
                                     ${part.map((r) => r.datasetId)}::varchar[], ${part.map((r) => vectorLiteral(r.vector))}::text[]::${sql.raw(`vector(${dims})`)}[])
                on conflict (index_id) do update set data_id = excluded.data_id, dataset_id = excluded.dataset_id, embedding = excluded.embedding`.execute(trx);
    }
  });
}

/**
 * Removes the postings and vectors of data items that stay (re-indexing from
 * scratch). Deleting the data rows themselves needs no call: foreign keys cascade.
 */
export async function removeData(db: Db, dataIds: string[]): Promise<void> {
  if (dataIds.length === 0) return;
  await inTransaction(db, async (trx) => {
    await sql`delete from search_docs where data_id = any(${dataIds}::varchar[])`.execute(trx);
    const tables = await sql<{ name: string }>`select tablename as name from pg_tables
      where schemaname = current_schema() and tablename ~ '^vectors_[0-9]+$'`.execute(trx);
    for (const { name } of tables.rows) {
      await sql`delete from ${sql.table(name)} where data_id = any(${dataIds}::varchar[])`.execute(trx);
    }
  });
}
