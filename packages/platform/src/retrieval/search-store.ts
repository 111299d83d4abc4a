// Retrieval's reads: BM25 over the postings, nearest vectors through HNSW, and
// the rows of the chosen items. One statement each (a vector search with
// other HNSW settings than the session's adds a transaction that scopes them).
import { sql } from 'kysely';
import { vectorIndexedExpression, vectorTableName } from './schema.js';
import type { PlatformDb } from '../store/database.js';
import { dbKey, hasSearchSession, SESSION_HNSW } from '../store/session.js';
import { vectorFixed, vectorFromFixed } from './store.js';

type Db = PlatformDb;

export interface ScoredId {
  dataId: string;
  score: number;
}

export interface Bm25Query {
  datasetIds: string[];
  /** analysed query terms -> occurrences in the query (a repeated term counts again, as in Lucene) */
  terms: Map<string, number>;
  k1: number;
  b: number;
  limit: number;
}

/**
 * Okapi BM25 with Lucene's idf, ln(1 + (N - df + 0.5) / (df + 0.5)), and
 * tf·(k1+1) / (tf + k1·(1 - b + b·dl/avgdl)). N, avgdl and df are over all the
 * given datasets together, as if they were one corpus.
 */
export async function bm25Search(db: Db, q: Bm25Query): Promise<ScoredId[]> {
  if (q.terms.size === 0 || q.datasetIds.length === 0) return [];
  const terms = [...q.terms.keys()];
  const qtf = terms.map((t) => q.terms.get(t)!);
  const res = await sql<{ data_id: string; score: number }>`
    with qt as (select * from unnest(${terms}::text[], ${qtf}::int[]) as qt(term, qtf)),
    st as (select sum(doc_count)::float8 as n, sum(total_length)::float8 / greatest(sum(doc_count), 1) as avgdl
             from search_stats where dataset_id = any(${q.datasetIds}::varchar[])),
    p as (select term, data_id, tf, doc_length from search_terms
           where dataset_id = any(${q.datasetIds}::varchar[]) and term = any(${terms}::text[])),
    w as (select p.term, qt.qtf * ln(1 + (st.n - count(*) + 0.5) / (count(*) + 0.5)) as idf
            from p join qt using (term) cross join st group by p.term, qt.qtf, st.n)
    select p.data_id, sum(w.idf * p.tf * (${q.k1}::float8 + 1)
                          / (p.tf + ${q.k1}::float8 * (1 - ${q.b}::float8 + ${q.b}::float8 * p.doc_length / greatest(st.avgdl, 1e-9)))) as score
      from p join w using (term) cross join st
     group by p.data_id
     order by score desc, p.data_id
     limit ${q.limit}`.execute(db);
  return res.rows.map((r) => ({ dataId: r.data_id, score: Number(r.score) }));
}

export interface VectorQuery {
  datasetIds: string[];
  dims: number;
  vector: ArrayLike<number>;
  /** data items to return (an item's score is its best index's) */
  limit: number;
  /** HNSW candidate list size; at least limit */
  efSearch: number;
}

