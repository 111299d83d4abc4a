// Hand-made datasets for the retrieval tests: rows written straight into the
// platform store (migrated with retrievalMigrations), small unit vectors.
import type { Kysely } from 'kysely';
import { openPlatformStore, type PlatformStore } from '../src/store/db.js';
import { retrievalMigrations } from '../src/retrieval/schema.js';
import { indexForSearch, storeVectors } from '../src/retrieval/store.js';

export async function openRetrievalStore(): Promise<PlatformStore> {
  const store = await openPlatformStore({ url: 'pglite:memory', migrations: retrievalMigrations });
  await store.db.insertInto('teams').values({ id: 't1', name: 'team', created_at: 0 }).execute();
  return store;
}

export async function addDataset(db: Kysely<any>, id: string): Promise<void> {
  await db
    .insertInto('datasets')
    .values({ id, team_id: 't1', name: id, intro: '', vector_model: 'm', vector_dimensions: null, agent_model: null, created_at: 0, updated_at: 0 })
    .execute();
}

export interface FixtureDoc {
  id: string;
  q: string;
  a?: string;
  vector?: number[];
  collection?: string;
}

/** A text collection of the dataset, made unless it exists. */
export async function ensureCollection(db: Kysely<any>, datasetId: string, collectionId: string, name = collectionId): Promise<void> {
  const exists = await db.selectFrom('collections').select('id').where('id', '=', collectionId).executeTakeFirst();
  if (exists) return;
  await db
    .insertInto('collections')
    .values({
      id: collectionId,
      dataset_id: datasetId,
      team_id: 't1',
      name,
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
}

/** Data rows in one collection of the dataset (`c-<datasetId>`), chunk_index in the order given; no indexes. */
export async function addDataRows(db: Kysely<any>, datasetId: string, rows: { id: string; q: string }[]): Promise<void> {
  const collectionId = `c-${datasetId}`;
  await ensureCollection(db, datasetId, collectionId);
  await db
    .insertInto('data')
    .values(
      rows.map((r, i) => ({
        id: r.id,
        dataset_id: datasetId,
        collection_id: collectionId,
        team_id: 't1',
        q: r.q,
        a: '',
        chunk_index: i,
        title_path: '[]',
        created_at: 0,
        updated_at: 0,
      })),
    )
    .execute();
}

/** One collection per doc (named by the doc id unless given), one default index, its vector if given. */
export async function addDocs(db: Kysely<any>, datasetId: string, docs: FixtureDoc[]): Promise<void> {
  for (const d of docs) {
    const collectionId = d.collection ?? `c-${d.id}`;
    await ensureCollection(db, datasetId, collectionId, `${collectionId}.txt`);
    await db
      .insertInto('data')
      .values({
        id: d.id,
        dataset_id: datasetId,
        collection_id: collectionId,
        team_id: 't1',
        q: d.q,
        a: d.a ?? '',
        chunk_index: 0,
        title_path: '[]',
        created_at: 0,
        updated_at: 0,
      })
      .execute();
    const index = await db
      .insertInto('data_indexes')
      .values({ data_id: d.id, dataset_id: datasetId, text: d.q, is_default: true })
      .returning('id')
      .executeTakeFirstOrThrow();
    if (d.vector) await storeVectors(db, d.vector.length, [{ indexId: index.id, dataId: d.id, datasetId, vector: d.vector }]);
  }
  await indexForSearch(
    db,
    docs.map((d) => ({ dataId: d.id, datasetId, text: d.a ? `${d.q}\n${d.a}` : d.q })),
  );
}

/** A unit vector pointing mostly along axis `axis`, tilted towards `toward` by `tilt`. */
export function unit(dims: number, axis: number, toward = (axis + 1) % dims, tilt = 0): number[] {
  const v = new Array<number>(dims).fill(0);
  v[axis] = 1;
  v[toward] = (v[toward] ?? 0) + tilt;
  const n = Math.hypot(...v);
  return v.map((x) => x / n);
}
