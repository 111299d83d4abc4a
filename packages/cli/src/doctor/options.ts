// What `kbchat doctor` talks to and with which secrets: the same variables and
// options as `kbchat start`, so that a doctor run beside a start needs none.
// The kbchat running on the data dir's stores is found by their locks, which
// name its process and where it listens: its ports are checked unless ports
// or URLs are given.
import { existsSync, readFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { join, resolve } from 'node:path';
import { storeHolder, type ListenAddress, type StoreHolder } from '@kbchat/shared/store-lock';
import { embeddedStoreDir } from '../preflight.js';

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
  /** The kbchat process(es) holding the data dir's embedded stores, as their locks say. */
  running: RunningKbchat;
}

/** A service of a running kbchat: the process holding a store of the data dir, and where its lock says the service listens. */
export interface Listener {
  holder: StoreHolder;
  at: ListenAddress;
}

export interface RunningKbchat {
  /** The holders of the gateway's and the platform's store. */
  gateway?: StoreHolder;
  platform?: StoreHolder;
  /** Where they say each service listens (only holders on this machine). */
  listeners: { gateway?: Listener; platform?: Listener };
}

/** Who holds the data dir's stores, and where they say their services listen. */
function runningKbchat(env: Env, dataDir: string): RunningKbchat {
  const holderOf = (url: string | undefined, dirName: string) => {
    const dir = embeddedStoreDir(url, dataDir, dirName);
    return dir && existsSync(dir) ? storeHolder(dir) : undefined;
  };
  const gateway = holderOf(env.GATEWAY_DATABASE_URL || undefined, 'gateway-db');
  const platform = holderOf(env.DATABASE_URL || undefined, 'platform-db');
  // A holder on another machine (a container on a shared volume) listens on its own loopback, not ours.
  const here = [gateway, platform].filter((h): h is StoreHolder => h !== undefined && h.hostname === hostname());
  const listener = (service: 'gateway' | 'platform'): Listener | undefined => {
    const holder = here.find((h) => h.listening?.[service]);
    return holder && { holder, at: holder.listening![service]! };
  };
  return { gateway, platform, listeners: { gateway: listener('gateway'), platform: listener('platform') } };
}

/** A URL on this machine for an address a service is bound to (every interface: loopback). */
export function localUrl({ host, port }: ListenAddress): string {
  const at = host === '0.0.0.0' ? '127.0.0.1' : host === '::' ? '::1' : host;
  return `http://${at.includes(':') ? `[${at}]` : at}:${port}`;
}

/** The token `kbchat start` made for the platform and the gateway's root, when INITIAL_ROOT_TOKEN was not set. */
function tokenFile(dataDir: string): string | undefined {
  const file = join(dataDir, 'platform-gateway-token');
  return existsSync(file) ? readFileSync(file, 'utf8').trim() || undefined : undefined;
}

export function doctorOptions(
  env: Env,
  flags: { token?: string; platformKey?: string; gatewayUrl?: string; platformUrl?: string; compose?: boolean; timeoutMs?: number },
): DoctorOptions {
  const dataDir = resolve(env.DATA_DIR || './data');
  const running = runningKbchat(env, dataDir);
  // Ports or URLs given say what to check; else the running kbchat's, else the defaults.
  const platformAt = env.PORT || flags.platformUrl ? undefined : running.listeners.platform?.at;
  const gatewayAt = env.GATEWAY_PORT || flags.gatewayUrl || env.GATEWAY_URL ? undefined : running.listeners.gateway?.at;
  const platformPort = platformAt?.port ?? Number(env.PORT || 3000);
  const gatewayPort = gatewayAt?.port ?? Number(env.GATEWAY_PORT || 3001);
  const fromFile = tokenFile(dataDir);
  const trim = (url: string) => url.replace(/\/+$/, '');
  return {
    platformUrl: trim(flags.platformUrl ?? (platformAt ? localUrl(platformAt) : `http://127.0.0.1:${platformPort}`)),
    gatewayUrl: trim(flags.gatewayUrl ?? env.GATEWAY_URL ?? (gatewayAt ? localUrl(gatewayAt) : `http://127.0.0.1:${gatewayPort}`)),
    adminToken: flags.token ?? env.GATEWAY_ADMIN_TOKEN ?? env.INITIAL_ROOT_TOKEN ?? fromFile,
    platformToken: env.GATEWAY_TOKEN || env.INITIAL_ROOT_TOKEN || fromFile,
    platformKey: flags.platformKey ?? env.PLATFORM_API_KEY ?? env.INITIAL_API_KEY,
    configPath: env.CONFIG_PATH || undefined,
    dataDir,
    localModels: env.LOCAL_MODELS !== 'off',
    ports: {
      platform: { host: platformAt?.host ?? (env.HOST || '127.0.0.1'), port: platformPort },
      gateway: { host: gatewayAt?.host ?? (env.GATEWAY_HOST || '127.0.0.1'), port: gatewayPort },
      mariadb: Number(env.MARIADB_PORT || 3306),
    },
    compose: flags.compose ?? false,
    gatewayDatabaseUrl: env.GATEWAY_DATABASE_URL || undefined,
    platformDatabaseUrl: env.DATABASE_URL || undefined,
    timeoutMs: flags.timeoutMs ?? 20_000,
    running,
  };
}
