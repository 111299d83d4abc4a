// What `kbchat start`, `gateway`, `platform` and `worker` run. `start` runs
// both services in one process on the embedded stores; the platform then
// reaches the gateway over loopback with a token the gateway knows. Each
// checks its ports, stores and config.json before it creates anything
// (preflight.ts).
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { endpointOfModel, loadGatewayConfig, startGateway, type GatewayConfig, type RunningGateway } from '@kbchat/gateway';
import {
  loadModelConfig,
  loadPlatformConfig,
  startPlatform,
  startWorker,
  type PlatformConfig,
  type ProviderModels,
  type RunningPlatform,
} from '@kbchat/platform';
import { randomSecret } from '@kbchat/shared';
import { createDataDirs } from '@kbchat/shared/pglite';
import { announceListening } from '@kbchat/shared/store-lock';
import { checkPorts, checkStoresFree, embeddedStoreDir } from './preflight.js';

export interface Running {
  close(): Promise<void>;
}

type Env = Record<string, string | undefined>;

const GATEWAY_PORT = "the gateway's port (GATEWAY_PORT, --gateway-port)";
const PLATFORM_PORT = "the platform's port (PORT, --port)";

function isLoopback(address: string): boolean {
  return address.startsWith('127.') || address === '::1';
}

/**
 * The address a service really listens on, said plainly when that is every
 * interface (reachable from other machines), and a URL to use on this one.
 */
function listeningLine(service: { url: string; listening: { address: string; port: number } }, api: string, hostVariable: string): string {
  const { address, port } = service.listening;
  const bound = `http://${address.includes(':') ? `[${address}]` : address}:${port}`;
  if (address === '0.0.0.0' || address === '::') {
    return `listening on ${bound}: every network interface, reachable from other machines (${hostVariable}=127.0.0.1 keeps it to this one); on this machine: ${service.url}${api}`;
  }
  return `listening on ${bound} (${isLoopback(address) ? 'this machine only; ' : ''}API at ${service.url}${api})`;
}

function gatewayConfigFrom(env: Env): GatewayConfig {
  const config = loadGatewayConfig(env);
  config.dataDir = resolve(config.dataDir);
  return config;
}

function platformConfigFrom(env: Env): PlatformConfig {
  const config = loadPlatformConfig(env);
  config.dataDir = resolve(config.dataDir);
  return config;
}

/** Validates config.json now, before anything is created; its warnings are printed here, once. */
function checkModelConfig(config: PlatformConfig, label: string): void {
  if (config.configPath) loadModelConfig(config.configPath, { onWarning: (w) => console.warn(`[${label}] warning: ${w}`) });
}

async function startGatewayLogged(config: GatewayConfig): Promise<RunningGateway> {
  const gw = await startGateway(config);
  for (const note of gw.services.startupNotes) console.log(`[gateway] ${note}`);
  console.log(`[gateway] store: ${gw.services.store.description}`);
  // In the store locks this process holds (before the line that says it listens): kbchat doctor finds it by its data dir.
  announceListening('gateway', { host: gw.listening.address, port: gw.listening.port });
  console.log(`[gateway] ${listeningLine(gw, '/v1', 'GATEWAY_HOST')}; console at ${gw.url}/`);
  return gw;
}

async function startPlatformLogged(config: PlatformConfig): Promise<RunningPlatform> {
  const p = await startPlatform(config);
  for (const note of p.services.startupNotes) console.log(`[platform] ${note}`);
  announceListening('platform', { host: p.listening.address, port: p.listening.port });
  console.log(`[platform] ${listeningLine(p, '/api', 'HOST')}`);
  return p;
}

export async function runGateway(env: Env): Promise<RunningGateway> {
  const config = gatewayConfigFrom(env);
  checkStoresFree([embeddedStoreDir(config.databaseUrl, config.dataDir, 'gateway-db')]);
  await checkPorts([{ whose: GATEWAY_PORT, host: config.host, port: config.port }]);
  return startGatewayLogged(config);
}

export async function runPlatform(env: Env): Promise<RunningPlatform> {
  const config = platformConfigFrom(env);
  checkModelConfig(config, 'platform');
  checkStoresFree([embeddedStoreDir(config.databaseUrl, config.dataDir, 'platform-db')]);
  await checkPorts([{ whose: PLATFORM_PORT, host: config.host, port: config.port }]);
  return startPlatformLogged(config);
}

