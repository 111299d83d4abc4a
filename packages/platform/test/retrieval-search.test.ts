// Retrieval on a real embedded store: BM25 postings and scores, HNSW recall,
// fusion, rerank, similarity, token budget, unit-vector check, deletes, dims.
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { PlatformStore } from '../src/store/db.js';
import { analyze } from '../src/retrieval/analyzer.js';
import { bm25Search } from '../src/retrieval/search-store.js';
import { SEARCH_DEFAULTS, searchDataset, type SearchDeps } from '../src/retrieval/search.js';
import { checkUnitVectors, removeData, storeVectors } from '../src/retrieval/store.js';
import { addDataset, addDocs, openRetrievalStore, unit } from './retrieval-fixtures.js';

const DOCS = [
  { id: 'd1', q: 'Aspirin reduces the risk of heart attack', a: 'Daily low-dose aspirin lowers cardiovascular events in adults.', vector: unit(8, 0) },
  { id: 'd2', q: 'Vitamin D and bone health', a: 'Vitamin D supplements improve bone density in older women.', vector: unit(8, 1) },
  { id: 'd3', q: 'Heart rate during exercise', a: 'The heart beats faster while running; heart rate recovers after rest.', vector: unit(8, 0, 2, 0.9) },
  { id: 'd4', q: 'Coffee consumption', a: 'Coffee drinking is not linked to heart disease in large cohorts.', vector: unit(8, 3, 0, 0.4) },
  { id: 'd5', q: '知识库 检索', a: '基于知识库的问答系统', vector: unit(8, 5) },
];

/** Embeds a query as the unit vector named in it ("axis:N"), else axis 7. */
const deps: SearchDeps = {
  async embed(texts) {
    return texts.map((t) => Float32Array.from(unit(8, Number(/axis:(\d)/.exec(t)?.[1] ?? 7))));
  },
};

let store: PlatformStore;
beforeAll(async () => {
  store = await openRetrievalStore();
  await addDataset(store.db, 'ds1');
  await addDocs(store.db, 'ds1', DOCS);
});
afterAll(() => store?.close());

function bm25(tf: number, df: number, n: number, dl: number, avgdl: number, k1 = SEARCH_DEFAULTS.k1, b = SEARCH_DEFAULTS.b): number {
  const idf = Math.log(1 + (n - df + 0.5) / (df + 0.5));
  return (idf * tf * (k1 + 1)) / (tf + k1 * (1 - b + (b * dl) / avgdl));
}

