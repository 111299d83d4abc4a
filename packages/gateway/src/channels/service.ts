// Channels as operators manage them: validated create/update/delete, the
// start-up sync of <PROVIDER>_API_KEY variables, and channel tests. Changes
// reload the registry at once in this process (others follow at refresh).
import type { PublicChannel, PublicDisabledModel, PublicModelTest, ChannelPage } from '@kbchat/contracts';
import { errors } from '../errors.js';
import { isUniqueViolation } from '../store/db.js';
import { ENV_WIRE_TYPES, presets, providerOf, type ChannelOptions, type Endpoint } from '../providers/index.js';
import { LOCAL_BASE_URL, LOCAL_PROVIDER_TYPE } from '../providers/local/index.js';
import type { UpstreamClient } from '../relay/upstream.js';
import type { ChannelRow } from '../store/schema.js';
import { channelGroups } from '../accounts/groups-store.js';
import type { ChannelFailure, ChannelHealth } from './health.js';
import type { KeyBox } from './key-box.js';
import { publicKeys, splitKeys } from './key-pool.js';
import type { ChannelRegistry } from './registry.js';
import type { ChannelFilter, ChannelsStore, ChannelTestRow } from './store.js';
import { ChannelTester, type ModelTestResult, type RetestResult, type TestAllResult } from './testing.js';

export type { PublicChannel, PublicDisabledModel, PublicModelTest, ChannelPage };

export type { ChannelModelTestResult, ModelTestResult, RetestResult, TestAllResult } from './testing.js';

/** The failures kept with a disabled model; rows from before they were kept have none. */
function parseFailures(json: string | null | undefined): ChannelFailure[] {
  if (!json) return [];
  try {
    const list = JSON.parse(json) as ChannelFailure[];
    return Array.isArray(list) ? list : [];
  } catch {
    return [];
  }
}

/** The `groups` column: null when the channel serves every group. */
function groupsColumn(groups: string[] | undefined): string | null {
  return groups?.length ? JSON.stringify(groups) : null;
}

export interface ChannelInput {
  name?: string;
  type?: string;
  base_url?: string;
  key?: string;
  models?: string[];
  model_mapping?: Record<string, string>;
  options?: ChannelOptions;
  priority?: number;
  weight?: number;
  status?: 'enabled' | 'disabled';
  /** The groups whose callers it serves; empty: every group. */
  groups?: string[];
}

export interface ChannelsServiceOptions {
  /** Whether a price group exists (accounts/groups.ts): a channel serves only groups that do. */
  groupExists?: (name: string) => Promise<boolean>;
  /** Longest a channel test request may take, body included (ms). */
  testTimeoutMs?: number;
  /** Disabled models of one channel re-tested at once (channels run side by side). */
  retestConcurrency?: number;
}

/** A model the in-process local model server offers, as its /v1/models lists it. */
export interface LocalModelEntry {
  id: string;
  kind: Endpoint;
  [info: string]: unknown;
}

/** The env_provider mark of the local models' channel (one per database). */
const LOCAL_ENV_PROVIDER = 'LOCAL';

/** A channel test's bound when none is configured: a test should answer in seconds. */
export const DEFAULT_TEST_TIMEOUT_MS = 15_000;
const DEFAULT_RETEST_CONCURRENCY = 3;

export class ChannelsService {
  readonly testTimeoutMs: number;
  /** Sends and keeps channel tests, and runs the periodic re-test (testing.ts). */
  readonly tester: ChannelTester;
  private readonly groupExists: (name: string) => Promise<boolean>;

  constructor(
    private readonly store: ChannelsStore,
    private readonly registry: ChannelRegistry,
    private readonly health: ChannelHealth,
    private readonly keyBox: KeyBox,
    private readonly upstream: UpstreamClient,
    opts: ChannelsServiceOptions = {},
  ) {
    this.testTimeoutMs = opts.testTimeoutMs ?? DEFAULT_TEST_TIMEOUT_MS;
    this.groupExists = opts.groupExists ?? (async () => true);
    this.tester = new ChannelTester(store, registry, health, upstream, {
      testTimeoutMs: this.testTimeoutMs,
      retestConcurrency: Math.max(1, opts.retestConcurrency ?? DEFAULT_RETEST_CONCURRENCY),
    });
  }

