// The platform's two rankings of one search, held to the same answers:
// - BM25: in SQL over the postings (search-store.ts, bm25Search) and from the
//   in-memory copies (fulltext-cache.ts, fulltext-index.ts), on datasets of
//   real English (the repository's docs), code (its sources), Chinese, and
//   documents of repeated terms, through deletions, re-indexing and additions.
//   Same ids in the same order, scores within BM25_TOLERANCE.
// - Vectors: pgvector (search-store.ts, vectorSearch) and the in-memory graph
//   (vector-cache.ts, hnsw.ts), both against exact brute-force cosine: the
//   same top k where the search is exact (pgvector before its index is built;
//   the in-memory copy up to 2,000 live vectors), recall@k of at least
//   MIN_RECALL where it is a graph.
// PGlite always runs; PostgreSQL runs the full-text half when reachable (it
// needs no pgvector) and the vector half only where pgvector is installed.
import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { Kysely } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { analyze } from '../src/retrieval/analyzer.js';
import { FullTextCache } from '../src/retrieval/fulltext-cache.js';
import { retrievalMigrations } from '../src/retrieval/schema.js';
import { bm25Search, vectorSearch, type ScoredId } from '../src/retrieval/search-store.js';
import { buildVectorIndexes, indexForSearch, storeVectors } from '../src/retrieval/store.js';
import { VectorCache } from '../src/retrieval/vector-cache.js';
import { openPlatformStore } from '../src/store/db.js';
import { pgvectorDatabase } from './fixtures/pgvector-database.js';
import { postgresKind } from './fixtures/indexing-stores.js';
import { addDataRows, addDataset } from './retrieval-fixtures.js';

/** Both sides sum float64 terms, in another order: scores agree to rounding, relative to their size. */
const BM25_TOLERANCE = 1e-9;
/** pgvector's inner product is float32; the copies' sums float64 over the same float32 values. */
const VECTOR_TOLERANCE = 1e-5;
/** Recall@10 of a graph search (HNSW, m 16, ef_construction 64, ef_search 100) against brute force; both measured 1.0 on this corpus (32 dims, 2,400 vectors in 24 clusters). */
const MIN_RECALL = 0.9;
const BM25 = { k1: 1.5, b: 0.4 };