describe('full-text recall (BM25)', () => {
  it('ranks the right document first and matches a hand-computed BM25 score', async () => {
    const res = await searchDataset(store.db, { datasetIds: ['ds1'], text: 'heart rate', mode: 'fullTextRecall' }, deps);
    expect(res.list[0]!.id).toBe('d3');
    const lengths = new Map(DOCS.map((d) => [d.id, analyze(`${d.q}\n${d.a}`).length]));
    const avgdl = [...lengths.values()].reduce((a, b) => a + b, 0) / DOCS.length;
    const heartTf = (id: string) => analyze(`${DOCS.find((d) => d.id === id)!.q}\n${DOCS.find((d) => d.id === id)!.a}`).filter((t) => t === 'heart').length;
    const dfHeart = DOCS.filter((d) => heartTf(d.id) > 0).length; // d1, d3, d4
    expect(dfHeart).toBe(3);
    // d3: "heart" x3, "rate" x2 (df 1)
    const expected = bm25(3, dfHeart, 5, lengths.get('d3')!, avgdl) + bm25(2, 1, 5, lengths.get('d3')!, avgdl);
    const d3 = res.list[0]!.score.find((s) => s.type === 'fullText')!;
    expect(Math.abs(d3.value - expected)).toBeLessThan(1e-6);
    expect(d3.index).toBe(0);
    expect(res.list.map((r) => r.id).sort()).toEqual(['d1', 'd3', 'd4']);
    expect(res.list[0]).toMatchObject({
      q: DOCS[2]!.q,
      a: DOCS[2]!.a,
      chunkIndex: 0,
      datasetId: 'ds1',
      collectionId: 'c-d3',
      sourceName: 'c-d3.txt',
      sourceId: 'c-d3',
    });
  });

  it('stems and drops stopwords in queries too, and finds Chinese by bigrams', async () => {
    const res = await searchDataset(store.db, { datasetIds: ['ds1'], text: 'the supplement of vitamins', mode: 'fullTextRecall' }, deps);
    expect(res.list.map((r) => r.id)).toEqual(['d2']);
    const zh = await searchDataset(store.db, { datasetIds: ['ds1'], text: '知识库问答', mode: 'fullTextRecall' }, deps);
    expect(zh.list[0]!.id).toBe('d5');
    const none = await searchDataset(store.db, { datasetIds: ['ds1'], text: 'the of and', mode: 'fullTextRecall' }, deps);
    expect(none.list).toEqual([]);
  });

  it('keeps per-dataset stats right through re-index and cascaded deletes', async () => {
    await addDataset(store.db, 'ds-tmp');
    await addDocs(store.db, 'ds-tmp', [
      { id: 'x1', q: 'alpha beta' },
      { id: 'x2', q: 'alpha gamma delta' },
    ]);
    const stats = () =>
      sql<{ doc_count: number; total_length: number }>`select doc_count::int, total_length::int from search_stats where dataset_id = 'ds-tmp'`
        .execute(store.db)
        .then((r) => r.rows[0]);
    expect(await stats()).toEqual({ doc_count: 2, total_length: 5 });
    const { indexForSearch } = await import('../src/retrieval/store.js');
    await indexForSearch(store.db, [{ dataId: 'x1', datasetId: 'ds-tmp', text: 'alpha beta beta epsilon' }]);
    expect(await stats()).toEqual({ doc_count: 2, total_length: 7 });
    const hits = await bm25Search(store.db, { datasetIds: ['ds-tmp'], terms: new Map([['beta', 1]]), k1: 0.9, b: 0.4, limit: 10 });
    expect(hits.map((h) => h.dataId)).toEqual(['x1']);
    await store.db.deleteFrom('collections').where('id', '=', 'c-x2').execute();
    expect(await stats()).toEqual({ doc_count: 1, total_length: 4 });
    const left = await sql<{ n: number }>`select count(*)::int as n from search_terms where dataset_id = 'ds-tmp'`.execute(store.db);
    expect(left.rows[0]!.n).toBe(3); // alpha, beta, epsilon of x1
  });
});

