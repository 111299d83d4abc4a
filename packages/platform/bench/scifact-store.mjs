// Puts SciFact into an in-memory platform store the way the platform would:
// a dataset, one collection per abstract (named by its id), data items, their
// indexes (the chunks that were embedded), BM25 postings and vectors.
import { performance } from 'node:perf_hooks';
import { EMBED_DIMS } from './scifact-vectors.mjs';

/**
 * layout 'abstracts': one data item per abstract (q = title, a = text; full text
 *   sees the whole abstract) whose indexes are its <=128-token chunks (each one
 *   vector; an item's cosine is its best chunk's), like FastGPT's extra indexes.
 * layout 'chunks': one data item per chunk (full text and vectors per chunk; a
 *   document's score is its best chunk's).
 */
export async function loadIntoStore(data, { layout = 'abstracts', log = () => {} } = {}) {
  const { openPlatformStore } = await import('../dist/store/db.js');
  const { retrievalMigrations, indexForSearch, storeVectors } = await import('../dist/retrieval/index.js');
  const started = performance.now();
  const store = await openPlatformStore({ url: 'pglite:memory', migrations: retrievalMigrations });
  const db = store.db;
  const datasetId = 'scifact';
  await db.insertInto('teams').values({ id: 't1', name: 'bench', created_at: 0 }).execute();
  await db
    .insertInto('datasets')
    .values({
      id: datasetId,
      team_id: 't1',
      name: 'SciFact',
      intro: '',
      vector_model: 'local-embed',
      vector_dimensions: EMBED_DIMS,
      agent_model: null,
      created_at: 0,
      updated_at: 0,
    })
    .execute();

  const collections = [],
    items = [],
    indexes = [];
  const docOfData = new Map();
  for (const doc of data.docs) {
    const cid = `c${doc.id}`;
    collections.push({
      id: cid,
      dataset_id: datasetId,
      team_id: 't1',
      name: doc.id,
      type: 'text',
      source: null,
      training_type: 'chunk',
      chunk_size: 128,
      chunk_splitter: null,
      qa_prompt: null,
      metadata: '{}',
      raw_text: null,
      created_at: 0,
      updated_at: 0,
    });
    if (layout === 'chunks') {
      doc.chunks.forEach((chunk, i) => {
        const id = `${doc.id}-${i}`;
        items.push({
          id,
          dataset_id: datasetId,
          collection_id: cid,
          team_id: 't1',
          q: chunk,
          a: '',
          chunk_index: i,
          title_path: '[]',
          created_at: 0,
          updated_at: 0,
        });
        indexes.push({ data_id: id, dataset_id: datasetId, text: chunk, is_default: true });
        docOfData.set(id, doc.id);
      });
    } else {
      items.push({
        id: doc.id,
        dataset_id: datasetId,
        collection_id: cid,
        team_id: 't1',
        q: doc.title,
        a: doc.text,
        chunk_index: 0,
        title_path: '[]',
        created_at: 0,
        updated_at: 0,
      });
      for (const chunk of doc.chunks) indexes.push({ data_id: doc.id, dataset_id: datasetId, text: chunk, is_default: false });
      docOfData.set(doc.id, doc.id);
    }
  }
  for (let i = 0; i < collections.length; i += 1000)
    await db
      .insertInto('collections')
      .values(collections.slice(i, i + 1000))
      .execute();
  for (let i = 0; i < items.length; i += 1000)
    await db
      .insertInto('data')
      .values(items.slice(i, i + 1000))
      .execute();
  const withIds = [];
  for (let i = 0; i < indexes.length; i += 1000) {
    const part = indexes.slice(i, i + 1000);
    const ids = await db.insertInto('data_indexes').values(part).returning('id').execute();
    ids.forEach((r, j) => withIds.push({ ...part[j], id: r.id }));
  }
  const rowsAt = performance.now();

  await indexForSearch(
    db,
    items.map((d) => ({ dataId: d.id, datasetId, text: d.a ? `${d.q}\n${d.a}` : d.q })),
  );
  const postingsAt = performance.now();

  const vectors = [];
  for (const ix of withIds) {
    const v = data.vec(ix.text);
    if (v) vectors.push({ indexId: ix.id, dataId: ix.data_id, datasetId, vector: v });
  }
  // 5,000 a call: storeVectors writes them 500 a statement in one transaction.
  for (let i = 0; i < vectors.length; i += 5000) await storeVectors(db, EMBED_DIMS, vectors.slice(i, i + 5000));
  const vectorsAt = performance.now();

  const s = (a, b) => ((b - a) / 1000).toFixed(1);
  log(
    `indexed ${items.length} data items (${collections.length} collections) and ${vectors.length} vectors of ${withIds.length} chunks in ${s(started, vectorsAt)} s: ` +
      `rows ${s(started, rowsAt)} s, BM25 postings ${s(rowsAt, postingsAt)} s, vectors + HNSW ${s(postingsAt, vectorsAt)} s` +
      (vectors.length < withIds.length ? ` (${withIds.length - vectors.length} chunks have no cached vector: BENCH_CACHED_ONLY)` : ''),
  );
  return { db, datasetId, docOf: (id) => docOfData.get(id) ?? id };
}