let seed = 28;
const rnd = () => (seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648;
const pick = <T>(xs: readonly T[]) => xs[Math.floor(rnd() * xs.length)]!;

// ---- The full-text corpus -------------------------------------------------

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const read = (path: string) => readFileSync(ROOT + path, 'utf8');
const markdown = [
  'README.md',
  ...readdirSync(`${ROOT}docs`)
    .filter((f) => f.endsWith('.md'))
    .sort()
    .map((f) => `docs/${f}`),
];
const sources = ['packages/platform/src/retrieval', 'packages/gateway/src/http1'].flatMap((dir) =>
  readdirSync(ROOT + dir)
    .filter((f) => f.endsWith('.ts'))
    .sort()
    .map((f) => `${dir}/${f}`),
);

/** English: the docs' paragraphs (up to 300). */
const english = markdown
  .flatMap((f) => read(f).split(/\n\s*\n/))
  .map((p) => p.trim())
  .filter((p) => p.length >= 40)
  .slice(0, 300);
/** Code: the sources in 15-line pieces (up to 200). */
const code = sources
  .flatMap((f) => {
    const lines = read(f).split('\n');
    return Array.from({ length: Math.ceil(lines.length / 15) }, (_, i) => lines.slice(i * 15, i * 15 + 15).join('\n'));
  })
  .filter((c) => c.trim().length > 0)
  .slice(0, 200);
/** Chinese: sentences of a retrieval vocabulary, skewed as real text is (early words common). */
const ZH = [
  '知识库',
  '检索',
  '向量',
  '数据库',
  '模型',
  '嵌入',
  '生成',
  '增强',
  '问题',
  '答案',
  '文档',
  '分段',
  '索引',
  '查询',
  '相似度',
  '排序',
  '用户',
  '对话',
  '上下文',
  '提示词',
  '训练',
  '数据集',
  '文件',
  '上传',
  '网页',
  '链接',
  '搜索',
  '全文',
  '关键词',
  '中文',
  '英文',
  '分词',
  '语义',
  '召回',
  '重排',
  '结果',
  '分数',
  '阈值',
  '令牌',
  '预算',
  '服务',
  '网关',
  '渠道',
  '接口',
  '请求',
  '响应',
  '错误',
  '超时',
];
const zhWord = () => ZH[Math.floor(ZH.length * rnd() ** 2)]!;
const chinese = Array.from(
  { length: 150 },
  () => Array.from({ length: 3 + Math.floor(rnd() * 5) }, () => Array.from({ length: 2 + Math.floor(rnd() * 5) }, zhWord).join('')).join('，') + '。',
);
/** Repeated terms: a few words many times over, in documents of very different lengths (tf saturation, length normalisation). */
const REPEATED = ['vector', 'search', 'index', 'cache', 'graph'];
const repeated = Array.from(
  { length: 80 },
  (_, i) =>
    Array.from({ length: 1 + (i % 9) * 3 }, () => REPEATED[i % REPEATED.length]).join(' ') +
    ' ' +
    Array.from({ length: i % 13 }, () => pick(REPEATED)).join(' '),
);

const DATASETS: Record<string, string[]> = { en: english, code, zh: chinese, rep: repeated };

/** Queries of every kind: words taken from a dataset's own documents, and the edge cases. */
function queriesFor(docs: string[]): string[] {
  const fromDocs = Array.from({ length: 12 }, () => {
    const words = pick(docs).split(/\s+/).filter(Boolean);
    const at = Math.floor(rnd() * words.length);
    return words.slice(at, at + 1 + Math.floor(rnd() * 4)).join(' ');
  });
  return [...fromDocs, ...EDGE_QUERIES];
}
const EDGE_QUERIES = [
  'the of and to', // stop words only: no terms, no results
  'zyzzyva quokka', // no document has these
  'vector vector vector search', // a repeated query term counts again
  'cache',
  'graph index', // common terms of the repeated set
  '向量检索',
  '知识库的问题', // Chinese bigrams
  'fullTextCacheOf(db) await',
  'const x = new Map<string, number>()', // code
  'HNSW m 16 ef_construction 64 2,000 vectors', // numbers and identifiers
  'Retrieval 检索 vector 向量', // mixed scripts
];

const termsOf = (text: string) => {
  const terms = new Map<string, number>();
  for (const t of analyze(text)) terms.set(t, (terms.get(t) ?? 0) + 1);
  return terms;
};

// ---- The one comparison ------------------------------------------------------

/**
 * Same length; rank by rank the same score within `tolerance` (relative to the
 * score's size, at least 1); the same ids in the same order, except that
 * documents whose scores tie within the tolerance may come in either order,
 * and a tie at the cut may bring either document.
 */
function expectSameRanking(actual: ScoredId[] | null, expected: ScoredId[], tolerance: number, what: string): void {
  expect(actual, what).not.toBeNull();
  expect(actual!.map((r) => r.dataId).length, what).toBe(expected.length);
  const close = (a: number, b: number) => Math.abs(a - b) <= tolerance * Math.max(1, Math.abs(b));
  actual!.forEach((r, i) => expect(close(r.score, expected[i]!.score), `${what}: score at rank ${i}: ${r.score} vs ${expected[i]!.score}`).toBe(true));
  const cut = expected.at(-1)?.score ?? 0;
  for (let i = 0; i < expected.length;) {
    let j = i + 1;
    while (j < expected.length && close(expected[j]!.score, expected[i]!.score)) j++;
    const ids = (xs: ScoredId[]) =>
      xs
        .slice(i, j)
        .map((r) => r.dataId)
        .sort();
    if (!close(expected[i]!.score, cut)) expect(ids(actual!), `${what}: ids at ranks ${i}-${j - 1}`).toEqual(ids(expected));
    i = j;
  }
}

// ---- BM25: SQL and the in-memory copies -------------------------------------------

interface FullTextStore {
  name: string;
  skipReason?: string;
  open(): Promise<{ db: Kysely<any>; close(): Promise<void> }>;
}

const pgFullText = await postgresKind(retrievalMigrations);
const FULLTEXT_STORES: FullTextStore[] = [
  {
    name: 'PGlite',
    open: async () => {
      const s = await openPlatformStore({ url: 'pglite:memory', migrations: retrievalMigrations });
      return { db: s.db, close: () => s.close() };
    },
  },
  {
    name: 'PostgreSQL',
    skipReason: pgFullText.skipReason,
    open: async () => {
      const t = await pgFullText.open();
      return { db: t.db, close: () => pgFullText.drop() };
    },
  },
];

async function addTexts(db: Kysely<any>, datasetId: string, texts: string[], prefix = datasetId): Promise<void> {
  const rows = texts.map((q, i) => ({ id: `${prefix}-${i}`, q }));
  await addDataRows(db, datasetId, rows);
  await indexForSearch(
    db,
    rows.map((r) => ({ dataId: r.id, datasetId, text: r.q })),
  );
}

describe.each(FULLTEXT_STORES)('BM25 in SQL and in memory on $name', (store) => {
  if (store.skipReason) console.warn(`[skip] BM25 in SQL and in memory on ${store.name}: ${store.skipReason}`);
  const run = store.skipReason ? it.skip : it;
  let db: Kysely<any>;
  let close: () => Promise<void>;
  const queries = Object.fromEntries(Object.entries(DATASETS).map(([id, docs]) => [id, queriesFor(docs)]));
  beforeAll(async () => {
    if (store.skipReason) return;
    ({ db, close } = await store.open());
    await db.insertInto('teams').values({ id: 't1', name: 'team', created_at: 0 }).execute();
    for (const [id, docs] of Object.entries(DATASETS)) {
      await addDataset(db, id);
      await addTexts(db, id, docs);
    }
  }, 60_000);
  afterAll(() => close?.());

  /** Every query of every dataset, alone and over all datasets as one corpus; returns how many searches found something. */
  async function compareAll(cache: FullTextCache, round: string): Promise<number> {
    let found = 0;
    const scopes = [...Object.keys(DATASETS).map((id) => [id]), Object.keys(DATASETS)];
    for (const datasetIds of scopes) {
      for (const query of datasetIds.length === 1 ? queries[datasetIds[0]!]! : Object.values(queries).flat()) {
        const terms = termsOf(query);
        const limit = datasetIds.length === 1 ? 20 : 100;
        const stored = await bm25Search(db, { datasetIds, terms, ...BM25, limit });
        expectSameRanking(
          await cache.search(datasetIds, terms, BM25, limit),
          stored,
          BM25_TOLERANCE,
          `${round}, ${datasetIds.join('+')}: ${JSON.stringify(query)}`,
        );
        if (stored.length > 0) found++;
      }
    }
    return found;
  }

  run(
    'rank alike, through deletions, re-indexing and additions',
    async () => {
      // The copies catch up within each search (inlineCatchUp past any change here): every answer is from memory.
      const cache = new FullTextCache(db, { inlineCatchUp: 10_000 });
      const found = await compareAll(cache, 'as loaded');
      expect(found).toBeGreaterThan(100); // the corpus does find things: the comparison is not of empty lists
      expect(await cache.search(['en'], termsOf('the of and to'), BM25, 10)).toEqual([]);

      // Deletions (postings go by cascade), re-indexed documents (other text under the same id), additions.
      await db.deleteFrom('data').where('id', 'in', ['en-0', 'en-1', 'en-7', 'code-3', 'zh-5', 'rep-0', 'rep-1', 'rep-2']).execute();
      await indexForSearch(db, [
        { dataId: 'en-2', datasetId: 'en', text: 'Rewritten: the vector cache keeps graphs of unit vectors' },
        { dataId: 'zh-6', datasetId: 'zh', text: '重写的文档：向量检索和全文检索' },
        { dataId: 'rep-3', datasetId: 'rep', text: 'search search search' },
      ]);
      await addTexts(db, 'en', ['A new paragraph about retrieval caches and BM25 scores.', 'Another one: vector search, again.'], 'en-new');
      await compareAll(cache, 'after changes');

      // A whole collection gone (every document of a dataset): its copy empties, the others' statistics change.
      await db.deleteFrom('collections').where('id', '=', 'c-rep').execute();
      await compareAll(cache, 'after a collection was deleted');
      expect(await cache.search(['rep'], termsOf('vector'), BM25, 10)).toEqual([]);
    },
    60_000,
  );
});

// ---- Vectors: pgvector and the in-memory graph, against brute force --------------

const DIMS = 32;
const K = 10;
const EF_SEARCH = 100;
/** Clustered unit vectors (a centre per cluster plus noise), as embeddings are. */
const centres = Array.from({ length: 24 }, () => Array.from({ length: DIMS }, () => rnd() - 0.5));
function clustered(): Float32Array {
  const c = pick(centres);
  const v = Float32Array.from(c, (x) => x + (rnd() - 0.5) * 0.7);
  const n = Math.hypot(...v);
  return v.map((x) => x / n);
}

/** The truth: every live vector's cosine, best first (ids break exact ties, as the SQL does). */
function bruteForce(vectors: Map<string, Float32Array>, query: Float32Array, k: number): ScoredId[] {
  const scored: ScoredId[] = [];
  for (const [dataId, v] of vectors) {
    let dot = 0;
    for (let i = 0; i < DIMS; i++) dot += v[i]! * query[i]!;
    scored.push({ dataId, score: dot });
  }
  return scored.sort((a, b) => b.score - a.score || (a.dataId < b.dataId ? -1 : 1)).slice(0, k);
}

const recall = (found: ScoredId[], truth: ScoredId[]) => {
  const ids = new Set(found.map((r) => r.dataId));
  return truth.filter((t) => ids.has(t.dataId)).length / truth.length;
};

interface VectorStore {
  name: string;
  url?: string;
  skipReason?: string;
  drop(): Promise<void>;
}
const VECTOR_STORES: VectorStore[] = [{ name: 'PGlite', url: 'pglite:memory', drop: async () => {} }, await pgvectorDatabase()];

describe.each(VECTOR_STORES)('vector search in SQL and in memory on $name', (database) => {
  if (database.skipReason) console.warn(`[skip] vector search in SQL and in memory on ${database.name}: ${database.skipReason}`);
  const run = database.skipReason ? it.skip : it;
  let db: Kysely<any>;
  let close: () => Promise<void>;
  /** Each dataset's live vectors by data id, as stored (one index per item). */
  const live: Record<string, Map<string, Float32Array>> = { small: new Map(), large: new Map() };
  const indexIds = new Map<string, number>();
  const queries = Array.from({ length: 30 }, clustered);

  async function addVectors(datasetId: string, prefix: string, n: number): Promise<void> {
    const rows = Array.from({ length: n }, (_, i) => ({ id: `${prefix}${i}`, q: `${prefix}${i}`, v: clustered() }));
    for (let at = 0; at < rows.length; at += 500) {
      const part = rows.slice(at, at + 500);
      await addDataRows(db, datasetId, part);
      const idx = await db
        .insertInto('data_indexes')
        .values(part.map((r) => ({ data_id: r.id, dataset_id: datasetId, text: r.q, is_default: true })))
        .returning(['id', 'data_id'])
        .execute();
      await storeVectors(
        db,
        DIMS,
        idx.map((r, i) => ({ indexId: r.id, dataId: r.data_id, datasetId, vector: part[i]!.v })),
      );
      idx.forEach((r, i) => (indexIds.set(r.data_id, r.id), live[datasetId]!.set(r.data_id, part[i]!.v)));
    }
  }

  beforeAll(async () => {
    if (database.skipReason) return;
    const store = await openPlatformStore({ url: database.url, migrations: retrievalMigrations });
    db = store.db;
    close = async () => (await store.close(), await database.drop());
    await db.insertInto('teams').values({ id: 't1', name: 'team', created_at: 0 }).execute();
    for (const id of Object.keys(live)) await addDataset(db, id);
    // 'small' stays under 2,000 live vectors (the copy scans it exactly); 'large' is past it (the copy's graph).
    await addVectors('small', 's', 1100);
    await addVectors('large', 'l', 2400);
  }, 60_000);
  afterAll(() => close?.());

  const sqlSearch = (datasetId: string, q: Float32Array) => vectorSearch(db, { datasetIds: [datasetId], dims: DIMS, vector: q, limit: K, efSearch: EF_SEARCH });

  run(
    'exact where both scan, recall where either walks a graph, through deletions and replaced vectors',
    async () => {
      const cache = new VectorCache(db, { inlineCatchUp: 100_000 });
      const memory = (datasetId: string, q: Float32Array) => cache.search([datasetId], DIMS, q, K, EF_SEARCH);

      // Before pgvector's index: SQL scans every vector, exactly; so does the copy of 'small'.
      const exactRound = async (round: string) => {
        for (const [qi, q] of queries.entries()) {
          const truth = bruteForce(live.small!, q, K);
          expectSameRanking(await sqlSearch('small', q), truth, VECTOR_TOLERANCE, `${round}: SQL, small, query ${qi}`);
          expectSameRanking(await memory('small', q), truth, VECTOR_TOLERANCE, `${round}: memory, small, query ${qi}`);
          expectSameRanking(await sqlSearch('large', q), bruteForce(live.large!, q, K), VECTOR_TOLERANCE, `${round}: SQL, large, query ${qi}`);
        }
      };
      await exactRound('as loaded');

      // Deleted items, replaced vectors (same index, a new vector), and additions.
      await db.deleteFrom('data').where('id', 'in', ['s0', 's1', 's2', 's3', 's4', 'l0', 'l1']).execute();
      for (const id of ['s0', 's1', 's2', 's3', 's4']) live.small!.delete(id);
      for (const id of ['l0', 'l1']) live.large!.delete(id);
      const replaced = ['s10', 's11', 's12', 's13'].map((id) => ({ indexId: indexIds.get(id)!, dataId: id, datasetId: 'small', vector: queries[0]! }));
      await storeVectors(db, DIMS, replaced);
      for (const r of replaced) live.small!.set(r.dataId, r.vector);
      await addVectors('small', 'sn', 20);
      await exactRound('after changes');

      // Graphs: the copy of 'large' (2,398 live), and pgvector's HNSW once built (both datasets, filtered by dataset).
      let memoryFound = 0;
      for (const q of queries) memoryFound += recall((await memory('large', q))!, bruteForce(live.large!, q, K));
      expect(await buildVectorIndexes(db, 1000)).toEqual([`vectors_${DIMS}`]);
      let sqlFound = 0;
      for (const q of queries) {
        sqlFound += recall(await sqlSearch('large', q), bruteForce(live.large!, q, K));
        sqlFound += recall(await sqlSearch('small', q), bruteForce(live.small!, q, K));
      }
      const measured = { memory: memoryFound / queries.length, sql: sqlFound / (2 * queries.length) };
      expect(measured.memory, 'recall@10 of the in-memory graph').toBeGreaterThanOrEqual(MIN_RECALL);
      expect(measured.sql, 'recall@10 of pgvector HNSW').toBeGreaterThanOrEqual(MIN_RECALL);
      // The copy of 'small' still scans exactly, whatever SQL does now.
      for (const q of queries) expectSameRanking(await memory('small', q), bruteForce(live.small!, q, K), VECTOR_TOLERANCE, 'memory, small, after the build');
      console.info(`[ranking.differential] ${database.name}: recall@${K} memory graph ${measured.memory.toFixed(3)}, pgvector HNSW ${measured.sql.toFixed(3)}`);
    },
    60_000,
  );
});
