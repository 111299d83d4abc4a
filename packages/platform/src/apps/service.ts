// Applications: an LLM, its prompts and parameters, the knowledge bases it
// searches and how, and the optional classification and extraction steps.
// Every model must be one config.json offers, every dataset the team's own.
import { appSettingsSchema, type AppSettings } from '@kbchat/contracts';
import type { DatasetsStore } from '../datasets/store.js';
import { errors } from '../http/errors.js';
import { parseInput } from '../http/validate.js';
import { newId, type KeyCaller } from '../keys/auth.js';
import type { ModelConfig } from '../models/config-file.js';
import type { ToolRunner } from '../tools/runner.js';
import type { AppRow, AppsStore } from './store.js';

export interface App {
  id: string;
  teamId: string;
  name: string;
  intro: string;
  settings: AppSettings;
  createdAt: number;
  updatedAt: number;
}

export function appFromRow(row: AppRow): App {
  return {
    id: row.id,
    teamId: row.team_id,
    name: row.name,
    intro: row.intro,
    settings: appSettingsSchema.parse(JSON.parse(row.config)),
    createdAt: Number(row.created_at),
    updatedAt: Number(row.updated_at),
  };
}

const META_FIELDS = new Set(['appId', 'name', 'intro']);

/** An update's fields over the stored settings: `search` (and its queryExtension) and `annotationReply` merge, the rest replace. */
export function mergeSettings(stored: AppSettings, patch: Record<string, unknown>): unknown {
  const merged: Record<string, unknown> = { ...stored };
  for (const [key, value] of Object.entries(patch)) {
    if (META_FIELDS.has(key) || value === undefined) continue;
    if (key === 'search' && value && typeof value === 'object' && !Array.isArray(value)) {
      const search = value as Record<string, unknown>;
      const ext = search.queryExtension;
      merged.search = {
        ...stored.search,
        ...search,
        queryExtension:
          ext && typeof ext === 'object' && !Array.isArray(ext) ? { ...stored.search.queryExtension, ...ext } : (ext ?? stored.search.queryExtension),
      };
    } else if (key === 'annotationReply' && value && typeof value === 'object' && !Array.isArray(value)) {
      merged.annotationReply = { ...stored.annotationReply, ...value };
    } else merged[key] = value;
  }
  return merged;
}

export class AppsService {
  /** Recently read apps: every chat turn reads its app; another process sees a change within cacheMs. */
  private readonly cache = new Map<string, { app: App; at: number }>();
  private readonly cacheMs = 2_000;

  constructor(
    private readonly store: AppsStore,
    private readonly datasets: DatasetsStore,
    private readonly models: ModelConfig,
    /** An app's keys are revoked with it. */
    private readonly onDelete: (caller: KeyCaller, appId: string) => Promise<void> = async () => {},
    /** The team's tools, to check the ones an app names (tools/runner.ts). */
    private readonly tools?: ToolRunner,
  ) {}

  /** The new app's id, and what the caller should know about the settings (see `checked`). */
  async create(caller: KeyCaller, input: { name: string; intro: string } & AppSettings): Promise<{ id: string; warnings: string[] }> {
    const { name, intro, ...rest } = input;
    const { settings, warnings } = await this.checked(caller, rest);
    const id = newId();
    const now = Date.now();
    await this.store.insert({ id, team_id: caller.teamId, name, intro, config: JSON.stringify(settings), created_at: now, updated_at: now });
    return { id, warnings };
  }

  async app(caller: KeyCaller, id: string): Promise<App> {
    const hit = this.cache.get(id);
    if (hit && hit.app.teamId === caller.teamId && Date.now() - hit.at < this.cacheMs) return hit.app;
    const row = await this.store.app(caller.teamId, id);
    if (!row) throw errors.notFound(`App ${id}`);
    const app = appFromRow(row);
    if (this.cache.size > 1_000) this.cache.clear();
    this.cache.set(id, { app, at: Date.now() });
    return app;
  }

  async list(caller: KeyCaller, opts: { searchKey?: string; offset: number; pageSize: number }): Promise<{ list: App[]; total: number }> {
    const { rows, total } = await this.store.list(caller.teamId, opts.searchKey, opts.offset, opts.pageSize);
    return { list: rows.map(appFromRow), total };
  }

  async update(caller: KeyCaller, id: string, patch: Record<string, unknown> & { name?: string; intro?: string }): Promise<{ app: App; warnings: string[] }> {
    const app = await this.app(caller, id);
    const { settings, warnings } = await this.checked(caller, parseInput(appSettingsSchema, mergeSettings(app.settings, patch)), app.settings);
    const now = Date.now();
    this.cache.delete(id);
    await this.store.update(caller.teamId, id, {
      name: patch.name ?? app.name,
      intro: patch.intro ?? app.intro,
      config: JSON.stringify(settings),
      updated_at: now,
    });
    return { app: { ...app, name: patch.name ?? app.name, intro: patch.intro ?? app.intro, settings, updatedAt: now }, warnings };
  }

