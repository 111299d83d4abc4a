// What `kbchat doctor` talks to and with which secrets: the same variables and
// options as `kbchat start`, so that a doctor run beside a start needs none.
import { existsSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';

type Env = Record<string, string | undefined>;

export interface DoctorOptions {
  platformUrl: string;
  gatewayUrl: string;
  /** Root or admin at the gateway: channels, the direct upstream probe. */
  adminToken?: string;
  /** What the platform uses at the gateway: its balance, the gateway requests. */
  platformToken?: string;
  /** A general key of the platform: the platform requests, the knowledge bases. */
  platformKey?: string;
  configPath?: string;
  dataDir: string;
  localModels: boolean;
  ports: { platform: { host: string; port: number }; gateway: { host: string; port: number }; mariadb: number };
  /** Also check the ports compose.yaml publishes (MariaDB's among them). */
  compose: boolean;
  gatewayDatabaseUrl?: string;
  platformDatabaseUrl?: string;
  /** Each request's bound, in ms. */
  timeoutMs: number;
}

/** The token `kbchat start` made for the platform and the gateway's root, when INITIAL_ROOT_TOKEN was not set. */
function tokenFile(dataDir: string): string | undefined {
  const file = join(dataDir, 'platform-gateway-token');
  return existsSync(file) ? readFileSync(file, 'utf8').trim() || undefined : undefined;
}

export function doctorOptions(env: Env, flags: { token?: string; platformKey?: string; gatewayUrl?: string; platformUrl?: string; compose?: boolean; timeoutMs?: number }): DoctorOptions {
  const dataDir = resolve(env.DATA_DIR || './data');
  const platformPort = Number(env.PORT || 3000);
  const gatewayPort = Number(env.GATEWAY_PORT || 3001);
  const fromFile = tokenFile(dataDir);
  const trim = (url: string) => url.replace(/\/+$/, '');
  return {
    platformUrl: trim(flags.platformUrl ?? `http://127.0.0.1:${platformPort}`),
    gatewayUrl: trim(flags.gatewayUrl ?? env.GATEWAY_URL ?? `http://127.0.0.1:${gatewayPort}`),
    adminToken: flags.token ?? env.GATEWAY_ADMIN_TOKEN ?? env.INITIAL_ROOT_TOKEN ?? fromFile,
    platformToken: env.GATEWAY_TOKEN || env.INITIAL_ROOT_TOKEN || fromFile,
    platformKey: flags.platformKey ?? env.PLATFORM_API_KEY ?? env.INITIAL_API_KEY,
    configPath: env.CONFIG_PATH || undefined,
    dataDir,
    localModels: env.LOCAL_MODELS !== 'off',
    ports: {
      platform: { host: env.HOST || '127.0.0.1', port: platformPort },
      gateway: { host: env.GATEWAY_HOST || '127.0.0.1', port: gatewayPort },
      mariadb: Number(env.MARIADB_PORT || 3306),
    },
    compose: flags.compose ?? false,
    gatewayDatabaseUrl: env.GATEWAY_DATABASE_URL || undefined,
    platformDatabaseUrl: env.DATABASE_URL || undefined,
    timeoutMs: flags.timeoutMs ?? 20_000,
  };
}