  /** Channel rows as the API shows them, with their models' latest tests. */
  private async toPublicAll(rows: ChannelRow[]): Promise<PublicChannel[]> {
    const tests = await this.store.tests(rows.map((r) => r.id));
    return rows.map((r) =>
      this.toPublic(
        r,
        tests.filter((t) => t.channel_id === r.id),
      ),
    );
  }

  toPublic(row: ChannelRow, tests: ChannelTestRow[] = []): PublicChannel {
    const models = JSON.parse(row.models) as string[];
    const testOf = new Map(tests.map((t) => [t.model, t]));
    const now = Date.now();
    const loaded = this.registry.get(row.id);
    return {
      id: row.id,
      name: row.name,
      type: row.type,
      base_url: row.base_url,
      key_set: Boolean(loaded?.key),
      keys: loaded ? publicKeys(loaded.key, loaded.pool, (at) => this.tester.nextRetestAt(at, now)) : [],
      models,
      model_mapping: JSON.parse(row.model_mapping),
      options: JSON.parse(row.options),
      priority: row.priority,
      weight: row.weight,
      status: row.status,
      source: row.source,
      env_provider: row.env_provider,
      groups: channelGroups(row.groups),
      disabled_models: this.registry
        .disabledModels()
        .filter((d) => d.channel_id === row.id)
        .map((d) => ({
          model: d.model,
          reason: d.reason,
          disabled_at: Number(d.disabled_at),
          failures: parseFailures(d.failures),
          retest_at: this.tester.nextRetestAt(Number(d.disabled_at), now),
        })),
      last_tests: models.flatMap((m) => {
        const t = testOf.get(m);
        return t ? [{ model: m, ok: t.ok, latency_ms: t.latency_ms, status: t.status, error: t.error, tested_at: t.tested_at }] : [];
      }),
      created_at: Number(row.created_at),
      updated_at: Number(row.updated_at),
    };
  }

  /** Every channel (the dashboard's disabled list; small sets). */
  async list(): Promise<PublicChannel[]> {
    return this.toPublicAll(await this.store.list());
  }

  /** A page of channels in id order, filtered, with how many match. */
  async page(filter: ChannelFilter, offset: number, limit: number): Promise<ChannelPage> {
    const { rows, total } = await this.store.page(filter, offset, limit);
    return { data: await this.toPublicAll(rows), total, offset, limit };
  }

  async get(id: number): Promise<PublicChannel> {
    const row = await this.store.byId(id);
    if (!row) throw errors.notFound(`Channel ${id}`);
    return (await this.toPublicAll([row]))[0]!;
  }

  private async validate(input: ChannelInput, creating: boolean): Promise<void> {
    if (creating && !input.type) throw errors.badField('type', `Invalid 'type': required`);
    const provider = input.type !== undefined ? providerOf(input.type) : undefined;
    if (input.type !== undefined && !provider) throw errors.badField('type', `Invalid 'type': unknown provider type "${input.type}"`);
    if (creating && !input.base_url && !provider?.defaultBaseUrl) throw errors.badField('base_url', `Invalid 'base_url': required for ${input.type} channels`);
    if (input.base_url !== undefined) {
      let u: URL;
      try {
        u = new URL(input.base_url);
      } catch {
        throw errors.badField('base_url', `Invalid 'base_url': not a URL`);
      }
      if (u.protocol !== 'http:' && u.protocol !== 'https:') throw errors.badField('base_url', `Invalid 'base_url': must be http or https`);
    }
    if (creating && provider?.keyRequired && !input.key) throw errors.badField('key', `Invalid 'key': required for ${input.type} channels`);
    if (creating && (!input.models || input.models.length === 0)) throw errors.badField('models', `Invalid 'models': list at least one model`);
    if (input.models && input.models.some((m) => typeof m !== 'string' || !m.trim()))
      throw errors.badField('models', `Invalid 'models': names must be non-empty strings`);
    for (const g of input.groups ?? []) {
      if (!(await this.groupExists(g))) throw errors.badField('groups', `Invalid 'groups': there is no group named ${g} (add it on /api/groups first)`);
    }
  }

