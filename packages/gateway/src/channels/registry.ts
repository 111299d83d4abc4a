// The channels a process relays through, held in memory and re-read from the
// store every CHANNEL_REFRESH_MS, so that several gateway processes on one
// database agree on what is enabled (a known complaint: state differs between
// nodes). Selection: highest priority tier first, weighted random inside it,
// never a channel that already failed this request.
import { providerOf, type ChannelOptions, type Endpoint, type Provider } from '../providers/index.js';
import { LOCAL_PROVIDER_TYPE } from '../providers/local/index.js';
import type { ChannelRow } from '../store/schema.js';
import type { KeyBox } from './key-box.js';
import type { ChannelsStore, DisabledModel } from './store.js';

export interface Channel {
  id: number;
  name: string;
  type: string;
  provider: Provider;
  baseUrl: string;
  key: string;
  models: string[];
  modelMapping: Record<string, string>;
  options: ChannelOptions;
  priority: number;
  weight: number;
  enabled: boolean;
  source: 'env' | 'admin';
  envProvider: string | null;
}

export function channelFromRow(row: ChannelRow, keyBox: KeyBox, processProviders?: ReadonlyMap<string, Provider>): Channel | undefined {
  const provider = processProviders?.get(row.type) ?? providerOf(row.type);
  if (!provider) return undefined;
  return {
    id: row.id,
    name: row.name,
    type: row.type,
    provider,
    baseUrl: row.base_url,
    key: keyBox.open(row.key_cipher),
    models: JSON.parse(row.models) as string[],
    modelMapping: JSON.parse(row.model_mapping) as Record<string, string>,
    options: JSON.parse(row.options) as ChannelOptions,
    priority: row.priority,
    weight: row.weight,
    enabled: row.status === 'enabled',
    source: row.source,
    envProvider: row.env_provider,
  };
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
  private overrides = new Map<string, { state: DisabledModel | null; at: number }>();
  private overrideMs = 30_000;

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
    const [rows, disabled] = await Promise.all([this.store.list(), this.store.disabledModels()]);
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
    this.loadErrors = problems;
    this.channels = channels;
    this.disabled = new Map(disabled.map((d) => [`${d.channel_id}:${d.model}`, d]));
    const now = Date.now();
    const ids = new Set(channels.map((c) => c.id));
    for (const [key, o] of this.overrides) {
      if (now - o.at > this.overrideMs || !ids.has(Number(key.slice(0, key.indexOf(':'))))) this.overrides.delete(key);
      else if (o.state) this.disabled.set(key, o.state);
      else this.disabled.delete(key);
    }
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

  /** Models some enabled channel serves right now. */
  servedModels(): string[] {
    return [...this.byModel.keys()].filter((m) => this.byModel.get(m)!.some((c) => !this.disabled.has(`${c.id}:${m}`)));
  }

  /** Picks a channel for the model, skipping those in `exclude` and those whose provider lacks the endpoint. */
  pick(model: string, exclude?: ReadonlySet<number>, endpoint?: Endpoint): Channel | undefined {
    const list = this.byModel.get(model);
    if (!list) return undefined;
    let best = -Infinity;
    let tier: Channel[] = [];
    for (const ch of list) {
      if (exclude?.has(ch.id) || this.disabled.has(`${ch.id}:${model}`)) continue;
      if (endpoint && !ch.provider.endpoints.includes(endpoint)) continue;
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
