// Gateway configuration from the environment. Everything has a default that
// works on a fresh machine; a bad value stops start-up with the variable named.

export interface GatewayConfig {
  host: string;
  port: number;
  dataDir: string;
  databaseUrl?: string;
  rootPassword?: string;
  initialRootToken?: string;
  secretKey?: string;
  /** Upper bound on waiting for upstream response headers (ms). */
  upstreamTimeoutMs: number;
  /** Longest silence allowed inside an upstream response body or stream (ms). */
  upstreamIdleTimeoutMs: number;
  connectTimeoutMs: number;
  /** Tries per request across channels, the first included. */
  maxAttempts: number;
  /** Failures of one channel+model inside the window that disable it. */
  disableThreshold: number;
  disableWindowMs: number;
  /** How often auto-disabled channel models are tested for re-enabling (ms; 0 = never). */
  retestIntervalMs: number;
  /** How often a process re-reads channels, so that several gateways agree (ms). */
  channelRefreshMs: number;
  logRetentionDays: number;
  logFlushMs: number;
  /** Output tokens reserved for a chat request that names no max_tokens. */
  reserveOutputTokens: number;
  /** Price of a model with no price row, in currency units per 1M tokens. */
  defaultInputPrice: number;
  defaultOutputPrice: number;
  initialRootBalance: number;
  logLevel: string;
  /** The environment, for <PROVIDER>_API_KEY channel sync. */
  env: Record<string, string | undefined>;
}

function int(env: Record<string, string | undefined>, name: string, dflt: number, min = 0): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return dflt;
  const n = Number(raw);
  if (!Number.isFinite(n) || n < min) throw new Error(`${name} must be a number >= ${min} (got "${raw}")`);
  return n;
}

export function loadGatewayConfig(
  env: Record<string, string | undefined> = process.env,
  overrides: Partial<GatewayConfig> = {},
): GatewayConfig {
  return {
    host: env.GATEWAY_HOST || '0.0.0.0',
    port: int(env, 'GATEWAY_PORT', 3001),
    dataDir: env.DATA_DIR || './data',
    databaseUrl: env.GATEWAY_DATABASE_URL || undefined,
    rootPassword: env.ROOT_PASSWORD || undefined,
    initialRootToken: env.INITIAL_ROOT_TOKEN || undefined,
    secretKey: env.GATEWAY_SECRET_KEY || undefined,
    upstreamTimeoutMs: int(env, 'UPSTREAM_TIMEOUT_MS', 120_000, 1),
    upstreamIdleTimeoutMs: int(env, 'UPSTREAM_IDLE_TIMEOUT_MS', 120_000, 1),
    connectTimeoutMs: int(env, 'UPSTREAM_CONNECT_TIMEOUT_MS', 10_000, 1),
    maxAttempts: int(env, 'RELAY_MAX_ATTEMPTS', 3, 1),
    disableThreshold: int(env, 'CHANNEL_DISABLE_THRESHOLD', 5, 0),
    disableWindowMs: int(env, 'CHANNEL_DISABLE_WINDOW_MS', 60_000, 1),
    retestIntervalMs: int(env, 'CHANNEL_RETEST_INTERVAL_MS', 300_000, 0),
    channelRefreshMs: int(env, 'CHANNEL_REFRESH_MS', 5_000, 100),
    logRetentionDays: int(env, 'LOG_RETENTION_DAYS', 30, 0),
    logFlushMs: int(env, 'LOG_FLUSH_MS', 200, 1),
    reserveOutputTokens: int(env, 'RESERVE_OUTPUT_TOKENS', 1024, 0),
    defaultInputPrice: int(env, 'DEFAULT_INPUT_PRICE', 2, 0),
    defaultOutputPrice: int(env, 'DEFAULT_OUTPUT_PRICE', 8, 0),
    initialRootBalance: int(env, 'ROOT_INITIAL_BALANCE', 200, 0),
    logLevel: env.LOG_LEVEL || 'info',
    env,
    ...overrides,
  };
}