  async create(input: ChannelInput, source: 'env' | 'admin' = 'admin', envProvider: string | null = null): Promise<PublicChannel> {
    await this.validate(input, true);
    const provider = providerOf(input.type!)!;
    const now = Date.now();
    const id = await this.store.insert({
      name: input.name ?? `${input.type} channel`,
      type: input.type!,
      base_url: input.base_url ?? provider.defaultBaseUrl!,
      key_cipher: this.keyBox.seal(input.key ?? ''),
      models: JSON.stringify(input.models!.map((m) => m.trim())),
      model_mapping: JSON.stringify(input.model_mapping ?? {}),
      options: JSON.stringify(input.options ?? {}),
      priority: input.priority ?? 0,
      weight: input.weight ?? 1,
      status: input.status ?? 'enabled',
      source,
      env_provider: envProvider,
      groups: groupsColumn(input.groups),
      created_at: now,
      updated_at: now,
    });
    await this.registry.load();
    return this.get(id);
  }

  async update(id: number, input: ChannelInput): Promise<PublicChannel> {
    if (!(await this.store.byId(id))) throw errors.notFound(`Channel ${id}`);
    await this.validate(input, false);
    await this.store.update(id, {
      ...(input.name !== undefined ? { name: input.name } : {}),
      ...(input.type !== undefined ? { type: input.type } : {}),
      ...(input.base_url !== undefined ? { base_url: input.base_url } : {}),
      ...(input.key !== undefined ? { key_cipher: this.keyBox.seal(input.key) } : {}),
      ...(input.models !== undefined ? { models: JSON.stringify(input.models.map((m) => m.trim())) } : {}),
      ...(input.model_mapping !== undefined ? { model_mapping: JSON.stringify(input.model_mapping) } : {}),
      ...(input.options !== undefined ? { options: JSON.stringify(input.options) } : {}),
      ...(input.priority !== undefined ? { priority: input.priority } : {}),
      ...(input.weight !== undefined ? { weight: input.weight } : {}),
      ...(input.status !== undefined ? { status: input.status } : {}),
      ...(input.groups !== undefined ? { groups: groupsColumn(input.groups) } : {}),
      updated_at: Date.now(),
    });
    // A pool's key replaced: the states of keys no longer in it go (a key kept keeps its state).
    if (input.key !== undefined) {
      const keys = splitKeys(input.key);
      await this.store.keepKeyStates(id, keys.length > 1 ? keys.map((k) => this.keyBox.fingerprint(k)) : []);
    }
    // A manual enable also clears auto-disabled models and keys: the operator has looked.
    if (input.status === 'enabled') {
      await this.health.enable(id);
      await this.health.enableKeys(id);
    }
    await this.registry.load();
    return this.get(id);
  }

  /** Enables a disabled key of a channel's pool by hand, by its index as the channel shows it; says whether it was disabled. */
  async enableKey(id: number, index: number): Promise<boolean> {
    if (!(await this.store.byId(id))) throw errors.notFound(`Channel ${id}`);
    const key = this.registry.get(id)?.pool?.keys[index];
    if (!key) throw errors.notFound(`Key ${index} of channel ${id} (only a channel with several keys has keys of its own)`);
    const was = key.disabled !== undefined;
    await this.health.enableKeys(id, key.fp);
    return was;
  }

  async delete(id: number): Promise<void> {
    if (!(await this.store.delete(id))) throw errors.notFound(`Channel ${id}`);
    await this.registry.load();
  }

