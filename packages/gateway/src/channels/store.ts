// SQL for channels and the per-model auto-disable state.
import { MysqlAdapter, type Kysely } from 'kysely';
import type { ChannelRow, ChannelUpdate, GatewayTables, NewChannel } from '../store/schema.js';

export interface DisabledModel {
  channel_id: number;
  model: string;
  disabled_at: number;
  reason: string;
}

export class ChannelsStore {
  constructor(private readonly db: Kysely<GatewayTables>) {}

  list(): Promise<ChannelRow[]> {
    return this.db.selectFrom('channels').selectAll().orderBy('id').execute();
  }

  byId(id: number): Promise<ChannelRow | undefined> {
    return this.db.selectFrom('channels').selectAll().where('id', '=', id).executeTakeFirst();
  }

  byEnvProvider(env: string): Promise<ChannelRow | undefined> {
    return this.db.selectFrom('channels').selectAll().where('env_provider', '=', env).executeTakeFirst();
  }

  async insert(row: NewChannel): Promise<number> {
    // PostgreSQL has no insertId: RETURNING names this statement's row (reading back the
    // highest id would name another request's or another process's row under concurrency).
    if (this.db.getExecutor().adapter.supportsReturning) {
      return (await this.db.insertInto('channels').values(row).returning('id').executeTakeFirstOrThrow()).id;
    }
    const r = await this.db.insertInto('channels').values(row).executeTakeFirstOrThrow();
    return Number(r.insertId);
  }

  async update(id: number, patch: ChannelUpdate): Promise<void> {
    await this.db.updateTable('channels').set(patch).where('id', '=', id).execute();
  }

  async delete(id: number): Promise<boolean> {
    await this.db.deleteFrom('channel_model_state').where('channel_id', '=', id).execute();
    const r = await this.db.deleteFrom('channels').where('id', '=', id).executeTakeFirst();
    return Number(r.numDeletedRows) > 0;
  }

  disabledModels(): Promise<DisabledModel[]> {
    return this.db.selectFrom('channel_model_state').selectAll().execute() as Promise<DisabledModel[]>;
  }

  async disableModel(channelId: number, model: string, reason: string, at: number): Promise<void> {
    // One upsert: several processes may disable the same channel model at the same moment,
    // and a delete + insert pair then fails on the primary key (and briefly shows it enabled).
    const insert = this.db.insertInto('channel_model_state').values({ channel_id: channelId, model, reason, disabled_at: at });
    if (this.db.getExecutor().adapter instanceof MysqlAdapter) await insert.onDuplicateKeyUpdate({ reason, disabled_at: at }).execute();
    else await insert.onConflict((oc) => oc.columns(['channel_id', 'model']).doUpdateSet({ reason, disabled_at: at })).execute();
  }

  async enableModel(channelId: number, model?: string): Promise<void> {
    let q = this.db.deleteFrom('channel_model_state').where('channel_id', '=', channelId);
    if (model !== undefined) q = q.where('model', '=', model);
    await q.execute();
  }
}
