// config.json: the models the platform offers (all served by the gateway) and
// systemEnv. Validated at start with errors that name the field, in FastGPT's
// shape so that existing config files work.
import { readFileSync } from 'node:fs';
import { z } from 'zod';

// FastGPT's rule for its config.json, which this follows: an empty set is
// written {} or [], never null or "". The messages say so instead of zod's
// "expected record".
/** An object parameter: absent or {}, never null, "" or an array. */
const objectParam = z.record(z.string(), z.unknown(), { error: 'must be an object: use {} for an empty one (not null, "" or [])' }).optional();
const list = <T extends z.ZodType>(item: T) => z.array(item, { error: 'must be a list: use [] for an empty one (not null, "" or {})' });

const llmModel = z.object({
  model: z.string().min(1),
  name: z.string().min(1).optional(),
  isActive: z.boolean().optional(),
  maxContext: z.number().int().positive().optional(),
  maxResponse: z.number().int().positive().optional(),
  quoteMaxToken: z.number().int().positive().optional(),
  maxTemperature: z.number().min(0).optional(),
  toolChoice: z.boolean().optional(),
  functionCall: z.boolean().optional(),
  customCQPrompt: z.string().optional(),
  customExtractPrompt: z.string().optional(),
  defaultSystemChatPrompt: z.string().optional(),
  defaultConfig: objectParam,
  usedInClassify: z.boolean().optional(),
  usedInExtractFields: z.boolean().optional(),
  usedInToolCall: z.boolean().optional(),
  usedInQueryExtension: z.boolean().optional(),
  datasetProcess: z.boolean().optional(),
  vision: z.boolean().optional(),
});

const vectorModel = z.object({
  model: z.string().min(1),
  name: z.string().min(1).optional(),
  isActive: z.boolean().optional(),
  /** Chunk size in tokens for datasets bound to this model. */
  defaultToken: z.number().int().min(16).optional(),
  maxToken: z.number().int().positive().optional(),
  weight: z.number().optional(),
  defaultConfig: objectParam,
  dbConfig: objectParam,
  queryConfig: objectParam,
});

const rerankModel = z.object({ model: z.string().min(1), name: z.string().min(1).optional(), isActive: z.boolean().optional() });

const configFileSchema = z.strictObject({
  llmModels: list(llmModel),
  vectorModels: list(vectorModel).optional(),
  reRankModels: list(rerankModel).optional(),
  systemEnv: z
    .object(
      {
        vectorMaxProcess: z.number().int().min(1).max(64).optional(),
        qaMaxProcess: z.number().int().min(1).max(64).optional(),
        hnswEfSearch: z.number().int().min(1).max(1000).optional(),
      },
      { error: 'must be an object: use {} for an empty one (not null, "" or [])' },
    )
    .optional(),
});

/**
 * Top-level keys of FastGPT's config.json that kbchat has no use for (its web
 * settings, speech models, commercial plans): accepted, so that a FastGPT
 * config works as it is, and named in one warning. Any other unknown key is
 * still refused, as a misspelt one would be.
 */
export const IGNORED_FASTGPT_KEYS = ['feConfigs', 'subPlans', 'audioSpeechModels', 'whisperModel'];

export type LlmModel = z.infer<typeof llmModel>;
export type VectorModel = z.infer<typeof vectorModel>;
export type RerankModel = z.infer<typeof rerankModel>;

export interface ModelConfig {
  llmModels: LlmModel[];
  vectorModels: VectorModel[];
  reRankModels: RerankModel[];
  systemEnv: { vectorMaxProcess: number; qaMaxProcess: number; hnswEfSearch: number };
}

/** The gateway's built-in local models: the embedded default. */
export const EMBEDDED_MODEL_CONFIG = {
  llmModels: [
    {
      model: 'local-extractive',
      name: 'Local extractive (answers with quotes, not generative)',
      maxContext: 16000,
      maxResponse: 1000,
      quoteMaxToken: 6000,
      toolChoice: false,
      functionCall: false,
      usedInClassify: true,
      usedInExtractFields: true,
      usedInQueryExtension: false,
      datasetProcess: false,
    },
  ],
  // USE-lite reads only its first 128 of its own tokens: chunks of ~100 tokens fit.
  vectorModels: [{ model: 'local-embed', name: 'Local embedding (Universal Sentence Encoder lite, 512-d)', defaultToken: 100, maxToken: 128 }],
  reRankModels: [],
  systemEnv: { vectorMaxProcess: 2, qaMaxProcess: 1, hnswEfSearch: 100 },
};

/** Models the gateway's provider channels serve (from <PROVIDER>_API_KEY), by kind. */
export interface ProviderModels {
  llm: string[];
  embedding: string[];
  rerank: string[];
}

/** What `kbchat start` knows of the gateway beside it, for the embedded default. */
export interface EmbeddedModelOptions {
  /** The gateway runs the local models (LOCAL_MODELS; default yes). */
  localModels?: boolean;
  providerModels?: ProviderModels;
}

