// The in-memory vector copies (VectorCache, Hnsw) against the SQL vector
// search they stand in for: the same items and scores where both are exact
// (small datasets), recall at least pgvector's HNSW where both are graphs, and
// the copy following additions, replacements, deletions and falling behind.
import { sql, type Kysely } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Hnsw } from '../src/retrieval/hnsw.js';
import { vectorSearch, type ScoredId } from '../src/retrieval/search-store.js';
import { buildVectorIndexes, indexForSearch, storeVectors } from '../src/retrieval/store.js';
import { searchDataset } from '../src/retrieval/search.js';
import { VectorCache, vectorCacheOf } from '../src/retrieval/vector-cache.js';
import { retrievalMigrations } from '../src/retrieval/schema.js';
import { openPlatformStore, type PlatformStore } from '../src/store/db.js';
import { migratePlatform } from '../src/store/migrations.js';
import { addDataRows, addDataset, openRetrievalStore } from './retrieval-fixtures.js';

const DIMS = 16;
let seed = 11;
const rnd = () => (seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648;
/** Clustered unit vectors (a centre per cluster plus noise), as embeddings are. */
const centres = Array.from({ length: 20 }, () => Array.from({ length: DIMS }, () => rnd() - 0.5));
function clustered(): Float32Array {
  const c = centres[Math.floor(rnd() * centres.length)]!;
  const v = Float32Array.from(c, (x) => x + (rnd() - 0.5) * 0.6);
  const n = Math.hypot(...v);
  return v.map((x) => x / n);
}
const dot = (a: ArrayLike<number>, b: ArrayLike<number>) => Array.from(a).reduce((s, x, i) => s + x * b[i]!, 0);

/** Items with one vector each (ids `${prefix}${i}`); returns their index ids. */
async function addItems(db: Kysely<any>, datasetId: string, prefix: string, vectors: Float32Array[]): Promise<number[]> {
  const ids = vectors.map((_, i) => `${prefix}${i}`);
  await addDataRows(
    db,
    datasetId,
    ids.map((id) => ({ id, q: id })),
  );
  const idx = await db
    .insertInto('data_indexes')
    .values(ids.map((id) => ({ data_id: id, dataset_id: datasetId, text: id, is_default: true })))
    .returning(['id', 'data_id'])
    .execute();
  await storeVectors(
    db,
    DIMS,
    idx.map((r, i) => ({ indexId: r.id, dataId: r.data_id, datasetId, vector: vectors[i]! })),
  );
  return idx.map((r) => r.id);
}

/** Same items with the same scores (float32 sums in SQL, float64 here: 1e-5), order by score. */
function expectSame(memory: ScoredId[] | null, stored: ScoredId[]): void {
  expect(memory).not.toBeNull();
  expect(memory!.length).toBe(stored.length);
  memory!.forEach((r, i) => expect(Math.abs(r.score - stored[i]!.score)).toBeLessThan(1e-5));
  const storedScore = new Map(stored.map((r) => [r.dataId, r.score]));
  const cut = stored.at(-1)!.score;
  for (const r of memory!) {
    if (r.score - cut > 1e-5) expect(Math.abs(storedScore.get(r.dataId)! - r.score)).toBeLessThan(1e-5);
  }
}

describe('Hnsw', () => {
  it('finds the exact nearest when small, and ~all of them through the graph', () => {
    const vectors = Array.from({ length: 3000 }, clustered);
    const exact = new Hnsw(DIMS, { exactBelow: 5000 }),
      graph = new Hnsw(DIMS, { exactBelow: 0 });
    for (const v of vectors) (exact.add(v), graph.add(v));
    let found = 0;
    for (let q = 0; q < 50; q++) {
      const query = clustered();
      const truth = vectors
        .map((v, node) => ({ node, score: dot(v, query) }))
        .sort((x, y) => y.score - x.score)
        .slice(0, 10);
      expect(exact.search(query, 10, 10).map((h) => h.node)).toEqual(truth.map((h) => h.node));
      const hits = new Set(graph.search(query, 10, 64).map((h) => h.node));
      found += truth.filter((t) => hits.has(t.node)).length;
    }
    expect(found / 500).toBeGreaterThan(0.95);
  });

  it('reserves room for a known count: the same graph, no doubled arrays', () => {
    const vectors = Array.from({ length: 2500 }, clustered);
    const grown = new Hnsw(DIMS, { exactBelow: 0 }),
      reserved = new Hnsw(DIMS, { exactBelow: 0 });
    reserved.reserve(vectors.length);
    for (const v of vectors) (grown.add(v), reserved.add(v));
    expect(grown.capacity).toBe(4096); // doubled from 1024: 1,596 nodes' room unused
    expect(reserved.capacity).toBe(2500);
    for (let q = 0; q < 10; q++) {
      const query = clustered();
      expect(reserved.search(query, 10, 40)).toEqual(grown.search(query, 10, 40));
    }
    reserved.add(clustered()); // past the reservation it grows as before
    expect(reserved.capacity).toBe(5000);
  });

  it('never returns a removed node, and still routes through it', () => {
    const g = new Hnsw(DIMS, { exactBelow: 0 });
    const vectors = Array.from({ length: 500 }, clustered);
    vectors.forEach((v) => g.add(v));
    for (let n = 0; n < 500; n += 2) g.remove(n);
    expect(g.live).toBe(250);
    for (let q = 0; q < 20; q++) {
      const hits = g.search(vectors[q * 2 + 1]!, 5, 40);
      expect(hits.every((h) => h.node % 2 === 1)).toBe(true);
      expect(hits[0]!.node).toBe(q * 2 + 1);
    }
  });
});

describe('vector cache on the embedded store', () => {
  let store: PlatformStore;
  let db: Kysely<any>;
  beforeAll(async () => {
    store = await openRetrievalStore();
    db = store.db;
    for (const id of ['va', 'vb', 'vbig']) await addDataset(db, id);
    await addItems(db, 'va', 'a', Array.from({ length: 300 }, clustered));
    await addItems(db, 'vb', 'b', Array.from({ length: 120 }, clustered));
    await indexForSearch(
      db,
      Array.from({ length: 120 }, (_, i) => ({ dataId: `b${i}`, datasetId: 'vb', text: `b${i} b${i % 7}` })),
    );
  });
  afterAll(() => store?.close());

  const queries = Array.from({ length: 20 }, clustered);
  const sqlSearch = (datasetIds: string[], vector: Float32Array, limit = 20) => vectorSearch(db, { datasetIds, dims: DIMS, vector, limit, efSearch: 100 });
  /** Copies catch up within the search here (small datasets), so every search after the first load is from memory. */
  const INLINE = { inlineCatchUp: 100_000 };

  it('ranks exactly as the SQL search (exact scans on both sides), one dataset and several together', async () => {
    const cache = new VectorCache(db, INLINE);
    for (const q of queries) {
      expectSame(await cache.search(['va'], DIMS, q, 20, 100), await sqlSearch(['va'], q));
      expectSame(await cache.search(['va', 'vb'], DIMS, q, 50, 100), await sqlSearch(['va', 'vb'], q, 50));
    }
    expect(cache.cachedVectors).toBe(420);
    expect(await cache.search(['no-such-dataset'], DIMS, queries[0]!, 10, 100)).toEqual([]);
  });

  it('follows additions, replaced vectors and cascaded deletions', async () => {
    const cache = new VectorCache(db, INLINE);
    await cache.search(['va'], DIMS, queries[0]!, 10, 100);
    const target = clustered();
    const [indexId] = await addItems(db, 'va', 'new', [target]);
    expect((await cache.search(['va'], DIMS, target, 1, 100))![0]!.dataId).toBe('new0');
    // The same index gets another vector: the old one must not be found any more.
    const other = clustered();
    await storeVectors(db, DIMS, [{ indexId: indexId!, dataId: 'new0', datasetId: 'va', vector: other }]);
    const hit = (await cache.search(['va'], DIMS, other, 1, 100))![0]!;
    expect(hit.dataId).toBe('new0');
    expect(hit.score).toBeCloseTo(1, 5);
    // Deleting data cascades to its vectors.
    await db.deleteFrom('data').where('id', 'in', ['new0', 'a1', 'a2']).execute();
    for (const q of [...queries, target, other]) expectSame(await cache.search(['va'], DIMS, q, 20, 100), await sqlSearch(['va'], q));
    expect((await cache.search(['va'], DIMS, other, 5, 100))!.map((r) => r.dataId)).not.toContain('new0');
  });

  it('answers null while a copy too far behind loads in the background, then from memory', async () => {
    const cache = new VectorCache(db, { inlineCatchUp: 10 });
    expect(await cache.search(['va'], DIMS, queries[0]!, 10, 100)).toBeNull(); // 298 vectors to load
    for (let i = 0; i < 100 && (await cache.search(['va'], DIMS, queries[0]!, 10, 100)) === null; i++) await new Promise((r) => setTimeout(r, 20));
    expectSame(await cache.search(['va'], DIMS, queries[1]!, 20, 100), await sqlSearch(['va'], queries[1]!));
    // A few new vectors are caught up within the search; many go to the background again.
    await addItems(db, 'va', 'few', Array.from({ length: 3 }, clustered));
    expect(await cache.search(['va'], DIMS, queries[2]!, 20, 100)).not.toBeNull();
    await addItems(db, 'va', 'many', Array.from({ length: 50 }, clustered));
    expect(await cache.search(['va'], DIMS, queries[2]!, 20, 100)).toBeNull();
  });

  it('gives searchDataset the same results and scores from the copies as from SQL (mixed recall cosines too)', async () => {
    // 20 candidates a list: many full-text results are not among the vector results, and linear fusion reads their cosines.
    const run = (mode: 'embedding' | 'mixedRecall', q: Float32Array) =>
      searchDataset(db, { datasetIds: ['vb'], text: 'b1 b2 b3', mode, limit: 100_000, topK: 30, candidates: 20 }, { embed: async (t) => t.map(() => q) });
    // The process's cache: the first search finds no copy (SQL answers) and starts loading it.
    const fromSql = await Promise.all(queries.slice(0, 5).flatMap((q) => [run('embedding', q), run('mixedRecall', q)]));
    for (let i = 0; i < 100 && (await vectorCacheOf(db).search(['vb'], DIMS, queries[0]!, 5, 100)) === null; i++) await new Promise((r) => setTimeout(r, 20));
    const fromCopies = await Promise.all(queries.slice(0, 5).flatMap((q) => [run('embedding', q), run('mixedRecall', q)]));
    fromCopies.forEach((r, i) => {
      expect(r.list.map((x) => x.id)).toEqual(fromSql[i]!.list.map((x) => x.id));
      r.list.forEach((x, j) =>
        x.score.forEach((s, k) => {
          expect(s.type).toBe(fromSql[i]!.list[j]!.score[k]!.type);
          expect(s.index).toBe(fromSql[i]!.list[j]!.score[k]!.index);
          expect(Math.abs(s.value - fromSql[i]!.list[j]!.score[k]!.value)).toBeLessThan(1e-5);
        }),
      );
    });
  });

  it('finds at least as many of the exact nearest as pgvector HNSW does, past the exact-scan size', async () => {
    await addItems(db, 'vbig', 'g', Array.from({ length: 3000 }, clustered));
    expect(await buildVectorIndexes(db)).toEqual(['vectors_16']);
    const cache = new VectorCache(db, INLINE);
    let memory = 0,
      pgvector = 0;
    for (let i = 0; i < 30; i++) {
      const q = clustered();
      const exact = await db.transaction().execute(async (tx) => {
        await sql`set local enable_indexscan = off`.execute(tx);
        return vectorSearch(tx, { datasetIds: ['vbig'], dims: DIMS, vector: q, limit: 10, efSearch: 100 });
      });
      const truth = new Set(exact.map((r) => r.dataId));
      memory += (await cache.search(['vbig'], DIMS, q, 10, 40))!.filter((r) => truth.has(r.dataId)).length;
      pgvector += (await sqlSearch(['vbig'], q, 10)).filter((r) => truth.has(r.dataId)).length;
    }
    expect(memory / 300).toBeGreaterThan(0.95);
    expect(memory).toBeGreaterThanOrEqual(pgvector - 6);
  });
});

describe('migration 4002 over vectors stored before it', () => {
  it('counts them in vector_stats, and a copy brings them in (by index id) with the ones stored after', async () => {
    const { '4002_vector_sequence': _later, ...before } = retrievalMigrations;
    const store = await openPlatformStore({ url: 'pglite:memory', migrations: before });
    try {
      const db = store.db;
      // A store from before 4002 had none of the later migrations either: the base's 9005 and 9008 are undone, to run again after 4002.
      await sql`alter table data drop column page_start, drop column page_end, drop column row_start, drop column row_end`.execute(db);
      await sql`delete from kbchat_platform_migrations where name in ('9005_data_pages', '9008_data_rows')`.execute(db);
      await db.insertInto('teams').values({ id: 't1', name: 'team', created_at: 0 }).execute();
      await addDataset(db, 'old');
      // The table as ensureVectorTable made it before 4002 (no seq, no triggers).
      await sql`create table vectors_16 (index_id integer primary key references data_indexes(id) on delete cascade,
        data_id varchar(32) not null references data(id) on delete cascade, dataset_id varchar(32) not null, embedding vector(16) not null)`.execute(db);
      const oldVectors = Array.from({ length: 40 }, clustered);
      await addItemsRaw(db, 'old', 'o', oldVectors);
      await migratePlatform(db, retrievalMigrations);
      expect(Number((await sql<{ n: string }>`select vector_count as n from vector_stats where dataset_id = 'old' and dims = 16`.execute(db)).rows[0]!.n)).toBe(
        40,
      );
      const newVectors = Array.from({ length: 5 }, clustered);
      await addItems(db, 'old', 'n', newVectors);
      const cache = new VectorCache(db, { inlineCatchUp: 100_000 });
      for (const q of [...oldVectors.slice(0, 5), ...newVectors]) {
        expectSame(
          await cache.search(['old'], DIMS, q, 10, 100),
          await vectorSearch(db, { datasetIds: ['old'], dims: DIMS, vector: q, limit: 10, efSearch: 100 }),
        );
      }
      expect(cache.cachedVectors).toBe(45);
    } finally {
      await store.close();
    }
  });
});

/** addItems without storeVectors: rows straight into the old-style table. */
async function addItemsRaw(db: Kysely<any>, datasetId: string, prefix: string, vectors: Float32Array[]): Promise<void> {
  const ids = vectors.map((_, i) => `${prefix}${i}`);
  await addDataRows(
    db,
    datasetId,
    ids.map((id) => ({ id, q: id })),
  );
  const idx = await db
    .insertInto('data_indexes')
    .values(ids.map((id) => ({ data_id: id, dataset_id: datasetId, text: id, is_default: true })))
    .returning(['id', 'data_id'])
    .execute();
  for (const [i, r] of idx.entries()) {
    await sql`insert into vectors_16 (index_id, data_id, dataset_id, embedding) values (${r.id}, ${r.data_id}, ${datasetId}, ${`[${Array.from(vectors[i]!).join(',')}]`}::vector(16))`.execute(
      db,
    );
  }
}
