// Retrieval's writes: BM25 postings and vectors. (Reads are in search-store.ts;
// these two files are the only SQL of retrieval.) Every write is one or a few
// statements whatever the number of rows: arrays are sent as parameters and
// unnested, which PGlite and PostgreSQL both take in one round trip.
import { sql, type RawBuilder } from 'kysely';
import { termCounts } from './analyzer.js';
import { notNormalisedMessage, RetrievalError } from './errors.js';
import type { PlatformDb } from '../store/database.js';
import { dbKey } from '../store/session.js';
import { vectorIndexedExpression, vectorTableDdl, vectorTableName } from './schema.js';

type Db = PlatformDb;

/** Runs `fn` in the caller's transaction when there is one (the indexing worker commits with its queue items), else in a new one. */
function inTransaction(db: Db, fn: (trx: Db) => Promise<void>): Promise<void> {
  return db.isTransaction ? fn(db) : db.transaction().execute(fn);
}

/** Rows per statement: bounds a statement's parameter size (postings run ~100 per item). */
const POSTINGS_PER_STATEMENT = 20_000;
const VECTORS_PER_STATEMENT = 500;
/** |norm - 1| allowed before a model counts as not normalised (float32 rounding is ~1e-7). */
export const UNIT_NORM_TOLERANCE = 1e-3;

const ensured = new WeakMap<object, Set<number>>();

/**
 * Creates vectors_<dims> if missing, without its HNSW index: that comes from
 * buildVectorIndexes once the table is big enough and the queue is quiet.
 * Idempotent; two processes racing on `create ... if not exists` can still
 * collide on the catalog, so a duplicate-object error counts as done.
 */
export async function ensureVectorTable(db: Db, dims: number): Promise<string> {
  const table = vectorTableName(dims);
  const done = ensured.get(dbKey(db)) ?? new Set<number>();
  ensured.set(dbKey(db), done);
  if (done.has(dims)) return table;
  await ddl(db, vectorTableDdl(dims));
  done.add(dims);
  return table;
}

async function ddl(db: Db, statements: string[]): Promise<void> {
  for (const statement of statements) {
    try {
      await sql.raw(statement).execute(db);
    } catch (err) {
      const code = (err as { code?: string }).code;
      if (code !== '23505' && code !== '42P07' && code !== '42710') throw err;
    }
  }
}

/**
 * Vectors a table holds before it gets its HNSW index. Below this an exact
 * scan is fast (~1.5 µs a 384-dim vector in PGlite) and exact.
 */
export const HNSW_MIN_ROWS = 1000;

/**
 * Builds the HNSW index of each vectors table that has none yet and holds at
 * least `minRows` vectors; returns the tables it built. The indexing worker
 * calls it when its queue has been quiet for a while: CREATE INDEX over the
 * rows there costs ~0.9 ms a vector in PGlite (in memory, up to
 * maintenance_work_mem), where inserting into a live graph costs ~8 ms each,
 * so a first bulk load goes in without the graph. Later vectors go into the
 * live index. Searches before the build are exact scans: slower, still right.
 */
export async function buildVectorIndexes(db: Db, minRows = HNSW_MIN_ROWS): Promise<string[]> {
  const { rows } = await sql<{ name: string }>`select t.tablename as name from pg_tables t
    where t.schemaname = current_schema() and t.tablename ~ '^vectors_[0-9]+$'
      and not exists (select 1 from pg_indexes i where i.schemaname = t.schemaname and i.indexname = t.tablename || '_hnsw')`.execute(db);
  const built: string[] = [];
  for (const { name } of rows) {
    const dims = Number(name.slice('vectors_'.length));
    const { expr, cast, indexed } = vectorIndexedExpression(dims);
    if (!indexed) continue;
    const n = await sql<{ n: number }>`select count(*)::int as n from (select 1 from ${sql.table(name)} limit ${minRows}) x`.execute(db);
    if (Number(n.rows[0]?.n ?? 0) < minRows) continue;
    // Inner product: every stored vector is unit length (checkUnitVectors), so it is the cosine.
    const opclass = cast.startsWith('halfvec') ? 'halfvec_ip_ops' : 'vector_ip_ops';
    await ddl(db, [`create index if not exists ${name}_hnsw on ${name} using hnsw (${expr} ${opclass})`]);
    built.push(name);
  }
  return built;
}

/**
 * VACUUM ANALYZE of the tables indexing writes: PGlite runs no autovacuum, so
 * without this the planner has no statistics and index-only scans of the
 * postings visit the heap (measured on 10,000 SciFact chunks: BM25 p50 37 ->
 * 24 ms). Run by the worker when its queue is quiet; outside any transaction.
 */
