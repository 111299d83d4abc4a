// The platform tables the indexing processors read and (for QA) write: data
// rows and their indexes. Kept here so that only store files write SQL.
import { sql } from 'kysely';
import type { PlatformDb } from '../store/database.js';

export interface IndexText {
  dataId: string;
  datasetId: string;
  collectionId: string;
  teamId: string;
  q: string;
  a: string;
  /** null when the data row has no index rows at all. */
  indexId: number | null;
  text: string | null;
}

/**
 * Every data row of `dataIds` with its index texts, in one round trip (left
 * join: rows without indexes too). The ids are repeated on data_indexes so
 * that the plan is index lookups even without statistics (PGlite never
 * analyzes on its own; measured: a seq scan of data_indexes per batch).
 */
export async function loadIndexTexts(db: PlatformDb, dataIds: readonly string[]): Promise<IndexText[]> {
  if (!dataIds.length) return [];
  type Row = {
    data_id: string;
    dataset_id: string;
    collection_id: string;
    team_id: string;
    q: string;
    a: string;
    index_id: number | null;
    text: string | null;
  };
  const { rows } = await sql<Row>`
    select d.id as data_id, d.dataset_id, d.collection_id, d.team_id, d.q, d.a, i.id as index_id, i.text
    from data d left join data_indexes i on i.data_id = d.id and i.data_id in (${sql.join(dataIds.map((id) => sql`${id}`))})
    where d.id in (${sql.join(dataIds.map((id) => sql`${id}`))})
    order by d.id, i.id`.execute(db);
  return rows.map((r) => ({
    dataId: r.data_id,
    datasetId: r.dataset_id,
    collectionId: r.collection_id,
    teamId: r.team_id,
    q: r.q,
    a: r.a,
    indexId: r.index_id === null ? null : Number(r.index_id),
    text: r.text ?? null,
  }));
}

/** The QA prompt of each collection (null: the default prompt). */
export async function loadQaPrompts(db: PlatformDb, collectionIds: readonly string[]): Promise<Map<string, string | null>> {
  if (!collectionIds.length) return new Map();
  const rows = await db
    .selectFrom('collections')
    .select(['id', 'qa_prompt'])
    .where('id', 'in', [...collectionIds])
    .execute();
  return new Map(rows.map((r) => [r.id, r.qa_prompt ?? null]));
}

export interface NewDataRow {
  id: string;
  datasetId: string;
  collectionId: string;
  teamId: string;
  q: string;
  a: string;
  chunkIndex: number;
}

/** Inserts data rows, each with its default index (q and a), returning nothing: ids come from the caller. */
export async function insertDataWithIndexes(tx: PlatformDb, rows: readonly NewDataRow[], now = Date.now()): Promise<void> {
  if (!rows.length) return;
  await tx
    .insertInto('data')
    .values(
      rows.map((r) => ({
        id: r.id,
        dataset_id: r.datasetId,
        collection_id: r.collectionId,
        team_id: r.teamId,
        q: r.q,
        a: r.a,
        chunk_index: r.chunkIndex,
        title_path: '[]',
        created_at: now,
        updated_at: now,
      })),
    )
    .execute();
  await tx
    .insertInto('data_indexes')
    .values(rows.map((r) => ({ data_id: r.id, dataset_id: r.datasetId, text: r.a ? `${r.q}\n${r.a}` : r.q, is_default: true })))
    .execute();
}
