// The channels a process relays through, held in memory and re-read from the
// store every CHANNEL_REFRESH_MS, so that several gateway processes on one
// database agree on what is enabled (a known complaint: state differs between
// nodes). Selection: highest priority tier first, weighted random inside it,
// never a channel that already failed this request, nor one whose every key
// is disabled (key-pool.ts).
import { keyHint } from '../accounts/secrets.js';
import { providerOf, type ChannelOptions, type Endpoint, type Provider } from '../providers/index.js';
import { LOCAL_PROVIDER_TYPE } from '../providers/local/index.js';
import type { ChannelRow } from '../store/schema.js';
import { channelGroups } from '../accounts/groups-store.js';
import type { KeyBox } from './key-box.js';
import { KeyPool, PoolKey, splitKeys, type DisabledKey } from './key-pool.js';
import type { ChannelsStore, DisabledModel } from './store.js';

export interface Channel {
  id: number;
  name: string;
  type: string;
  provider: Provider;
  baseUrl: string;
  /** The key a request sends: a pool's first key here, the picked one in the pool's own copies of the channel. */
  key: string;
  /** Set when the key holds several keys (one a line); undefined for one key and in a pool key's copy. */
  pool: KeyPool<Channel> | undefined;
  models: string[];
  modelMapping: Record<string, string>;
  options: ChannelOptions;
  priority: number;
  weight: number;
  enabled: boolean;
  source: 'env' | 'admin';
  envProvider: string | null;
  /** The price groups whose callers it serves; empty: every group. */
  groups: string[];
}

/** Whether a caller of `group` may be relayed through the channel. */
export function servesGroup(channel: Channel, group: string | undefined): boolean {
  return group === undefined || channel.groups.length === 0 || channel.groups.includes(group);
}

export function channelFromRow(row: ChannelRow, keyBox: KeyBox, processProviders?: ReadonlyMap<string, Provider>): Channel | undefined {
  const provider = processProviders?.get(row.type) ?? providerOf(row.type);
  if (!provider) return undefined;
  const keys = splitKeys(keyBox.open(row.key_cipher));
  const channel: Channel = {
    id: row.id,
    name: row.name,
    type: row.type,
    provider,
    baseUrl: row.base_url,
    key: keys[0] ?? '',
    pool: undefined,
    models: JSON.parse(row.models) as string[],
    modelMapping: JSON.parse(row.model_mapping) as Record<string, string>,
    options: JSON.parse(row.options) as ChannelOptions,
    priority: row.priority,
    weight: row.weight,
    enabled: row.status === 'enabled',
    source: row.source,
    envProvider: row.env_provider,
    groups: channelGroups(row.groups),
  };
  if (keys.length > 1) {
    // Each key's copy of the channel is made once here, so that a request picks one and allocates nothing.
    const pool = new KeyPool<Channel>(channel.options.keyStrategy === 'random' ? 'random' : 'round-robin');
    keys.forEach((key, i) => pool.add(new PoolKey(i, keyBox.fingerprint(key), keyHint(key), { ...channel, key })));
    channel.pool = pool;
  }
  return channel;
}

/** A state set in this process lately: a refresh that read the store just before the write must not undo it. */
interface Override<T> {
  state: T | null;
  at: number;
}

/** Re-applies recent local changes over a snapshot, forgetting old ones and those of channels gone. */
function applyOverrides<T>(target: Map<string, T>, overrides: Map<string, Override<T>>, ids: Set<number>, now: number, keepMs: number): void {
  for (const [key, o] of overrides) {
    if (now - o.at > keepMs || !ids.has(Number(key.slice(0, key.indexOf(':'))))) overrides.delete(key);
    else if (o.state) target.set(key, o.state);
    else target.delete(key);
  }
}

/** A pool whose every key is disabled: the channel cannot serve until the re-test or an admin enables one. */
function keysSpent(ch: Channel): boolean {
  return ch.pool !== undefined && ch.pool.enabledCount === 0;
}

export class ChannelRegistry {
  private channels: Channel[] = [];
  private byModel = new Map<string, Channel[]>();
  private disabled = new Map<string, DisabledModel>();
  private timer: NodeJS.Timeout | undefined;
  private loadErrors: string[] = [];
  /**
   * Local disables/enables not yet certain to be in a snapshot: a refresh that
   * read the store just before the write must not undo them. Kept for a while
   * and re-applied on every load.
   */
  private overrides = new Map<string, Override<DisabledModel>>();
  private overrideMs = 30_000;
  /** Disabled keys of pools, by `<channel id>:<key fingerprint>`, with their own overrides. */
  private disabledKeyMap = new Map<string, DisabledKey>();
  private keyOverrides = new Map<string, Override<DisabledKey>>();

  /**
   * `processProviders` are providers bound to this process (the in-process
   * local models); they take precedence over the static provider list.
   */
  constructor(
    private readonly store: ChannelsStore,
    private readonly keyBox: KeyBox,
    private readonly processProviders: ReadonlyMap<string, Provider> = new Map(),
  ) {}