describe('embedding recall and fusion', () => {
  it('orders by cosine through HNSW', async () => {
    const res = await searchDataset(store.db, { datasetIds: ['ds1'], text: 'axis:0', mode: 'embedding' }, deps);
    expect(res.list.slice(0, 3).map((r) => r.id)).toEqual(['d1', 'd3', 'd4']);
    const e = res.list[0]!.score[0]!;
    expect(e.type).toBe('embedding');
    expect(e.value).toBeCloseTo(1, 5);
    expect(res.list[1]!.score[0]!.value).toBeCloseTo(1 / Math.hypot(1, 0.9), 5);
  });

  it('mixed recall fuses both lists, every result with embedding, fullText and rrf scores', async () => {
    // Full text alone puts d3 first for "heart"; the vector (axis 3) favours d4.
    for (const fusion of ['linear', 'rrf'] as const) {
      const res = await searchDataset(store.db, { datasetIds: ['ds1'], text: 'heart axis:3', mode: 'mixedRecall', embeddingWeight: 0.8, fusion }, deps);
      expect(res.list[0]!.id).toBe('d4');
      expect(res.list[0]!.score.map((s) => s.type)).toEqual(['embedding', 'fullText', 'rrf']);
      const low = await searchDataset(store.db, { datasetIds: ['ds1'], text: 'heart axis:3', mode: 'mixedRecall', embeddingWeight: 0.1, fusion }, deps);
      expect(low.list[0]!.id).toBe('d3');
      expect(low.list.every((r) => r.score.some((s) => s.type === 'embedding'))).toBe(true);
    }
  });

  it('linear fusion adds BM25 over the best BM25 and the exact cosine, also for full-text results the vector list lacks', async () => {
    // One candidate a list: full text brings d3 ("heart" x3), the vector (axis 0) brings d1; d3's cosine is read for it.
    const res = await searchDataset(
      store.db,
      { datasetIds: ['ds1'], text: 'heart axis:0', mode: 'mixedRecall', embeddingWeight: 0.5, fusion: 'linear', candidates: 1, topK: 2 },
      deps,
    );
    expect(res.list.map((r) => r.id)).toEqual(['d3', 'd1']);
    const fused = (id: string) => res.list.find((r) => r.id === id)!.score.find((s) => s.type === 'rrf')!.value;
    expect(fused('d3')).toBeCloseTo(0.5 * 1 + 0.5 / Math.hypot(1, 0.9), 6);
    expect(fused('d1')).toBeCloseTo(0.5 * 0 + 0.5 * 1, 6);
  });

  it('fuses extension queries and dedupes by data id', async () => {
    const res = await searchDataset(store.db, { datasetIds: ['ds1'], text: 'aspirin', extensionQueries: ['vitamin', 'aspirin'], mode: 'fullTextRecall' }, deps);
    expect(res.queries).toEqual(['aspirin', 'vitamin']);
    expect(res.list.map((r) => r.id).sort()).toEqual(['d1', 'd2']);
    expect(res.list[0]!.score.some((s) => s.type === 'rrf')).toBe(true);
  });
});

describe('rerank, similarity and token budget', () => {
  it('applies the rerank hook and reports its score', async () => {
    const rerank: SearchDeps['rerank'] = async (_q, docs) => docs.map((d, index) => ({ index, score: d.includes('Coffee') ? 0.9 : 0.2 }));
    const res = await searchDataset(store.db, { datasetIds: ['ds1'], text: 'heart', mode: 'fullTextRecall', usingReRank: true }, { ...deps, rerank });
    expect(res.usingReRank).toBe(true);
    expect(res.list[0]!.id).toBe('d4');
    expect(res.list[0]!.score.at(-1)).toEqual({ type: 'reRank', value: 0.9, index: 0 });
    const filtered = await searchDataset(
      store.db,
      { datasetIds: ['ds1'], text: 'heart', mode: 'fullTextRecall', usingReRank: true, similarity: 0.5 },
      { ...deps, rerank },
    );
    expect(filtered.list.map((r) => r.id)).toEqual(['d4']);
  });

  it('filters embedding results by cosine', async () => {
    const res = await searchDataset(store.db, { datasetIds: ['ds1'], text: 'axis:0', mode: 'embedding', similarity: 0.6 }, deps);
    // cosines to axis 0: d1 1, d3 0.9/hypot(1,0.9) = 0.67, d4 0.4/hypot(1,0.4) = 0.37, others 0
    expect(res.list.map((r) => r.id)).toEqual(['d1', 'd3']);
  });

  it('takes results in order within the token budget, at least one', async () => {
    const all = await searchDataset(store.db, { datasetIds: ['ds1'], text: 'axis:0', mode: 'embedding' }, deps);
    expect(all.list.length).toBe(5);
    const one = await searchDataset(store.db, { datasetIds: ['ds1'], text: 'axis:0', mode: 'embedding', limit: 1 }, deps);
    expect(one.list.map((r) => r.id)).toEqual(['d1']);
    const top2 = await searchDataset(store.db, { datasetIds: ['ds1'], text: 'axis:0', mode: 'embedding', topK: 2 }, deps);
    expect(top2.list.length).toBe(2);
  });
});