export async function runWorker(env: Env): Promise<Running> {
  const config = platformConfigFrom(env);
  checkModelConfig(config, 'worker');
  checkStoresFree([embeddedStoreDir(config.databaseUrl, config.dataDir, 'platform-db')]);
  const w = await startWorker(config);
  for (const note of w.services.startupNotes) console.log(`[worker] ${note}`);
  console.log('[worker] indexing: waiting for work');
  return w;
}

/**
 * The token the platform uses at the in-process gateway: INITIAL_ROOT_TOKEN
 * when the operator set one, else one generated at the first start and kept
 * in the data dir (readable by the owner only), as the gateway's own key file.
 */
function platformGatewayToken(dataDir: string, env: Env): string {
  if (env.INITIAL_ROOT_TOKEN) return env.INITIAL_ROOT_TOKEN;
  const file = join(dataDir, 'platform-gateway-token');
  if (existsSync(file)) return readFileSync(file, 'utf8').trim();
  mkdirSync(dataDir, { recursive: true });
  const token = randomSecret('sk-kbchat-platform-');
  writeFileSync(file, `${token}\n`, { mode: 0o600 });
  return token;
}

/**
 * The models of the gateway's provider channels (made from <PROVIDER>_API_KEY
 * by channels.syncFromEnv, with its default model lists): without a
 * config.json the platform offers them beside the local models.
 */
function providerModelsOf(gw: RunningGateway): ProviderModels {
  const served = new Set(gw.services.registry.servedModels());
  const models: ProviderModels = { llm: [], embedding: [], rerank: [] };
  for (const channel of gw.services.registry.all()) {
    if (channel.source !== 'env' || !channel.enabled || channel.type === 'local') continue;
    for (const model of channel.models) {
      const kind = endpointOfModel(model, channel.options);
      const list = kind === 'chat' ? models.llm : kind === 'embeddings' ? models.embedding : models.rerank;
      if (served.has(model) && !list.includes(model)) list.push(model);
    }
  }
  return models;
}

export async function runEverything(env: Env): Promise<Running> {
  const dataDir = resolve(env.DATA_DIR || './data');
  // One process on one machine: it serves that machine unless HOST (the
  // platform) or GATEWAY_HOST say otherwise, so that the gateway's admin
  // login is not on the network by default.
  const local = { ...env, DATA_DIR: dataDir, HOST: env.HOST || '127.0.0.1', GATEWAY_HOST: env.GATEWAY_HOST || '127.0.0.1' };
  const gatewayConfig = gatewayConfigFrom(local);
  const platformConfig = platformConfigFrom(local);
  checkModelConfig(platformConfig, 'platform');
  const embedded = [embeddedStoreDir(gatewayConfig.databaseUrl, dataDir, 'gateway-db'), embeddedStoreDir(platformConfig.databaseUrl, dataDir, 'platform-db')];
  checkStoresFree(embedded);
  await checkPorts([
    { whose: GATEWAY_PORT, host: gatewayConfig.host, port: gatewayConfig.port },
    { whose: PLATFORM_PORT, host: platformConfig.host, port: platformConfig.port },
  ]);

  const token = platformGatewayToken(dataDir, env);
  // One root password for the platform and the gateway console: ROOT_PASSWORD, or one made
  // now, which each service shows if it creates its root with it (first start).
  const rootPassword = env.ROOT_PASSWORD || randomSecret('', 12);
  const root = { rootPassword, rootPasswordGenerated: !env.ROOT_PASSWORD };
  // A first start makes both embedded stores with one initdb (seconds of CPU; the second is a copy).
  await createDataDirs(embedded.filter((dir): dir is string => dir !== undefined));
  const gw = await startGatewayLogged({ ...gatewayConfig, ...root, initialRootToken: token, platformToken: env.GATEWAY_TOKEN || token });
  let platform: RunningPlatform;
  try {
    const providerModels = providerModelsOf(gw);
    const offered = [...providerModels.llm, ...providerModels.embedding, ...providerModels.rerank];
    if (!platformConfig.configPath && offered.length) {
      console.log(
        `[platform] models of the gateway's provider channels, offered with default limits: ${offered.join(', ')} (a config.json such as examples/config.openai.json sets their limits and tool use)`,
      );
    }
    platform = await startPlatformLogged({
      ...platformConfig,
      ...root,
      gatewayUrl: gw.url,
      gatewayToken: env.GATEWAY_TOKEN || token, // the gateway's platformToken above: the console names it
      embeddedModels: { localModels: gatewayConfig.localModels, providerModels },
    });
  } catch (err) {
    await gw.close();
    throw err;
  }
  return {
    async close() {
      await platform.close();
      await gw.close();
    },
  };
}