/** Nearest data items by cosine (inner product of unit vectors), best index per item. */
export async function vectorSearch(db: Db, q: VectorQuery): Promise<ScoredId[]> {
  if (q.datasetIds.length === 0) return [];
  const table = vectorTableName(q.dims);
  if (!(await vectorTableExists(db, table))) return [];
  const { expr, cast } = vectorIndexedExpression(q.dims);
  const ef = Math.min(Math.max(q.efSearch, q.limit), 1000);
  // The query vector is parsed once (an init plan), and the index scan orders by it.
  const query = (trx: Db, rows: number) =>
    sql<{ data_id: string; score: number; n: number }>`
      with qv as materialized (select ${vectorFromFixed(sql`${vectorFixed(q.vector)}::text`, q.dims)}::${sql.raw(cast)} as v)
      select data_id, max(score) as score, count(*)::int as n from (
        select data_id, -(${sql.raw(expr)} <#> (select v from qv)) as score
          from ${sql.table(table)}
         where dataset_id = any(${q.datasetIds}::varchar[])
         order by ${sql.raw(expr)} <#> (select v from qv)
         limit ${rows}) nearest
       group by data_id order by score desc, data_id limit ${q.limit}`.execute(trx);
  // Most items have one vector: ask for `limit` rows first, and only when
  // several indexes of one item crowded others out, again for three times as
  // many (each further row costs HNSW an iterative-scan step).
  const search = async (trx: Db) => {
    let res = await query(trx, q.limit);
    if (res.rows.length < q.limit && res.rows.reduce((n, r) => n + Number(r.n), 0) >= q.limit) res = await query(trx, q.limit * 3);
    return res.rows.map((r) => ({ dataId: r.data_id, score: Number(r.score) }));
  };
  if (ef === SESSION_HNSW.efSearch && hasSearchSession(db)) return search(db);
  return db.transaction().execute(async (trx) => {
    await sql`select set_config('hnsw.ef_search', ${String(ef)}, true),
                     set_config('hnsw.iterative_scan', ${SESSION_HNSW.iterativeScan}, true)`.execute(trx);
    return search(trx);
  });
}

/** 'hnsw' once the table of these dimensions has its graph, 'exact' before it (searches scan every vector), null with no vectors yet. */
export async function vectorIndexState(db: Db, dims: number | null): Promise<'hnsw' | 'exact' | null> {
  if (!dims) return null;
  const table = vectorTableName(dims);
  const res = await sql<{ t: string | null; h: string | null }>`select to_regclass(${table})::text as t, to_regclass(${`${table}_hnsw`})::text as h`.execute(
    db,
  );
  const row = res.rows[0];
  return !row?.t ? null : row.h ? 'hnsw' : 'exact';
}

const knownTables = new WeakMap<object, Set<string>>();
async function vectorTableExists(db: Db, table: string): Promise<boolean> {
  const known = knownTables.get(dbKey(db)) ?? new Set<string>();
  knownTables.set(dbKey(db), known);
  if (known.has(table)) return true;
  const res = await sql<{ t: string | null }>`select to_regclass(${table})::text as t`.execute(db);
  if (res.rows[0]?.t) known.add(table);
  return !!res.rows[0]?.t;
}

export interface DataRow {
  id: string;
  q: string;
  a: string;
  chunkIndex: number;
  datasetId: string;
  collectionId: string;
  collectionName: string;
  collectionSource: string | null;
  /** The pages of its document it comes from (a PDF's chunks), first and last. */
  pages: [number, number] | null;
  /** The rows of its sheet or CSV file it holds (a spreadsheet's chunks), first and last. */
  rows: [number, number] | null;
  /** best cosine of the item's vectors to the query vector, when one was given */
  cosine: number | null;
}

/** A first and last number as stored (both null where there is none). */
const span = (first: number | null | undefined, last: number | null | undefined): [number, number] | null =>
  first === null || first === undefined ? null : [Number(first), Number(last ?? first)];

/** The rows of the given items (any order), with their best cosine to `vector` when given. */
export async function loadDataRows(db: Db, dataIds: string[], vector?: { dims: number; values: ArrayLike<number> }): Promise<DataRow[]> {
  if (dataIds.length === 0) return [];
  const withVector = vector && (await vectorTableExists(db, vectorTableName(vector.dims)));
  const cosine = withVector
    ? sql`(select max(-(v.embedding <#> (select qv.v from qv))) from ${sql.table(vectorTableName(vector.dims))} v where v.data_id = d.id)`
    : sql`null::float8`;
  // The query vector is parsed once for all rows (a materialized CTE).
  const qv = withVector ? sql`with qv as materialized (select ${vectorFromFixed(sql`${vectorFixed(vector.values)}::text`, vector.dims)} as v) ` : sql``;
  const res = await sql<{
    id: string;
    q: string;
    a: string;
    chunk_index: number;
    dataset_id: string;
    collection_id: string;
    name: string;
    source: string | null;
    page_start: number | null;
    page_end: number | null;
    row_start: number | null;
    row_end: number | null;
    cosine: number | null;
  }>`
    ${qv}select d.id, d.q, d.a, d.chunk_index, d.dataset_id, d.collection_id, c.name, c.source, d.page_start, d.page_end, d.row_start, d.row_end, ${cosine} as cosine
      from data d join collections c on c.id = d.collection_id
     where d.id = any(${dataIds}::varchar[])`.execute(db);
  return res.rows.map((r) => ({
    id: r.id,
    q: r.q,
    a: r.a,
    chunkIndex: r.chunk_index,
    datasetId: r.dataset_id,
    collectionId: r.collection_id,
    collectionName: r.name,
    collectionSource: r.source,
    pages: span(r.page_start, r.page_end),
    rows: span(r.row_start, r.row_end),
    cosine: r.cosine === null ? null : Number(r.cosine),
  }));
}