  /**
   * Creates or updates one channel per <PROVIDER>_API_KEY in the environment.
   * Known providers need only the key; any other prefix needs <PREFIX>_BASE_URL
   * too and is taken as OpenAI-compatible unless <PREFIX>_TYPE names another
   * wire format (anthropic, gemini). Returns what it did, for the log.
   */
  async syncFromEnv(env: Record<string, string | undefined>): Promise<string[]> {
    const done: string[] = [];
    const known = new Map(presets.map((p) => [p.env, p]));
    for (const [name, value] of Object.entries(env)) {
      const m = /^([A-Z][A-Z0-9_]*)_API_KEY$/.exec(name);
      if (!m || !value) continue;
      const prefix = m[1]!;
      const preset = known.get(prefix);
      const baseUrl = env[`${prefix}_BASE_URL`] || preset?.baseUrl;
      if (!preset && !env[`${prefix}_BASE_URL`]) continue; // some other tool's key, not a provider
      if (!baseUrl) {
        done.push(`${name}: skipped, ${prefix}_BASE_URL is required for this provider`);
        continue;
      }
      const models =
        env[`${prefix}_MODELS`]
          ?.split(',')
          .map((s) => s.trim())
          .filter(Boolean) ??
        preset?.models ??
        [];
      if (models.length === 0) {
        done.push(`${name}: skipped, set ${prefix}_MODELS to the models it serves`);
        continue;
      }
      const declaredType = env[`${prefix}_TYPE`]?.trim().toLowerCase();
      if (declaredType && !(ENV_WIRE_TYPES as readonly string[]).includes(declaredType)) {
        done.push(`${name}: skipped, ${prefix}_TYPE must be one of ${ENV_WIRE_TYPES.join(', ')} (got "${declaredType}")`);
        continue;
      }
      const type = declaredType || preset?.type || 'openai';
      const input: ChannelInput = { name: `${prefix.toLowerCase()} (from environment)`, type, base_url: baseUrl, key: value, models };
      let existing = await this.store.byEnvProvider(prefix);
      if (!existing) {
        try {
          const ch = await this.create(input, 'env', prefix);
          done.push(`${name}: created channel ${ch.id} (${baseUrl}, ${models.length} models)`);
          continue;
        } catch (err) {
          // Another process starting at the same moment created it: update that one.
          if (!isUniqueViolation(err)) throw err;
          existing = await this.store.byEnvProvider(prefix);
        }
      }
      if (existing) {
        await this.update(existing.id, { type: input.type, base_url: input.base_url, key: input.key, models: input.models });
        done.push(`${name}: updated channel ${existing.id} (${baseUrl}, ${models.length} models)`);
      }
    }
    return done;
  }

  /**
   * Creates or updates the channel of the in-process local models. It keeps
   * what an operator set (status, priority, weight, prices); models and their
   * metadata follow what this build serves.
   */
  async syncLocalModels(models: LocalModelEntry[]): Promise<string> {
    const options: ChannelOptions = {
      modelTypes: Object.fromEntries(models.map((m) => [m.id, m.kind])),
      modelInfo: Object.fromEntries(models.map(({ id, kind: _kind, ...info }) => [id, info])),
    };
    const fields = { type: LOCAL_PROVIDER_TYPE, base_url: LOCAL_BASE_URL, models: JSON.stringify(models.map((m) => m.id)), options: JSON.stringify(options) };
    let existing = await this.store.byEnvProvider(LOCAL_ENV_PROVIDER);
    if (!existing) {
      const now = Date.now();
      try {
        const id = await this.store.insert({
          ...fields,
          name: 'local models (built-in)',
          key_cipher: this.keyBox.seal(''),
          model_mapping: '{}',
          priority: 0,
          weight: 1,
          status: 'enabled',
          source: 'env',
          env_provider: LOCAL_ENV_PROVIDER,
          created_at: now,
          updated_at: now,
        });
        await this.registry.load();
        return `local models: created channel ${id} (${models.map((m) => m.id).join(', ')})`;
      } catch (err) {
        if (!isUniqueViolation(err)) throw err;
        existing = await this.store.byEnvProvider(LOCAL_ENV_PROVIDER);
      }
    }
    await this.store.update(existing!.id, { ...fields, updated_at: Date.now() });
    await this.registry.load();
    return `local models: channel ${existing!.id} serves ${models.map((m) => m.id).join(', ')}`;
  }

  /** Tests every model of a channel (or one) with a request suited to its kind; each result is kept. */
  async test(id: number, onlyModel?: string, signal?: AbortSignal): Promise<ModelTestResult[]> {
    const row = await this.store.byId(id);
    if (!row) throw errors.notFound(`Channel ${id}`);
    const channel = this.registry.get(id);
    if (!channel) throw errors.internal(`Channel ${id} cannot be loaded: ${this.registry.problems().join('; ')}`);
    return this.tester.testChannel(channel, onlyModel ? [onlyModel] : channel.models, signal);
  }

  /** Tests every enabled channel's models, `concurrency` at once (testing.ts). */
  testAll(concurrency?: number, signal?: AbortSignal): Promise<TestAllResult> {
    return this.tester.testAll(concurrency, signal);
  }

  retestDisabled(signal?: AbortSignal): Promise<RetestResult[]> {
    return this.tester.retestDisabled(signal);
  }

  startRetestLoop(intervalMs: number, onError: (err: Error) => void): void {
    this.tester.startRetestLoop(intervalMs, onError);
  }

  stopRetestLoop(): Promise<void> {
    return this.tester.stopRetestLoop();
  }
}
