// The services and what the model checks need from them: the gateway (its
// channels through the admin API, the models it serves the platform's token),
// config.json, the platform token's balance, and the platform (its key, the
// models it offers, the knowledge bases of the key's team).
import { endpointOfModel } from '@kbchat/gateway';
import { loadModelConfig, modelsMissingFromGateway, type ModelConfig, type ProviderModels } from '@kbchat/platform';
import { fail, ok, warn, type ChannelInfo, type Check, type DatasetInfo, type Found } from './check.js';
import { errorText, NoAnswer, request, type Answer } from './http.js';

const ADMIN_TOKEN_REMEDY =
  'give a root or admin token of the gateway: --token, GATEWAY_ADMIN_TOKEN or INITIAL_ROOT_TOKEN (kbchat start keeps one in <data-dir>/platform-gateway-token)';

async function reach(url: string, timeoutMs: number): Promise<Answer | string> {
  try {
    return await request(`${url}/healthz`, { timeoutMs });
  } catch (err) {
    if (err instanceof NoAnswer) return err.message;
    throw err;
  }
}

export async function gatewayChecks(f: Found): Promise<Check[]> {
  const { gatewayUrl: url, adminToken, timeoutMs } = f.opts;
  const health = await reach(url, timeoutMs);
  if (typeof health === 'string') {
    f.gatewayProblem = `the gateway at ${url} does not answer`;
    return [fail('gateway', `${url} does not answer: ${health}`, 'start it (kbchat start, or kbchat gateway), or name it: --gateway-url or GATEWAY_URL')];
  }
  f.gatewayUp = true;
  const store = health.json?.store ?? 'unknown';
  if (!adminToken) {
    f.gatewayProblem = 'no admin token for the gateway';
    return [fail('gateway', `${url} answers (${store} store), but there is no admin token to read its channels with`, ADMIN_TOKEN_REMEDY)];
  }
  const listed = await request(`${url}/api/channels`, { token: adminToken, timeoutMs });
  if (listed.status !== 200) {
    f.gatewayProblem = 'the gateway refuses the admin token';
    return [fail('gateway', `${url} refuses the admin token (${listed.status}): ${errorText(listed)}`, ADMIN_TOKEN_REMEDY)];
  }
  f.channels = listed.json.data as ChannelInfo[];
  const enabled = f.channels.filter((c) => c.status === 'enabled').length;
  const channels = `${f.channels.length} ${f.channels.length === 1 ? 'channel' : 'channels'}`;
  return [ok('gateway', `${url}: ${store} store, ${channels} (${enabled} enabled)`)];
}

/** The models the platform's token sees, and that token's balance. */
export async function platformTokenChecks(f: Found): Promise<Check[]> {
  const { gatewayUrl: url, platformToken, timeoutMs } = f.opts;
  if (!platformToken) {
    f.gatewayProblem ??= "no gateway token for the platform's requests";
    return [
      fail(
        'platform token',
        "no gateway token for the platform's requests",
        'set GATEWAY_TOKEN (or INITIAL_ROOT_TOKEN) as the platform has it; kbchat start keeps its own in <data-dir>/platform-gateway-token',
      ),
    ];
  }
  const models = await request(`${url}/v1/models`, { token: platformToken, timeoutMs });
  if (models.status !== 200) {
    f.gatewayProblem ??= "the gateway refuses the platform's token";
    return [
      fail(
        'platform token',
        `the gateway refuses the platform's token (${models.status}): ${errorText(models)}`,
        'set GATEWAY_TOKEN to a valid token of the gateway (console, Tokens), the same the platform uses',
      ),
    ];
  }
  f.served = new Set((models.json?.data ?? []).map((m: { id: string }) => m.id));
  const me = await request(`${url}/api/auth/me`, { token: platformToken, timeoutMs });
  let user = me.json?.user;
  // /api/auth/me answers a token with its user as cached for the relay, beside the leases of now
  // (a balance too high by what is leased): the admin API reads the user afresh.
  if (user?.id !== undefined && f.opts.adminToken) {
    const fresh = await request(`${url}/api/users/${user.id}`, { token: f.opts.adminToken, timeoutMs });
    if (fresh.status === 200) user = fresh.json;
  }
  if (me.status !== 200 || typeof user?.balance_micros !== 'number')
    return [warn('platform token', `its balance cannot be read (${me.status}): ${errorText(me)}`)];
  const units = (user.balance_micros / 1e6).toFixed(2);
  const topUp = `top up user ${user.username} in the gateway console, Users (or PATCH /api/users/${user.id} with balance_delta)`;
  if (user.balance_micros <= 0) return [fail('platform token', `user ${user.username}'s balance is ${units}: the gateway refuses every priced request`, topUp)];
  if (user.balance_micros < 1e6) return [warn('platform token', `user ${user.username}'s balance is ${units}, less than 1 unit`, topUp)];
  return [ok('platform token', `user ${user.username}, balance ${units}`)];
}