describe('vectors', () => {
  it('refuses vectors that are not unit length, with the message', async () => {
    expect(() => checkUnitVectors([[0.5, 0.5, 0.5, 0.6]])).toThrow(/only normalised models/);
    const idx = await store.db.selectFrom('data_indexes').select('id').where('data_id', '=', 'd1').executeTakeFirstOrThrow();
    await expect(storeVectors(store.db, 8, [{ indexId: idx.id, dataId: 'd1', datasetId: 'ds1', vector: [2, 0, 0, 0, 0, 0, 0, 0] }])).rejects.toMatchObject({
      code: 'vector_not_normalised',
      message: expect.stringContaining('only normalised models (unit-length vectors) are supported'),
    });
    const bad: SearchDeps = { embed: async (t) => t.map(() => new Float32Array(8).fill(1)) };
    await expect(searchDataset(store.db, { datasetIds: ['ds1'], text: 'x', mode: 'embedding' }, bad)).rejects.toThrow(/only normalised models/);
  });

  it('keeps two dimensions side by side', async () => {
    await addDataset(store.db, 'ds12');
    await addDocs(store.db, 'ds12', [
      { id: 'e1', q: 'twelve one', vector: unit(12, 10) },
      { id: 'e2', q: 'twelve two', vector: unit(12, 11) },
    ]);
    const deps12: SearchDeps = { embed: async (t) => t.map(() => Float32Array.from(unit(12, 11, 10, 0.1))) };
    const res = await searchDataset(store.db, { datasetIds: ['ds12'], text: 'q', mode: 'embedding' }, deps12);
    expect(res.list.map((r) => r.id)).toEqual(['e2', 'e1']);
    const res8 = await searchDataset(store.db, { datasetIds: ['ds1'], text: 'axis:1', mode: 'embedding' }, deps);
    expect(res8.list[0]!.id).toBe('d2');
    const tables = await sql<{ t: string }>`select tablename as t from pg_tables where tablename like 'vectors_%' order by 1`.execute(store.db);
    expect(tables.rows.map((r) => r.t)).toEqual(['vectors_12', 'vectors_8']);
  });

  it("takes dimensions past HNSW's 2,000 (halfvec index) and concurrent table creation", async () => {
    const { ensureVectorTable } = await import('../src/retrieval/store.js');
    await Promise.all([ensureVectorTable(store.db, 3072), ensureVectorTable(store.db, 3072)]);
    await addDataset(store.db, 'ds3072');
    await addDocs(store.db, 'ds3072', [
      { id: 'g1', q: 'large one', vector: unit(3072, 3000) },
      { id: 'g2', q: 'large two', vector: unit(3072, 3071) },
    ]);
    const deps3072: SearchDeps = { embed: async (t) => t.map(() => Float32Array.from(unit(3072, 3071, 3000, 0.5))) };
    const res = await searchDataset(store.db, { datasetIds: ['ds3072'], text: 'q', mode: 'mixedRecall' }, deps3072);
    expect(res.list.map((r) => r.id)).toEqual(['g2', 'g1']);
    expect(res.list[0]!.score[0]!.value).toBeCloseTo(1 / Math.hypot(1, 0.5), 3);
  });

  it('removes postings and vectors with the data', async () => {
    const count = async (id: string) => {
      const r = await sql<{ p: number; v: number; d: number }>`select (select count(*)::int from search_terms where data_id = ${id}) as p,
        (select count(*)::int from vectors_12 where data_id = ${id}) as v, (select count(*)::int from search_docs where data_id = ${id}) as d`.execute(
        store.db,
      );
      return r.rows[0]!;
    };
    expect(await count('e1')).toEqual({ p: 2, v: 1, d: 1 });
    await removeData(store.db, ['e1']);
    expect(await count('e1')).toEqual({ p: 0, v: 0, d: 0 });
    await store.db.deleteFrom('data').where('id', '=', 'e2').execute();
    expect(await count('e2')).toEqual({ p: 0, v: 0, d: 0 });
  });
});