/** Each item's best cosine to `vector` (an item with no vector is absent): linear fusion's cosines for full-text results the vector search did not bring. */
export async function bestCosines(db: Db, dataIds: string[], vector: { dims: number; values: ArrayLike<number> }): Promise<Map<string, number>> {
  const table = vectorTableName(vector.dims);
  if (dataIds.length === 0 || !(await vectorTableExists(db, table))) return new Map();
  const res = await sql<{ data_id: string; cosine: number }>`
    with qv as materialized (select ${vectorFromFixed(sql`${vectorFixed(vector.values)}::text`, vector.dims)} as v)
    select data_id, max(-(embedding <#> (select v from qv))) as cosine
      from ${sql.table(table)} where data_id = any(${dataIds}::varchar[]) group by data_id`.execute(db);
  return new Map(res.rows.map((r) => [r.data_id, Number(r.cosine)]));
}

/** A dataset's full-text figures: what an in-memory copy checks itself against. */
export interface FullTextStats {
  datasetId: string;
  docCount: number;
  totalLength: number;
  /** highest search_docs.seq so far */
  lastSeq: number;
  /** documents ever removed (replacing one counts) */
  removed: number;
}

// bigint columns (counts, seqs) come back as numbers on both stores (store/database.ts); Number() is kept as a guard.
export async function fullTextStats(db: Db, datasetIds: string[]): Promise<FullTextStats[]> {
  const res = await sql<{ dataset_id: string; doc_count: number; total_length: number; last_seq: number; removed: number }>`
    select dataset_id, doc_count, total_length, last_seq, removed from search_stats where dataset_id = any(${datasetIds}::varchar[])`.execute(db);
  return res.rows.map((r) => ({
    datasetId: r.dataset_id,
    docCount: Number(r.doc_count),
    totalLength: Number(r.total_length),
    lastSeq: Number(r.last_seq),
    removed: Number(r.removed),
  }));
}

export interface FullTextDoc {
  dataId: string;
  seq: number;
  /** the BM25 length stored at indexing */
  length: number;
  /** its postings: term -> frequency */
  terms: Map<string, number>;
}

/**
 * Indexed documents of a dataset with their postings: those after `afterSeq`
 * in seq order (at most `limit`), or exactly those of `dataIds`. Postings come
 * aggregated, one text per document ("term tf term tf ..."; terms never hold
 * spaces), ~10x cheaper to read than a row per posting.
 */
export async function loadFullTextDocs(db: Db, datasetId: string, from: { afterSeq: number; limit: number } | { dataIds: string[] }): Promise<FullTextDoc[]> {
  const docs =
    'dataIds' in from
      ? sql`select data_id, seq, length from search_docs where data_id = any(${from.dataIds}::varchar[])`
      : sql`select data_id, seq, length from search_docs where dataset_id = ${datasetId} and seq > ${from.afterSeq} order by seq limit ${from.limit}`;
  const res = await sql<{ data_id: string; seq: number; length: number; postings: string | null }>`
    with docs as (${docs})
    select d.data_id, d.seq, d.length, string_agg(t.term || ' ' || t.tf, ' ') as postings
      from docs d left join search_terms t on t.data_id = d.data_id
     group by d.data_id, d.seq, d.length order by d.seq`.execute(db);
  return res.rows.map((r) => {
    const terms = new Map<string, number>();
    const parts = r.postings ? r.postings.split(' ') : [];
    for (let i = 0; i + 1 < parts.length; i += 2) terms.set(parts[i]!, Number(parts[i + 1]));
    return { dataId: r.data_id, seq: Number(r.seq), length: r.length, terms };
  });
}

