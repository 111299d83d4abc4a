// The in-memory full-text copies (FullTextCache) against the SQL BM25 they
// stand in for: same ids, same scores, same order, through additions,
// re-indexing, deletions, copies that fall behind, eviction, and (on
// PostgreSQL) a second "process" that sees another one's writes.
import { sql, type Kysely } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { analyze } from '../src/retrieval/analyzer.js';
import { FullTextCache } from '../src/retrieval/fulltext-cache.js';
import { kthLargest } from '../src/retrieval/fulltext-index.js';
import { retrievalMigrations } from '../src/retrieval/schema.js';
import { bm25Search, type ScoredId } from '../src/retrieval/search-store.js';
import { indexForSearch } from '../src/retrieval/store.js';
import { postgresKind, type StoreKind, type TestDb } from './fixtures/indexing-stores.js';
import { openPlatformStore } from '../src/store/db.js';
import { addDataRows, addDataset } from './retrieval-fixtures.js';

const WORDS = [
  'heart',
  'aspirin',
  'vitamin',
  'bone',
  'coffee',
  'exercise',
  'rate',
  'risk',
  'cell',
  'protein',
  'tumor',
  'gene',
  'dose',
  'blood',
  'sleep',
  'diet',
  'brain',
  'lung',
  'liver',
  'insulin',
];
const BM25 = { k1: 1.5, b: 0.4 };
/** These tests' datasets are a few hundred documents: copies catch up within the search, so that every search is from memory. */
const INLINE = { inlineCatchUp: 1000 };

