// What `kbchat start`, `kbchat gateway` and `kbchat platform` run. `start`
// runs both services in one process on the embedded stores; the platform then
// reaches the gateway over loopback with a token the gateway knows.
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { loadGatewayConfig, startGateway, type RunningGateway } from '@kbchat/gateway';
import { loadPlatformConfig, startPlatform, startWorker, type RunningPlatform } from '@kbchat/platform';
import { randomSecret } from '@kbchat/shared';

export interface Running {
  close(): Promise<void>;
}

export async function runGateway(env: Record<string, string | undefined>, label = 'gateway'): Promise<RunningGateway> {
  const config = loadGatewayConfig(env);
  config.dataDir = resolve(config.dataDir);
  const gw = await startGateway(config);
  for (const note of gw.services.startupNotes) console.log(`[${label}] ${note}`);
  console.log(`[${label}] store: ${gw.services.store.description}`);
  console.log(`[${label}] listening on ${gw.url} (OpenAI-compatible API at ${gw.url}/v1)`);
  return gw;
}

export async function runPlatform(env: Record<string, string | undefined>): Promise<RunningPlatform> {
  const config = loadPlatformConfig(env);
  config.dataDir = resolve(config.dataDir);
  const p = await startPlatform(config);
  for (const note of p.services.startupNotes) console.log(`[platform] ${note}`);
  console.log(`[platform] listening on ${p.url} (API at ${p.url}/api)`);
  return p;
}

/**
 * The token the platform uses at the in-process gateway: INITIAL_ROOT_TOKEN
 * when the operator set one, else one generated at the first start and kept
 * in the data dir (readable by the owner only), as the gateway's own key file.
 */
function platformGatewayToken(dataDir: string, env: Record<string, string | undefined>): string {
  if (env.INITIAL_ROOT_TOKEN) return env.INITIAL_ROOT_TOKEN;
  const file = join(dataDir, 'platform-gateway-token');
  if (existsSync(file)) return readFileSync(file, 'utf8').trim();
  mkdirSync(dataDir, { recursive: true });
  const token = randomSecret('sk-kbchat-platform-');
  writeFileSync(file, `${token}\n`, { mode: 0o600 });
  return token;
}

export async function runEverything(env: Record<string, string | undefined>): Promise<Running> {
  const dataDir = resolve(env.DATA_DIR || './data');
  const token = platformGatewayToken(dataDir, env);
  const gw = await runGateway({ ...env, DATA_DIR: dataDir, INITIAL_ROOT_TOKEN: token });
  let platform: RunningPlatform;
  try {
    platform = await runPlatform({ ...env, DATA_DIR: dataDir, GATEWAY_URL: gw.url, GATEWAY_TOKEN: env.GATEWAY_TOKEN || token });
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

export async function runWorker(env: Record<string, string | undefined>): Promise<Running> {
  const config = loadPlatformConfig(env);
  config.dataDir = resolve(config.dataDir);
  const w = await startWorker(config);
  for (const note of w.services.startupNotes) console.log(`[worker] ${note}`);
  console.log('[worker] indexing: waiting for work');
  return w;
}
