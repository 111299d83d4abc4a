// Platform configuration from the environment. Everything has a default that
// works on a fresh machine; a bad value stops start-up with the variable named.
import type { EmbeddedModelOptions } from './models/config-file.js';

export interface PlatformConfig {
  host: string;
  port: number;
  dataDir: string;
  /** postgres://… (with pgvector), or absent for the embedded PGlite store. */
  databaseUrl?: string;
  gatewayUrl: string;
  gatewayToken?: string;
  /** config.json (models and systemEnv); absent: the embedded default. */
  configPath?: string;
  /** Set by `kbchat start`: what the gateway beside it serves, for the embedded default. */
  embeddedModels?: EmbeddedModelOptions;
  /** A general key created at first start (what scripts and tests use). */
  initialApiKey?: string;
  /** Link import may reach loopback and private addresses. */
  linkAllowPrivate: boolean;
  /** Run an indexing worker in this process (PLATFORM_WORKER, default on). */
  runWorker: boolean;
  /** Files served at /<name> (PUBLIC_DIR, default ./public). */
  publicDir: string;
  /** A request's head must arrive within this, and its body may not pause this long, or the connection closes with 408 (ms). */
  requestStallTimeoutMs: number;
  logLevel: string;
}

function num(env: Record<string, string | undefined>, name: string, dflt: number, min = 0): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return dflt;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < min) throw new Error(`${name} must be a whole number >= ${min} (got "${raw}")`);
  return n;
}

export function loadPlatformConfig(env: Record<string, string | undefined> = process.env, overrides: Partial<PlatformConfig> = {}): PlatformConfig {
  return {
    host: env.HOST || '0.0.0.0',
    port: num(env, 'PORT', 3000),
    dataDir: env.DATA_DIR || './data',
    databaseUrl: env.DATABASE_URL || undefined,
    gatewayUrl: (env.GATEWAY_URL || `http://127.0.0.1:${env.GATEWAY_PORT || 3001}`).replace(/\/+$/, ''),
    gatewayToken: env.GATEWAY_TOKEN || env.INITIAL_ROOT_TOKEN || undefined,
    configPath: env.CONFIG_PATH || undefined,
    initialApiKey: env.INITIAL_API_KEY || undefined,
    linkAllowPrivate: env.LINK_ALLOW_PRIVATE === 'true',
    runWorker: env.PLATFORM_WORKER !== 'off',
    publicDir: env.PUBLIC_DIR || './public',
    requestStallTimeoutMs: num(env, 'REQUEST_STALL_TIMEOUT_MS', 60_000, 1),
    logLevel: env.LOG_LEVEL || 'warn',
    ...overrides,
  };
}