  async delete(caller: KeyCaller, id: string): Promise<void> {
    this.cache.delete(id);
    if (!(await this.store.delete(caller.teamId, id))) throw errors.notFound(`App ${id}`);
    await this.onDelete(caller, id);
  }

  /**
   * Models offered by config.json and datasets of the caller's team, or a 400
   * naming the field. Settings that work, but not as asked, are accepted with
   * a warning: datasets without a configured vector model are searched by
   * full text whatever searchMode says.
   */
  private async checked(caller: KeyCaller, s: AppSettings, before?: AppSettings): Promise<{ settings: AppSettings; warnings: string[] }> {
    this.llm('model', s.model);
    if (s.search.queryExtension.model) this.llm('search.queryExtension.model', s.search.queryExtension.model);
    if (s.classify?.model) this.llm('classify.model', s.classify.model);
    if (s.extract?.model) this.llm('extract.model', s.extract.model);
    if (s.search.rerankModel && !this.models.reRankModels.some((m) => m.model === s.search.rerankModel && m.isActive !== false)) {
      throw errors.badField('search.rerankModel', `"${s.search.rerankModel}" is not one of the configured rerank models`);
    }
    if (s.search.usingReRank && !s.search.rerankModel && this.models.reRankModels.length === 0) {
      throw errors.badField('search.usingReRank', 'no rerank model is configured in config.json');
    }
    const warnings: string[] = [];
    const warn = (w: string | undefined) => void (w && warnings.push(w));
    warn(await this.ownDatasets(caller, 'datasets', s.datasets, s.search.searchMode));
    for (const [i, c] of (s.classify?.categories ?? []).entries()) {
      if (c.datasets) warn(await this.ownDatasets(caller, `classify.categories[${i}].datasets`, c.datasets, s.search.searchMode));
    }
    const ids = s.classify?.categories.map((c) => c.id.toLowerCase()) ?? [];
    const dup = ids.find((x, i) => ids.indexOf(x) !== i);
    if (dup) throw errors.badField('classify.categories', `category id "${dup}" appears twice`);
    const keys = s.extract?.fields.map((f) => f.key) ?? [];
    const dupKey = keys.find((x, i) => keys.indexOf(x) !== i);
    if (dupKey) throw errors.badField('extract.fields', `field key "${dupKey}" appears twice`);
    if (s.tools.length && this.tools) {
      const { missing } = await this.tools.resolve(caller.teamId, s.tools);
      // A tool added now must exist; one the app already had and whose source is gone since
      // only warns (the chat skips it), so that the app can still be saved, e.g. renamed.
      const had = new Set(before?.tools.map((t) => `${t.sourceId}/${t.name}`));
      const at = s.tools.findIndex((t) => missing.includes(`${t.sourceId}/${t.name}`) && !had.has(`${t.sourceId}/${t.name}`));
      if (at >= 0) throw errors.badField(`tools[${at}]`, `the team has no tool source ${s.tools[at]!.sourceId} with a tool named "${s.tools[at]!.name}"`);
      if (missing.length) warnings.push(`tools: ${missing.join(', ')} no longer exist; the chat skips them`);
    }
    return { settings: s, warnings };
  }

  private llm(field: string, model: string): void {
    if (!this.models.llmModels.some((m) => m.model === model && m.isActive !== false)) {
      throw errors.badField(field, `"${model}" is not one of the configured LLM models (${this.models.llmModels.map((m) => m.model).join(', ')})`);
    }
  }

  /** A 400 for datasets that are not the team's or mix vector models; a warning when their vector model is not configured. */
  private async ownDatasets(caller: KeyCaller, field: string, ids: string[], mode: AppSettings['search']['searchMode']): Promise<string | undefined> {
    if (ids.length === 0) return undefined;
    const found = await this.datasets.teamDatasets(caller.teamId, [...new Set(ids)]);
    const missing = ids.find((id) => !found.some((d) => d.id === id));
    if (missing) throw errors.badField(field, `dataset ${missing} does not exist in this team`);
    const vectorModels = new Set(found.map((d) => d.vector_model));
    if (mode !== 'fullTextRecall' && vectorModels.size > 1) {
      throw errors.badField(
        field,
        `these datasets use different vector models (${[...vectorModels].join(', ')}): one app searches datasets of one vector model, or uses searchMode fullTextRecall`,
      );
    }
    const unconfigured = [...vectorModels].filter((model) => !this.models.vectorModels.some((m) => m.model === model));
    if (unconfigured.length === 0) return undefined;
    const why = unconfigured[0]
      ? `their vector model ${unconfigured.join(', ')} is not in config.json's vectorModels`
      : 'they were made without a vector model';
    const search = mode === 'fullTextRecall' ? 'chat searches them by full text' : `chat searches them by full text only (search.searchMode is ${mode})`;
    return `${field}: ${why}, so ${search}; their items that are not indexed yet wait for that vector model and cannot be found.`;
  }
}
