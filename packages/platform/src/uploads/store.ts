// SQL for uploads, every query scoped by team.
import type { Insertable, Selectable } from 'kysely';
import type { PlatformDb } from '../store/database.js';
import type { UploadsTable } from './tables.js';

export type UploadRow = Selectable<UploadsTable>;

/** bigint columns come back as strings from some drivers. */
const normalise = (r: UploadRow): UploadRow => ({
  ...r,
  size: Number(r.size),
  created_at: Number(r.created_at),
  expires_at: r.expires_at === null ? null : Number(r.expires_at),
});

export class UploadsStore {
  constructor(private readonly db: PlatformDb) {}

  async insert(row: Insertable<UploadsTable>): Promise<void> {
    await this.db.insertInto('uploads').values(row).execute();
  }

  async get(teamId: string, id: string): Promise<UploadRow | undefined> {
    const r = await this.db.selectFrom('uploads').selectAll().where('team_id', '=', teamId).where('id', '=', id).executeTakeFirst();
    return r && normalise(r);
  }

  async byIdempotencyKey(teamId: string, key: string): Promise<UploadRow | undefined> {
    const r = await this.db.selectFrom('uploads').selectAll().where('team_id', '=', teamId).where('idempotency_key', '=', key).executeTakeFirst();
    return r && normalise(r);
  }

  /** The first import of this content in the dataset that still has its collection. */
  async imported(teamId: string, datasetId: string, sha256: string): Promise<UploadRow | undefined> {
    const r = await this.db
      .selectFrom('uploads')
      .selectAll()
      .where('team_id', '=', teamId)
      .where('dataset_id', '=', datasetId)
      .where('sha256', '=', sha256)
      .where('collection_id', 'is not', null)
      .orderBy('created_at')
      .executeTakeFirst();
    return r && normalise(r);
  }

  async unfinished(teamId: string, datasetId: string, now: number): Promise<UploadRow[]> {
    const rows = await this.db
      .selectFrom('uploads')
      .selectAll()
      .where('team_id', '=', teamId)
      .where('dataset_id', '=', datasetId)
      .where('collection_id', 'is', null)
      .where('expires_at', '>', now)
      .orderBy('created_at', 'desc')
      .limit(100)
      .execute();
    return rows.map(normalise);
  }

  async countUnfinished(teamId: string, now: number): Promise<number> {
    const r = await this.db
      .selectFrom('uploads')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('team_id', '=', teamId)
      .where('collection_id', 'is', null)
      .where('expires_at', '>', now)
      .executeTakeFirstOrThrow();
    return Number(r.n);
  }

  async markImported(id: string, result: { collectionId: string; sha256: string; reused: boolean }): Promise<void> {
    await this.db
      .updateTable('uploads')
      .set({ collection_id: result.collectionId, sha256: result.sha256, reused: result.reused, expires_at: null })
      .where('id', '=', id)
      .execute();
  }

  /** The estimate just answered for a finished, unimported upload: what the user is asked about. */
  async saveEstimate(id: string, estimate: string): Promise<void> {
    await this.db.updateTable('uploads').set({ estimate }).where('id', '=', id).where('collection_id', 'is', null).execute();
  }

  async remove(teamId: string, id: string): Promise<boolean> {
    const r = await this.db.deleteFrom('uploads').where('team_id', '=', teamId).where('id', '=', id).executeTakeFirst();
    return Number(r.numDeletedRows) > 0;
  }

  async exists(id: string): Promise<boolean> {
    return !!(await this.db.selectFrom('uploads').select('id').where('id', '=', id).executeTakeFirst());
  }

  /** Unfinished uploads past their expiry, removed; their ids (whose bytes go too). */
  async removeExpired(now: number): Promise<string[]> {
    const rows = await this.db.deleteFrom('uploads').where('collection_id', 'is', null).where('expires_at', '<=', now).returning('id').execute();
    return rows.map((r) => r.id);
  }
}
