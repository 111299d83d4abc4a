// The SQL of a link collection synced again (link-sync.ts): its current chunks,
// the change a sync makes, the superseded chunks removed once nothing of the
// collection waits to be indexed, and the links due for a scheduled sync.
import { sql } from 'kysely';
import type { PlatformDb } from '../store/database.js';
import type { CollectionRow, Db } from './store.js';

/** A scheduled sync's period. */
export const SYNC_PERIOD_MS = { daily: 86_400_000, weekly: 7 * 86_400_000 } as const;

export class SyncStore {
  constructor(private readonly db: PlatformDb) {}

  /** The collection's chunks as they are now (superseded ones left out), in order. */
  currentChunks(collectionId: string): Promise<{ id: string; q: string; a: string; chunk_index: number }[]> {
    return this.db
      .selectFrom('data')
      .select(['id', 'q', 'a', 'chunk_index'])
      .where('collection_id', '=', collectionId)
      .where('superseded_at', 'is', null)
      .orderBy('chunk_index')
      .execute();
  }

  /**
   * A sync's change, in `tx` with the new chunks' insert: the chunks kept take
   * their new places, the ones the page no longer has are superseded, and the
   * collection remembers the text it was made of and when it was read.
   */
  async applySync(
    tx: Db,
    change: { collectionId: string; keep: { id: string; chunkIndex: number }[]; supersede: string[]; rawText: string | null; now: number },
  ): Promise<void> {
    const { collectionId, keep, supersede, now } = change;
    if (keep.length) {
      await sql`update data set chunk_index = k.chunk_index, updated_at = ${now}
        from (select unnest(${keep.map((k) => k.id)}::text[]) as id, unnest(${keep.map((k) => k.chunkIndex)}::int[]) as chunk_index) k
        where data.id = k.id and data.collection_id = ${collectionId}`.execute(tx);
    }
    if (supersede.length) {
      await sql`update data set superseded_at = ${now} where collection_id = ${collectionId} and id = any(${supersede}::text[])`.execute(tx);
    }
    await tx.updateTable('collections').set({ raw_text: change.rawText, synced_at: now, updated_at: now }).where('id', '=', collectionId).execute();
  }

  /** The link collection of an address in a dataset, if there is one. */
  async linkCollection(teamId: string, datasetId: string, url: string): Promise<string | undefined> {
    const row = await this.db
      .selectFrom('collections')
      .select('id')
      .where('team_id', '=', teamId)
      .where('dataset_id', '=', datasetId)
      .where('type', '=', 'link')
      .where('source', '=', url)
      .executeTakeFirst();
    return row?.id;
  }

  /** Only the read time: the page had not changed. */
  async markRead(collectionId: string, now: number): Promise<void> {
    await this.db.updateTable('collections').set({ synced_at: now }).where('id', '=', collectionId).execute();
  }

  /**
   * Removes the superseded chunks of collections (all, or the one given) that
   * have nothing waiting in the indexing queue (nothing queued, indexing or
   * failed): their new chunks are searchable. Returns how many went.
   */
  async retireSuperseded(collectionId?: string): Promise<number> {
    const only = collectionId ? sql`and d.collection_id = ${collectionId}` : sql``;
    const { rows } = await sql<{ n: number }>`with gone as (
        delete from data d where d.superseded_at is not null ${only}
          and not exists (select 1 from training_queue q where q.collection_id = d.collection_id)
        returning 1)
      select count(*)::int as n from gone`.execute(this.db);
    return Number(rows[0]?.n ?? 0);
  }

  async setSchedule(teamId: string, id: string, change: { name?: string; syncSchedule?: CollectionRow['sync_schedule'] }, now = Date.now()): Promise<boolean> {
    const r = await this.db
      .updateTable('collections')
      .set({
        ...(change.name !== undefined ? { name: change.name } : {}),
        ...(change.syncSchedule !== undefined ? { sync_schedule: change.syncSchedule } : {}),
        updated_at: now,
      })
      .where('id', '=', id)
      .where('team_id', '=', teamId)
      .executeTakeFirst();
    return Number(r.numUpdatedRows) > 0;
  }

  /**
   * Claims one link collection whose scheduled sync is due (its read time set
   * to now, so no other process takes it), or none.
   */
  async claimDueSync(now = Date.now()): Promise<CollectionRow | undefined> {
    const { rows } = await sql<CollectionRow>`update collections set synced_at = ${now}
      where id = (select id from collections where type = 'link' and training_type = 'chunk' and (
          (sync_schedule = 'daily' and coalesce(synced_at, created_at) <= ${now - SYNC_PERIOD_MS.daily}) or
          (sync_schedule = 'weekly' and coalesce(synced_at, created_at) <= ${now - SYNC_PERIOD_MS.weekly}))
        order by coalesce(synced_at, created_at) limit 1 for update skip locked)
      returning *`.execute(this.db);
    return rows[0];
  }
}