  async load(): Promise<void> {
    const [rows, disabled, disabledKeys] = await Promise.all([this.store.list(), this.store.disabledModels(), this.store.disabledKeys()]);
    const channels: Channel[] = [];
    const problems: string[] = [];
    for (const row of rows) {
      try {
        const ch = channelFromRow(row, this.keyBox, this.processProviders);
        if (ch) channels.push(ch);
        else if (row.type === LOCAL_PROVIDER_TYPE) problems.push(`channel ${row.id} (local models) is not served by this process: LOCAL_MODELS=off`);
        else problems.push(`channel ${row.id} has unknown type ${row.type}`);
      } catch (err) {
        problems.push(`channel ${row.id}: ${(err as Error).message}`);
      }
    }
    const now = Date.now();
    const ids = new Set(channels.map((c) => c.id));
    const disabledMap = new Map(disabled.map((d) => [`${d.channel_id}:${d.model}`, d]));
    applyOverrides(disabledMap, this.overrides, ids, now, this.overrideMs);
    const keyMap = new Map(disabledKeys.map((d) => [`${d.channel_id}:${d.key_fp}`, d]));
    applyOverrides(keyMap, this.keyOverrides, ids, now, this.overrideMs);
    const before = new Map(this.channels.map((c) => [c.id, c]));
    for (const ch of channels) {
      if (!ch.pool) continue;
      ch.pool.continueFrom(before.get(ch.id)?.pool);
      for (const k of ch.pool.keys) {
        const state = keyMap.get(`${ch.id}:${k.fp}`);
        if (state) ch.pool.setState(k.fp, state);
      }
    }
    this.loadErrors = problems;
    this.channels = channels;
    this.disabled = disabledMap;
    this.disabledKeyMap = keyMap;
    const byModel = new Map<string, Channel[]>();
    for (const ch of channels) {
      if (!ch.enabled) continue;
      for (const m of ch.models) {
        const list = byModel.get(m);
        if (list) list.push(ch);
        else byModel.set(m, [ch]);
      }
    }
    this.byModel = byModel;
  }

  startRefresh(everyMs: number, onError: (err: Error) => void): void {
    this.overrideMs = Math.max(30_000, everyMs * 3);
    this.timer = setInterval(() => this.load().catch(onError), everyMs);
    this.timer.unref();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
  }

  problems(): string[] {
    return this.loadErrors;
  }

  all(): Channel[] {
    return this.channels;
  }

  get(id: number): Channel | undefined {
    return this.channels.find((c) => c.id === id);
  }

  isModelDisabled(channelId: number, model: string): DisabledModel | undefined {
    return this.disabled.get(`${channelId}:${model}`);
  }

  disabledModels(): DisabledModel[] {
    return [...this.disabled.values()];
  }

  markDisabled(d: DisabledModel): void {
    const key = `${d.channel_id}:${d.model}`;
    this.disabled.set(key, d);
    this.overrides.set(key, { state: d, at: Date.now() });
  }

  markEnabled(channelId: number, model: string): void {
    const key = `${channelId}:${model}`;
    this.disabled.delete(key);
    this.overrides.set(key, { state: null, at: Date.now() });
  }

  /** Disabled keys of pools whose key still holds them (a key taken out of a pool is forgotten). */
  disabledKeys(): DisabledKey[] {
    return [...this.disabledKeyMap.values()].filter((d) => this.get(d.channel_id)?.pool?.keys.some((k) => k.fp === d.key_fp));
  }

  markKeyDisabled(d: DisabledKey): void {
    const key = `${d.channel_id}:${d.key_fp}`;
    this.disabledKeyMap.set(key, d);
    this.keyOverrides.set(key, { state: d, at: Date.now() });
    this.get(d.channel_id)?.pool?.setState(d.key_fp, d);
  }

  markKeyEnabled(channelId: number, fp: string): void {
    const key = `${channelId}:${fp}`;
    this.disabledKeyMap.delete(key);
    this.keyOverrides.set(key, { state: null, at: Date.now() });
    this.get(channelId)?.pool?.setState(fp, undefined);
  }

  /** Models some enabled channel serves right now (to callers of `group`, when given). */
  servedModels(group?: string): string[] {
    return [...this.byModel.keys()].filter((m) =>
      this.byModel.get(m)!.some((c) => !this.disabled.has(`${c.id}:${m}`) && !keysSpent(c) && servesGroup(c, group)),
    );
  }

  /** The first enabled channel that serves the model (to callers of `group`, when given): what /v1/models describes it by. */
  channelOf(model: string, group?: string): Channel | undefined {
    return this.byModel.get(model)?.find((c) => servesGroup(c, group));
  }

  /**
   * Picks a channel for the model, skipping those in `exclude`, those whose
   * provider lacks the endpoint and those that do not serve `group`.
   */
  pick(model: string, exclude?: ReadonlySet<number>, endpoint?: Endpoint, group?: string): Channel | undefined {
    const list = this.byModel.get(model);
    if (!list) return undefined;
    let best = -Infinity;
    let tier: Channel[] = [];
    for (const ch of list) {
      if (exclude?.has(ch.id) || this.disabled.has(`${ch.id}:${model}`)) continue;
      if (ch.pool !== undefined && ch.pool.enabledCount === 0) continue;
      if (endpoint && !ch.provider.endpoints.includes(endpoint)) continue;
      if (!servesGroup(ch, group)) continue;
      if (ch.priority > best) {
        best = ch.priority;
        tier = [ch];
      } else if (ch.priority === best) tier.push(ch);
    }
    if (tier.length <= 1) return tier[0];
    let total = 0;
    for (const ch of tier) total += Math.max(ch.weight, 0);
    if (total <= 0) return tier[Math.floor(Math.random() * tier.length)];
    let r = Math.random() * total;
    for (const ch of tier) {
      r -= Math.max(ch.weight, 0);
      if (r < 0) return ch;
    }
    return tier[tier.length - 1];
  }
}
