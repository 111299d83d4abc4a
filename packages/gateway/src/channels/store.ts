// SQL for channels, the per-model auto-disable state and the disabled keys of pools.
import { MysqlAdapter, sql, type Kysely } from 'kysely';
import type { DisabledKey } from './key-pool.js';
import type { ChannelRow, ChannelUpdate, GatewayTables, NewChannel } from '../store/schema.js';

export interface DisabledModel {
  channel_id: number;
  model: string;
  disabled_at: number;
  reason: string;
  /** JSON of the failures that disabled it (health.ts); null for rows from before they were kept. */
  failures?: string | null;
}

/** A channel model's latest test. */
export interface ChannelTestRow {
  channel_id: number;
  model: string;
  tested_at: number;
  ok: boolean;
  latency_ms: number;
  status: number | null;
  error: string | null;
}

export interface ChannelFilter {
  /** Part of the name, base URL or a model name, any case. */
  q?: string;
  /** enabled / disabled: the channel's status; auto_disabled: some model or key of it is auto-disabled. */
  status?: 'enabled' | 'disabled' | 'auto_disabled';
}

/** `s` as a LIKE pattern that matches it literally anywhere (backslash is the default escape on every store). */
function containsPattern(s: string): string {
  return `%${s.toLowerCase().replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
}

export class ChannelsStore {
  constructor(private readonly db: Kysely<GatewayTables>) {}

  list(): Promise<ChannelRow[]> {
    return this.db.selectFrom('channels').selectAll().orderBy('id').execute();
  }

  /** One page of channels in id order, and how many match. */
  async page(filter: ChannelFilter, offset: number, limit: number): Promise<{ rows: ChannelRow[]; total: number }> {
    let q = this.db.selectFrom('channels');
    if (filter.q) {
      const pattern = containsPattern(filter.q);
      q = q.where((eb) =>
        eb.or([
          eb(eb.fn('lower', ['name']), 'like', pattern),
          eb(eb.fn('lower', ['base_url']), 'like', pattern),
          eb(eb.fn('lower', ['models']), 'like', pattern),
        ]),
      );
    }
    if (filter.status === 'enabled' || filter.status === 'disabled') q = q.where('status', '=', filter.status);
    if (filter.status === 'auto_disabled') {
      q = q.where((eb) =>
        eb.or([
          eb('id', 'in', eb.selectFrom('channel_model_state').select('channel_id')),
          eb('id', 'in', eb.selectFrom('channel_key_state').select('channel_id')),
        ]),
      );
    }
    const [rows, count] = await Promise.all([
      q.selectAll().orderBy('id').limit(limit).offset(offset).execute(),
      q.select(sql<number>`count(*)`.as('n')).executeTakeFirstOrThrow(),
    ]);
    return { rows, total: Number(count.n) };
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
    await this.db.deleteFrom('channel_tests').where('channel_id', '=', id).execute();
    await this.db.deleteFrom('channel_key_state').where('channel_id', '=', id).execute();
    const r = await this.db.deleteFrom('channels').where('id', '=', id).executeTakeFirst();
    return Number(r.numDeletedRows) > 0;
  }

  disabledModels(): Promise<DisabledModel[]> {
    return this.db.selectFrom('channel_model_state').selectAll().execute() as Promise<DisabledModel[]>;
  }

  async disableModel(channelId: number, model: string, reason: string, at: number, failures: string | null = null): Promise<void> {
    // One upsert: several processes may disable the same channel model at the same moment,
    // and a delete + insert pair then fails on the primary key (and briefly shows it enabled).
    const insert = this.db.insertInto('channel_model_state').values({ channel_id: channelId, model, reason, disabled_at: at, failures });
    if (this.db.getExecutor().adapter instanceof MysqlAdapter) await insert.onDuplicateKeyUpdate({ reason, disabled_at: at, failures }).execute();
    else await insert.onConflict((oc) => oc.columns(['channel_id', 'model']).doUpdateSet({ reason, disabled_at: at, failures })).execute();
  }

  /** Keeps a test's result as the channel model's latest (an upsert: any process may test it at once). */
  async saveTest(t: ChannelTestRow): Promise<void> {
    const fields = { tested_at: t.tested_at, ok: t.ok ? 1 : 0, latency_ms: t.latency_ms, status: t.status, error: t.error };
    const insert = this.db.insertInto('channel_tests').values({ channel_id: t.channel_id, model: t.model, ...fields });
    if (this.db.getExecutor().adapter instanceof MysqlAdapter) await insert.onDuplicateKeyUpdate(fields).execute();
    else await insert.onConflict((oc) => oc.columns(['channel_id', 'model']).doUpdateSet(fields)).execute();
  }

  /** The latest tests of these channels' models. */
  async tests(channelIds: number[]): Promise<ChannelTestRow[]> {
    if (channelIds.length === 0) return [];
    const rows = await this.db.selectFrom('channel_tests').selectAll().where('channel_id', 'in', channelIds).execute();
    return rows.map((r) => ({ ...r, tested_at: Number(r.tested_at), ok: Number(r.ok) === 1 }));
  }

  async enableModel(channelId: number, model?: string): Promise<void> {
    let q = this.db.deleteFrom('channel_model_state').where('channel_id', '=', channelId);
    if (model !== undefined) q = q.where('model', '=', model);
    await q.execute();
  }

  disabledKeys(): Promise<DisabledKey[]> {
    return this.db.selectFrom('channel_key_state').selectAll().execute();
  }

  /** Disables one key of a pool (an upsert: several processes may disable it at once). */
  async disableKey(d: DisabledKey): Promise<void> {
    const fields = { reason: d.reason, disabled_at: d.disabled_at };
    const insert = this.db.insertInto('channel_key_state').values(d);
    if (this.db.getExecutor().adapter instanceof MysqlAdapter) await insert.onDuplicateKeyUpdate(fields).execute();
    else await insert.onConflict((oc) => oc.columns(['channel_id', 'key_fp']).doUpdateSet(fields)).execute();
  }

  /** Enables a channel's key (by fingerprint), or all its keys. */
  async enableKeys(channelId: number, fp?: string): Promise<void> {
    let q = this.db.deleteFrom('channel_key_state').where('channel_id', '=', channelId);
    if (fp !== undefined) q = q.where('key_fp', '=', fp);
    await q.execute();
  }

  /** Forgets the state of keys no longer in the channel's pool (its key was replaced). */
  async keepKeyStates(channelId: number, fps: string[]): Promise<void> {
    let q = this.db.deleteFrom('channel_key_state').where('channel_id', '=', channelId);
    if (fps.length) q = q.where('key_fp', 'not in', fps);
    await q.execute();
  }
}