/** Ids of every document of a dataset that has postings now. */
export async function indexedDataIds(db: Db, datasetId: string): Promise<string[]> {
  const res = await sql<{ data_id: string }>`select data_id from search_docs where dataset_id = ${datasetId}`.execute(db);
  return res.rows.map((r) => r.data_id);
}

/** A dataset's vectors of one dimension: what an in-memory vector copy checks itself against. */
export interface VectorStats {
  datasetId: string;
  count: number;
  /** highest seq so far */
  lastSeq: number;
  /** vectors ever removed (replacing one counts) */
  removed: number;
}

export async function vectorStats(db: Db, dims: number, datasetIds: string[]): Promise<VectorStats[]> {
  const res = await sql<{ dataset_id: string; vector_count: number; last_seq: number; removed: number }>`
    select dataset_id, vector_count, last_seq, removed from vector_stats where dims = ${dims} and dataset_id = any(${datasetIds}::varchar[])`.execute(db);
  return res.rows.map((r) => ({ datasetId: r.dataset_id, count: Number(r.vector_count), lastSeq: Number(r.last_seq), removed: Number(r.removed) }));
}

export interface StoredVector {
  indexId: number;
  dataId: string;
  /** 0 for vectors stored before seqs existed */
  seq: number;
  vector: Float32Array;
}

/**
 * A dataset's vectors: in seq order after `afterSeq` (at most `limit`; through
 * the (dataset_id, seq) index), or exactly `indexIds`.
 * Vectors come in pgvector's binary form (vector_send: big-endian float4s),
 * not as text, which would be printed and parsed float by float.
 */
export async function loadVectors(
  db: Db,
  dims: number,
  datasetId: string,
  from: { afterSeq: number; limit: number } | { indexIds: number[] },
): Promise<StoredVector[]> {
  const table = sql.table(vectorTableName(dims));
  // seq as stored (null before seqs existed): an alias of coalesce(seq, 0) would make `order by seq` sort the whole table instead of reading the index.
  const cols = sql`index_id, data_id, seq, vector_send(embedding) as v`;
  const res = await (
    'indexIds' in from
      ? sql<{
          index_id: number;
          data_id: string;
          seq: number | null;
          v: Uint8Array;
        }>`select ${cols} from ${table} where index_id = any(${from.indexIds}::int[])`
      : sql<{
          index_id: number;
          data_id: string;
          seq: number | null;
          v: Uint8Array;
        }>`select ${cols} from ${table} where dataset_id = ${datasetId} and seq > ${from.afterSeq} order by seq limit ${from.limit}`
  ).execute(db);
  return res.rows.map((r) => {
    const view = new DataView(r.v.buffer, r.v.byteOffset, r.v.byteLength);
    const vector = new Float32Array(dims);
    for (let i = 0; i < dims; i++) vector[i] = view.getFloat32(4 + 4 * i);
    return { indexId: Number(r.index_id), dataId: r.data_id, seq: r.seq === null ? 0 : Number(r.seq), vector };
  });
}

/** Index id and seq of every vector of a dataset (mending a copy after removals). */
export async function vectorSeqs(db: Db, dims: number, datasetId: string): Promise<Map<number, number>> {
  const res = await sql<{
    index_id: number;
    seq: number;
  }>`select index_id, coalesce(seq, 0) as seq from ${sql.table(vectorTableName(dims))} where dataset_id = ${datasetId}`.execute(db);
  return new Map(res.rows.map((r) => [Number(r.index_id), Number(r.seq)]));
}