/**
 * The embedded default (no config.json): the local models, and the models of
 * the gateway's provider channels, with the platform's default limits. The
 * provider's models come first, so that new datasets and the classify,
 * extract and query-extension steps use them rather than the local ones.
 */
export function embeddedModelConfig(opts: EmbeddedModelOptions = {}) {
  const local = opts.localModels === false ? { llmModels: [], vectorModels: [] } : EMBEDDED_MODEL_CONFIG;
  const provided = opts.providerModels ?? { llm: [], embedding: [], rerank: [] };
  const steps = { usedInClassify: true, usedInExtractFields: true, usedInQueryExtension: true };
  return {
    llmModels: [...provided.llm.map((model) => ({ model, ...steps })), ...local.llmModels],
    vectorModels: [...provided.embedding.map((model) => ({ model })), ...local.vectorModels],
    reRankModels: provided.rerank.map((model) => ({ model })),
    systemEnv: EMBEDDED_MODEL_CONFIG.systemEnv,
  };
}

export class ConfigFileError extends Error {}

function pathOf(path: PropertyKey[]): string {
  return path
    .map((p) => (typeof p === 'number' ? `[${p}]` : `.${String(p)}`))
    .join('')
    .replace(/^\./, '');
}

/** Validates a parsed config.json; every problem names its field. FastGPT keys it does not use go to `onWarning`. */
export function parseModelConfig(raw: unknown, source = 'config.json', onWarning: (message: string) => void = () => {}): ModelConfig {
  if (raw && typeof raw === 'object' && !Array.isArray(raw)) {
    const entries = Object.entries(raw);
    const ignored = IGNORED_FASTGPT_KEYS.filter((key) => entries.some(([k]) => k === key));
    if (ignored.length) {
      onWarning(`${source}: ${ignored.join(', ')} ${ignored.length === 1 ? 'is a FastGPT setting' : 'are FastGPT settings'} that kbchat does not use: ignored`);
      raw = Object.fromEntries(entries.filter(([key]) => !ignored.includes(key)));
    }
  }
  const parsed = configFileSchema.safeParse(raw);
  if (!parsed.success) {
    const problems = parsed.error.issues.map((i) => `${pathOf(i.path) || '(root)'}: ${i.message}`);
    throw new ConfigFileError(`${source} is not valid:\n  ${problems.join('\n  ')}`);
  }
  const c = parsed.data;
  const active = <T extends { isActive?: boolean }>(list: T[]) => list.filter((m) => m.isActive !== false);
  const problems: string[] = [];
  if (active(c.llmModels).length === 0) problems.push('llmModels: at least one enabled model is needed (chat needs an LLM)');
  if (c.vectorModels && c.vectorModels.length > 0 && active(c.vectorModels).length === 0)
    problems.push('vectorModels: every model is disabled (remove the list to run without indexing)');
  for (const [name, list] of [
    ['llmModels', c.llmModels],
    ['vectorModels', c.vectorModels ?? []],
    ['reRankModels', c.reRankModels ?? []],
  ] as const) {
    const seen = new Set<string>();
    list.forEach((m, i) => {
      if (seen.has(m.model)) problems.push(`${name}[${i}].model: "${m.model}" is listed twice`);
      seen.add(m.model);
    });
  }
  if (problems.length) throw new ConfigFileError(`${source} is not valid:\n  ${problems.join('\n  ')}`);
  return {
    llmModels: active(c.llmModels),
    vectorModels: active(c.vectorModels ?? []),
    reRankModels: active(c.reRankModels ?? []),
    systemEnv: { vectorMaxProcess: 2, qaMaxProcess: 1, hnswEfSearch: 100, ...c.systemEnv },
  };
}

/**
 * config.json at `path`, else the embedded default. Problems throw
 * ConfigFileError naming the field; kbchat start checks this before it
 * starts anything.
 */
export function loadModelConfig(path: string | undefined, opts: EmbeddedModelOptions & { onWarning?: (message: string) => void } = {}): ModelConfig {
  if (!path) {
    const embedded = embeddedModelConfig(opts);
    if (embedded.llmModels.length === 0) {
      throw new ConfigFileError(
        'no models: LOCAL_MODELS is off and the gateway has no provider channel; set a <PROVIDER>_API_KEY, or CONFIG_PATH to a config.json',
      );
    }
    return parseModelConfig(embedded, 'the embedded default config');
  }
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    throw new ConfigFileError(`CONFIG_PATH ${path} cannot be read: ${(err as Error).message}`);
  }
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (err) {
    throw new ConfigFileError(`${path} is not JSON: ${(err as Error).message}`);
  }
  return parseModelConfig(raw, path, opts.onWarning);
}

/** Every configured model the gateway does not serve, by name (checked at start). */
export function modelsMissingFromGateway(config: ModelConfig, served: Set<string>): string[] {
  const all = [...config.llmModels, ...config.vectorModels, ...config.reRankModels].map((m) => m.model);
  return all.filter((m) => !served.has(m));
}