let seed = 7;
const rnd = () => (seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648;
// Skewed: early words are common, late ones rare, as in real text.
const word = () => WORDS[Math.floor(WORDS.length * rnd() ** 2)]!;
const sentence = (n: number) => Array.from({ length: n }, word).join(' ');

async function addData(db: Kysely<any>, datasetId: string, docs: { id: string; text: string }[]): Promise<void> {
  await addDataRows(
    db,
    datasetId,
    docs.map((d) => ({ id: d.id, q: d.text })),
  );
  await indexForSearch(
    db,
    docs.map((d) => ({ dataId: d.id, datasetId, text: d.text })),
  );
}

async function seedStore(db: Kysely<any>): Promise<void> {
  await db.insertInto('teams').values({ id: 't1', name: 'team', created_at: 0 }).execute();
  for (const id of ['fa', 'fb']) await addDataset(db, id);
  await addData(
    db,
    'fa',
    Array.from({ length: 150 }, (_, i) => ({ id: `a${i}`, text: sentence(5 + (i % 30)) })),
  );
  await addData(
    db,
    'fb',
    Array.from({ length: 60 }, (_, i) => ({ id: `b${i}`, text: sentence(3 + (i % 12)) })),
  );
}

const queries = Array.from({ length: 25 }, () => {
  const terms = new Map<string, number>();
  for (const t of analyze(sentence(1 + Math.floor(rnd() * 4)))) terms.set(t, (terms.get(t) ?? 0) + 1);
  return terms;
});

/**
 * Same scores rank by rank, and the same documents with the same scores. Sums
 * in another order differ in the last bits, so documents tied in exact
 * arithmetic may swap: order is compared by score, ids by score group.
 */
function expectSameRanking(memory: ScoredId[] | null, stored: ScoredId[]): void {
  expect(memory).not.toBeNull();
  expect(memory!.length).toBe(stored.length);
  memory!.forEach((r, i) => expect(Math.abs(r.score - stored[i]!.score)).toBeLessThan(1e-9));
  const storedScore = new Map(stored.map((r) => [r.dataId, r.score]));
  const cut = stored.at(-1)?.score ?? 0;
  for (const r of memory!) {
    // Only a tie at the cut may bring a document the other list cut off.
    if (Math.abs(r.score - cut) > 1e-9) expect(storedScore.has(r.dataId)).toBe(true);
    if (storedScore.has(r.dataId)) expect(Math.abs(storedScore.get(r.dataId)! - r.score)).toBeLessThan(1e-9);
  }
}

/** Every query through the copy (`cacheDb`'s) and through SQL (`db`), over the given datasets. */
async function compareAll(cache: FullTextCache, db: Kysely<any>, datasetIds: string[], limit = 20): Promise<void> {
  for (const terms of queries) {
    const stored = await bm25Search(db, { datasetIds, terms, ...BM25, limit });
    expectSameRanking(await cache.search(datasetIds, terms, BM25, limit), stored);
  }
}

const termsOf = (text: string) => new Map(analyze(text).map((t) => [t, 1]));

it('kthLargest agrees with sorting, ties and all', () => {
  for (let round = 0; round < 200; round++) {
    const n = 1 + Math.floor(rnd() * 300);
    const values = Float64Array.from({ length: n }, () => Math.floor(rnd() * (round % 2 ? 5 : 1000)));
    const k = 1 + Math.floor(rnd() * n);
    const sorted = [...values].sort((x, y) => y - x);
    expect(kthLargest(values, k)).toBe(sorted[k - 1]);
  }
});

describe('full-text cache on the embedded store', () => {
  let db: Kysely<any>;
  let close: () => Promise<void>;
  beforeAll(async () => {
    const store = await openPlatformStore({ url: 'pglite:memory', migrations: retrievalMigrations });
    db = store.db;
    close = () => store.close();
    await seedStore(db);
  });
  afterAll(() => close?.());

  it('ranks exactly as the SQL BM25, one dataset and several as one corpus', async () => {
    const cache = new FullTextCache(db, INLINE);
    await compareAll(cache, db, ['fa']);
    await compareAll(cache, db, ['fa', 'fb'], 100);
    expect(cache.cachedDocs).toBe(210);
    expect(await cache.search(['no-such-dataset'], termsOf('heart'), BM25, 10)).toEqual([]);
  });

  it('follows additions, re-indexing and cascaded deletions', async () => {
    const cache = new FullTextCache(db, INLINE);
    await compareAll(cache, db, ['fa', 'fb']);
    await addData(db, 'fa', [{ id: 'new1', text: 'zebrafish heart regeneration' }]);
    expect((await cache.search(['fa'], termsOf('zebrafish'), BM25, 5))!.map((r) => r.dataId)).toEqual(['new1']);
    // Re-indexed with other text: the old terms go, the new come.
    await indexForSearch(db, [{ dataId: 'new1', datasetId: 'fa', text: 'axolotl limb' }]);
    expect(await cache.search(['fa'], termsOf('zebrafish'), BM25, 5)).toEqual([]);
    expect((await cache.search(['fa'], termsOf('axolotl'), BM25, 5))!.map((r) => r.dataId)).toEqual(['new1']);
    await compareAll(cache, db, ['fa', 'fb']);
    // Data deleted (postings go by cascade and trigger) and a whole collection.
    await db.deleteFrom('data').where('id', 'in', ['a1', 'a2', 'new1']).execute();
    expect(await cache.search(['fa'], termsOf('axolotl'), BM25, 5)).toEqual([]);
    await compareAll(cache, db, ['fa', 'fb']);
    await db.deleteFrom('collections').where('id', '=', 'c-fb').execute();
    await compareAll(cache, db, ['fa', 'fb']);
    expect(cache.cachedDocs).toBe(148);
  });

  it('answers null while a copy far behind loads in the background, then from memory', async () => {
    const cache = new FullTextCache(db, { inlineCatchUp: 10 });
    const terms = termsOf('heart risk');
    expect(await cache.search(['fa'], terms, BM25, 10)).toBeNull();
    let hits: ScoredId[] | null = null;
    for (let i = 0; i < 100 && !hits; i++) {
      await new Promise((r) => setTimeout(r, 20));
      hits = await cache.search(['fa'], terms, BM25, 10);
    }
    expectSameRanking(hits, await bm25Search(db, { datasetIds: ['fa'], terms, ...BM25, limit: 10 }));
  });

  it('keeps at most maxDocs, dropping the least recently searched copy', async () => {
    await db
      .insertInto('datasets')
      .values({ id: 'fc', team_id: 't1', name: 'fc', intro: '', vector_model: 'm', vector_dimensions: null, agent_model: null, created_at: 0, updated_at: 0 })
      .execute();
    await addData(
      db,
      'fc',
      Array.from({ length: 40 }, (_, i) => ({ id: `cc${i}`, text: sentence(6) })),
    );
    const cache = new FullTextCache(db, { ...INLINE, maxDocs: 160 });
    await compareAll(cache, db, ['fa']);
    expect(cache.cachedDocs).toBe(148);
    await compareAll(cache, db, ['fc']);
    expect(cache.cachedDocs).toBe(40); // fa (148) went: 188 > 160
    // A dataset larger than the whole allowance is never copied: SQL serves it.
    expect(await new FullTextCache(db, { ...INLINE, maxDocs: 100 }).search(['fa'], termsOf('heart'), BM25, 5)).toBeNull();
  });

  it('counts the postings of documents with no terms and of empty datasets right', async () => {
    const cache = new FullTextCache(db, INLINE);
    await addData(db, 'fc', [{ id: 'stop1', text: 'the of and' }]);
    await compareAll(cache, db, ['fc']);
    const stats = await sql<{ doc_count: number }>`select doc_count::int from search_stats where dataset_id = 'fc'`.execute(db);
    expect(cache.cachedDocs).toBe(stats.rows[0]!.doc_count);
  });
});

const pg: StoreKind = await postgresKind(retrievalMigrations);
describe.skipIf(!!pg.skipReason)(`full-text cache across two processes on PostgreSQL${pg.skipReason ? ` (skipped: ${pg.skipReason})` : ''}`, () => {
  let writer: TestDb;
  let reader: TestDb;
  beforeAll(async () => {
    writer = await pg.open();
    reader = writer.connect!();
    await seedStore(writer.db);
  });
  afterAll(() => pg.drop());

  it("a second process keeps its copy current with the first one's writes", async () => {
    const cache = new FullTextCache(reader.db, INLINE);
    await compareAll(cache, writer.db, ['fa', 'fb']);
    await addData(writer.db, 'fb', [{ id: 'pg1', text: 'zebrafish heart' }]);
    await indexForSearch(writer.db, [{ dataId: 'b3', datasetId: 'fb', text: 'axolotl' }]);
    await writer.db.deleteFrom('data').where('id', 'in', ['a5', 'a6']).execute();
    await compareAll(cache, writer.db, ['fa', 'fb']);
    expect((await cache.search(['fb'], termsOf('zebrafish axolotl'), BM25, 5))!.map((r) => r.dataId).sort()).toEqual(['b3', 'pg1']);
    expect(cache.cachedDocs).toBe(209);
  });
});
