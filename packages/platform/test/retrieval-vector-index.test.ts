// Vectors go in without an HNSW graph; buildVectorIndexes builds it over the
// rows there once a table is big enough. Searches agree before (exact scan)
// and after (HNSW), and vectors survive their int8 fixed-point trip exactly.
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { PlatformStore } from '../src/store/db.js';
import { vectorIndexState, vectorSearch } from '../src/retrieval/search-store.js';
import { searchDataset, type SearchDeps } from '../src/retrieval/search.js';
import { buildVectorIndexes, storeVectors, vacuumSearchTables } from '../src/retrieval/store.js';
import { addDataset, openRetrievalStore } from './retrieval-fixtures.js';

const DIMS = 16;
const N = 1200;
/** A deterministic unit vector per item (a small LCG: the test repeats exactly). */
function vec(seed: number): Float32Array {
  let x = seed * 2654435761;
  const v = Float32Array.from({ length: DIMS }, () => (x = (x * 1103515245 + 12345) % 2147483648) / 2147483648 - 0.5);
  const n = Math.hypot(...v);
  return v.map((c) => c / n);
}

let store: PlatformStore;
beforeAll(async () => {
  store = await openRetrievalStore();
  await addDataset(store.db, 'dv');
  await store.db
    .insertInto('collections')
    .values({
      id: 'cv',
      dataset_id: 'dv',
      team_id: 't1',
      name: 'cv.txt',
      type: 'text',
      source: null,
      training_type: 'chunk',
      chunk_size: 512,
      chunk_splitter: null,
      qa_prompt: null,
      metadata: '{}',
      raw_text: null,
      created_at: 0,
      updated_at: 0,
    })
    .execute();
  const ids = Array.from({ length: N }, (_, i) => `v${i}`);
  await store.db
    .insertInto('data')
    .values(
      ids.map((id, i) => ({
        id,
        dataset_id: 'dv',
        collection_id: 'cv',
        team_id: 't1',
        q: `item ${i}`,
        a: '',
        chunk_index: i,
        title_path: '[]',
        created_at: 0,
        updated_at: 0,
      })),
    )
    .execute();
  const idx = await store.db
    .insertInto('data_indexes')
    .values(ids.map((id, i) => ({ data_id: id, dataset_id: 'dv', text: `item ${i}`, is_default: true })))
    .returning(['id', 'data_id'])
    .execute();
  await storeVectors(
    store.db,
    DIMS,
    idx.map((r) => ({ indexId: r.id, dataId: r.data_id, datasetId: 'dv', vector: vec(Number(r.data_id.slice(1))) })),
  );
});
afterAll(() => store?.close());

const deps = (seed: number): SearchDeps => ({ embed: async (t) => t.map(() => vec(seed)) });
const top = async (seed: number) =>
  (await searchDataset(store.db, { datasetIds: ['dv'], text: 'q', mode: 'embedding', topK: 5 }, deps(seed))).list.map((r) => r.id);

describe('deferred HNSW index', () => {
  it('stores vectors exactly through the fixed-point encoding', async () => {
    const r = await sql<{ e: string }>`select embedding::text as e from vectors_16 where data_id = 'v7'`.execute(store.db);
    const back = r.rows[0]!.e.slice(1, -1).split(',').map(Number);
    expect(back.map((x) => Math.fround(x))).toEqual(Array.from(vec(7)));
  });

  it('searches exactly before the graph, builds it past HNSW_MIN_ROWS only, and finds the same items after', async () => {
    expect(await vectorIndexState(store.db, DIMS)).toBe('exact');
    expect(await buildVectorIndexes(store.db, N + 1)).toEqual([]); // too few rows for this threshold
    const before = await Promise.all([3, 500, 1111].map(top));
    expect(before.map((ids) => ids[0])).toEqual(['v3', 'v500', 'v1111']);
    expect(await buildVectorIndexes(store.db)).toEqual(['vectors_16']);
    expect(await vectorIndexState(store.db, DIMS)).toBe('hnsw');
    expect(await buildVectorIndexes(store.db)).toEqual([]); // built once
    await vacuumSearchTables(store.db);
    const after = await Promise.all([3, 500, 1111].map(top));
    expect(after.map((ids) => ids[0])).toEqual(['v3', 'v500', 'v1111']);
    // The graph serves the ordering (at 1,200 tiny vectors the planner would rather scan, so scans are off here).
    const plan = await store.db.transaction().execute(async (tx) => {
      await sql`set local enable_seqscan = off`.execute(tx);
      return sql<{
        'QUERY PLAN': string;
      }>`explain select data_id from vectors_16 order by embedding <#> ${`[${Array.from(vec(3)).join(',')}]`}::vector(16) limit 5`.execute(tx);
    });
    expect(plan.rows.map((r) => r['QUERY PLAN']).join('\n')).toContain('vectors_16_hnsw');
  });

  it('says null for a dataset with no vectors yet', async () => {
    expect(await vectorIndexState(store.db, null)).toBeNull();
    expect(await vectorIndexState(store.db, 7)).toBeNull();
  });

  it('fills `limit` items when several indexes of one item are the nearest rows', async () => {
    // v9 gets four more vectors, all nearer the query than any other item's.
    const extra = await store.db
      .insertInto('data_indexes')
      .values([1, 2, 3, 4].map((i) => ({ data_id: 'v9', dataset_id: 'dv', text: `extra ${i}`, is_default: false })))
      .returning('id')
      .execute();
    const near = (i: number) =>
      vec(9)
        .map((c, d) => c + (d === i ? 1e-3 : 0))
        .map((c, _, v) => c / Math.hypot(...v));
    await storeVectors(
      store.db,
      DIMS,
      extra.map((r, i) => ({ indexId: r.id, dataId: 'v9', datasetId: 'dv', vector: near(i) })),
    );
    const hits = await vectorSearch(store.db, { datasetIds: ['dv'], dims: DIMS, vector: vec(9), limit: 3, efSearch: 40 });
    expect(hits.map((h) => h.dataId)).toHaveLength(3);
    expect(hits[0]!.dataId).toBe('v9');
    expect(new Set(hits.map((h) => h.dataId)).size).toBe(3);
  });
});
