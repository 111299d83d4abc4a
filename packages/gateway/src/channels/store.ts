// SQL for channels and the per-model auto-disable state.
import type { Kysely } from 'kysely';
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
    const r = await this.db.insertInto('channels').values(row).executeTakeFirstOrThrow();
    if (r.insertId !== undefined) return Number(r.insertId);
    const last = await this.db.selectFrom('channels').select('id').orderBy('id', 'desc').limit(1).executeTakeFirstOrThrow();
    return last.id;
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
    await this.db.deleteFrom('channel_model_state').where('channel_id', '=', channelId).where('model', '=', model).execute();
    await this.db.insertInto('channel_model_state').values({ channel_id: channelId, model, reason, disabled_at: at }).execute();
  }

  async enableModel(channelId: number, model?: string): Promise<void> {
    let q = this.db.deleteFrom('channel_model_state').where('channel_id', '=', channelId);
    if (model !== undefined) q = q.where('model', '=', model);
    await q.execute();
  }
}