/** What `kbchat start` offers without a config.json: the local models and those of the gateway's provider channels. */
function providerModelsOf(channels: ChannelInfo[], served: Set<string>): ProviderModels {
  const models: ProviderModels = { llm: [], embedding: [], rerank: [] };
  for (const c of channels) {
    if (c.source !== 'env' || c.status !== 'enabled' || c.type === 'local') continue;
    for (const model of c.models) {
      const kind = endpointOfModel(model, c.options as Parameters<typeof endpointOfModel>[1]);
      const list = kind === 'chat' ? models.llm : kind === 'embeddings' ? models.embedding : models.rerank;
      if (served.has(model) && !list.includes(model)) list.push(model);
    }
  }
  return models;
}

export function configChecks(f: Found): Check[] {
  const { configPath, localModels } = f.opts;
  let config: ModelConfig;
  try {
    config = loadModelConfig(configPath, { localModels, providerModels: f.channels && f.served ? providerModelsOf(f.channels, f.served) : undefined });
  } catch (err) {
    return [fail('config', (err as Error).message, `correct ${configPath ?? 'the configuration'}: the field is named above`)];
  }
  f.config = config;
  const count = `${config.llmModels.length} chat, ${config.vectorModels.length} vector, ${config.reRankModels.length} rerank models`;
  const checks = [ok('config', `${configPath ?? 'the embedded default (no CONFIG_PATH)'}: ${count}`)];
  if (!f.served) return checks;
  const missing = modelsMissingFromGateway(config, f.served);
  checks.push(
    missing.length
      ? fail(
          'gateway models',
          `config.json names models the gateway does not serve: ${missing.join(', ')}`,
          'add a channel that serves them (gateway console, Channels; or <PROVIDER>_MODELS), enable the one that does, or remove them from config.json',
        )
      : ok('gateway models', `all ${config.llmModels.length + config.vectorModels.length + config.reRankModels.length} configured models are served`),
  );
  return checks;
}

export async function platformChecks(f: Found): Promise<Check[]> {
  const { platformUrl: url, platformKey: key, timeoutMs } = f.opts;
  const health = await reach(url, timeoutMs);
  if (typeof health === 'string') {
    f.platformProblem = `the platform at ${url} does not answer`;
    return [fail('platform', `${url} does not answer: ${health}`, 'start it (kbchat start, or kbchat platform), or name it: --platform-url')];
  }
  if (!key) {
    f.platformProblem = 'no platform key';
    return [
      warn(
        'platform',
        `${url} answers, but there is no platform key: the platform steps and the knowledge-base check are skipped`,
        'give a general key of the platform: --platform-key, PLATFORM_API_KEY or INITIAL_API_KEY (web app, API keys)',
      ),
    ];
  }
  const models = await request(`${url}/api/core/ai/model/list`, { token: key, timeoutMs });
  if (models.status !== 200) {
    f.platformProblem = 'the platform refuses the key';
    return [
      fail(
        'platform',
        `${url} refuses the key (${models.status}): ${errorText(models)}`,
        'give a general key (not an application key): --platform-key, PLATFORM_API_KEY or INITIAL_API_KEY',
      ),
    ];
  }
  f.platformModels = new Set((models.json?.data?.models ?? []).map((m: { model: string }) => m.model));
  const listed = await request(`${url}/api/core/dataset/list`, { token: key, body: {}, timeoutMs });
  if (listed.status === 200) {
    f.datasets = (listed.json?.data ?? []).map((d: any): DatasetInfo => ({
      id: d.id,
      name: d.name,
      vectorModel: d.vectorModel?.model ?? '',
      vectorDimensions: d.vectorDimensions ?? null,
    }));
  }
  return [
    ok(
      'platform',
      `${url}: ${health.json?.store ?? 'unknown'} store, ${f.platformModels.size} models offered, ${f.datasets?.length ?? '?'} knowledge bases of the key's team`,
    ),
  ];
}

/** Knowledge bases bound to a vector model that config.json no longer has: their indexing and search fail. */
export function datasetChecks(f: Found): Check[] {
  if (!f.datasets || !f.config) return [];
  const configured = new Set(f.config.vectorModels.map((m) => m.model));
  const orphans = f.datasets.filter((d) => d.vectorModel && !configured.has(d.vectorModel));
  if (!orphans.length) return [ok('knowledge bases', `all ${f.datasets.length} are bound to a configured vector model`)];
  const named = orphans.map((d) => `"${d.name}" (${d.id}) on ${d.vectorModel}`).join(', ');
  const models = [...new Set(orphans.map((d) => d.vectorModel))].join(', ');
  return [
    fail(
      'knowledge bases',
      `bound to a vector model config.json no longer has: ${named}; their indexing and vector search fail`,
      `put ${models} back in config.json's vectorModels (their vectors were made by it), or re-import them into a knowledge base on a configured model`,
    ),
  ];
}