export async function vacuumSearchTables(db: Db): Promise<void> {
  const { rows } = await sql<{ name: string }>`select tablename as name from pg_tables
    where schemaname = current_schema() and tablename ~ '^vectors_[0-9]+$'`.execute(db);
  const tables = ['data', 'data_indexes', 'search_docs', 'search_terms', 'search_stats', ...rows.map((r) => r.name)];
  await sql.raw(`vacuum analyze ${tables.join(', ')}`).execute(db);
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

/**
 * Vectors travel as int8 arrays of x·2^52 and become vectors in SQL
 * (vectorFromFixed): pgvector's text input parses floats with strtof, which
 * costs ~1 ms per 384 dimensions in PGlite's WASM (software long double);
 * integers parse ~3x cheaper. Exact for float32 components down to ~2e-9
 * (x·2^52 is then an integer); smaller ones are off by less than 2^-53.
 */
const FIXED_SHIFT = 52;
const FIXED_SCALE = 2 ** FIXED_SHIFT;

export function vectorFixed(v: ArrayLike<number>): string {
  let s = '{';
  for (let i = 0; i < v.length; i++) {
    const x = v[i]!;
    // Unit vectors only reach here; the bound keeps x·2^52 inside int8.
    if (!Number.isFinite(x) || Math.abs(x) > 1024)
      throw new RetrievalError('vector_not_normalised', notNormalisedMessage(Number.isFinite(x) ? Math.abs(x) : NaN));
    s += (i ? ',' : '') + Math.round(x * FIXED_SCALE);
  }
  return s + '}';
}

/** SQL turning a vectorFixed text (a parameter or a column) back into vector(dims): int8 -> float8 -> float32 is exact, and so is scaling by 2^-52. */
export function vectorFromFixed(fixed: RawBuilder<unknown>, dims: number): RawBuilder<unknown> {
  const type = sql.raw(`vector(${dims})`);
  return sql`((${fixed})::int8[]::float8[]::${type} * array_fill(power(2::float8, ${sql.raw(String(-FIXED_SHIFT))})::float4, array[${sql.raw(String(dims))}])::${type})`;
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
  const docIds: string[] = [],
    docSets: string[] = [],
    docLens: number[] = [];
  // Per dataset (a worker's batch has one): the dataset id goes once, not as an array element per posting (~7% of the insert).
  const postings = new Map<string, { term: string[]; data: string[]; tf: number[]; len: number[] }>();
  const seen = new Set<string>();
  for (const item of items) {
    if (seen.has(item.dataId)) continue; // the last copy would collide with the first
    seen.add(item.dataId);
    const { terms, length } = termCounts(item.text);
    (docIds.push(item.dataId), docSets.push(item.datasetId), docLens.push(length));
    let p = postings.get(item.datasetId);
    if (!p) postings.set(item.datasetId, (p = { term: [], data: [], tf: [], len: [] }));
    for (const [term, tf] of terms) (p.term.push(term), p.data.push(item.dataId), p.tf.push(tf), p.len.push(length));
  }
  await inTransaction(db, async (trx) => {
    // Replacing: the cascade drops old postings, the trigger corrects the stats.
    await sql`delete from search_docs where data_id = any(${docIds}::varchar[])`.execute(trx);
    await sql`insert into search_docs (data_id, dataset_id, length)
              select * from unnest(${docIds}::varchar[], ${docSets}::varchar[], ${docLens}::int[])`.execute(trx);
    for (const [datasetId, p] of postings) {
      for (let i = 0; i < p.term.length; i += POSTINGS_PER_STATEMENT) {
        const end = i + POSTINGS_PER_STATEMENT;
        await sql`insert into search_terms (dataset_id, term, data_id, tf, doc_length)
                  select ${datasetId}::varchar, * from unnest(${p.term.slice(i, end)}::text[], ${p.data.slice(i, end)}::varchar[],
                                                        ${p.tf.slice(i, end)}::int[], ${p.len.slice(i, end)}::int[])`.execute(trx);
      }
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
      // Replacing is a delete and an insert: the new row gets a new seq, and vector_stats counts the removal (vector copies follow both).
      const ids = part.map((r) => r.indexId);
      await sql`delete from ${sql.table(table)} where index_id = any(${ids}::int[])`.execute(trx);
      await sql`insert into ${sql.table(table)} (index_id, data_id, dataset_id, embedding)
                select u.i, u.d, u.s, ${vectorFromFixed(sql`u.v`, dims)}
                  from unnest(${ids}::int[], ${part.map((r) => r.dataId)}::varchar[],
                              ${part.map((r) => r.datasetId)}::varchar[], ${part.map((r) => vectorFixed(r.vector))}::text[]) as u(i, d, s, v)`.execute(trx);
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
