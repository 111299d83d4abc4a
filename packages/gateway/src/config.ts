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
  /** Largest amount a process takes from a balance at once to serve reservations (currency units). */
  balanceLeaseUnits: number;
  /** How often leases are given back and usage written (ms). */
  ledgerFlushMs: number;
  /** Output tokens reserved for a chat request that names no max_tokens. */
  reserveOutputTokens: number;
  /** Price of a model with no price row, in currency units per 1M tokens. */
  defaultInputPrice: number;
  defaultOutputPrice: number;
  initialRootBalance: number;
  logLevel: string;
  /** Take the client address from X-Forwarded-For (behind a reverse proxy). */
  trustProxy: boolean;
  /** A request's head must arrive within this, and its body may not pause this long, or the connection closes with 408 (ms). */
  requestStallTimeoutMs: number;
  /** Run the in-process local models and their channel (LOCAL_MODELS, default on). */
  localModels: boolean;
  /** Load the embedding model at start instead of at the first request. */
  localWarmup: boolean;
  /** A GGUF file for the optional generative local-gguf model. */
  localGgufPath?: string;
  /** Worker threads for local-embed (default: the package's choice). */
  localEmbedWorkers?: number;
  /** The environment, for <PROVIDER>_API_KEY channel sync. */
  env: Record<string, string | undefined>;
}

function num(env: Record<string, string | undefined>, name: string, dflt: number, min = 0): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return dflt;
  const n = Number(raw);
  if (!Number.isFinite(n) || n < min) throw new Error(`${name} must be a number >= ${min} (got "${raw}")`);
  return n;
}

function onOff(env: Record<string, string | undefined>, name: string, dflt: boolean): boolean {
  const raw = env[name]?.trim().toLowerCase();
  if (raw === undefined || raw === '') return dflt;
  if (['on', 'true', '1', 'yes'].includes(raw)) return true;
  if (['off', 'false', '0', 'no'].includes(raw)) return false;
  throw new Error(`${name} must be on or off (got "${env[name]}")`);
}

export function loadGatewayConfig(
  env: Record<string, string | undefined> = process.env,
  overrides: Partial<GatewayConfig> = {},
): GatewayConfig {
  return {
    host: env.GATEWAY_HOST || '0.0.0.0',
    port: num(env, 'GATEWAY_PORT', 3001),
    dataDir: env.DATA_DIR || './data',
    databaseUrl: env.GATEWAY_DATABASE_URL || undefined,
    rootPassword: env.ROOT_PASSWORD || undefined,
    initialRootToken: env.INITIAL_ROOT_TOKEN || undefined,
    secretKey: env.GATEWAY_SECRET_KEY || undefined,
    upstreamTimeoutMs: num(env, 'UPSTREAM_TIMEOUT_MS', 120_000, 1),
    upstreamIdleTimeoutMs: num(env, 'UPSTREAM_IDLE_TIMEOUT_MS', 120_000, 1),
    connectTimeoutMs: num(env, 'UPSTREAM_CONNECT_TIMEOUT_MS', 10_000, 1),
    maxAttempts: num(env, 'RELAY_MAX_ATTEMPTS', 3, 1),
    disableThreshold: num(env, 'CHANNEL_DISABLE_THRESHOLD', 5, 0),
    disableWindowMs: num(env, 'CHANNEL_DISABLE_WINDOW_MS', 60_000, 1),
    retestIntervalMs: num(env, 'CHANNEL_RETEST_INTERVAL_MS', 300_000, 0),
    channelRefreshMs: num(env, 'CHANNEL_REFRESH_MS', 5_000, 100),
    logRetentionDays: num(env, 'LOG_RETENTION_DAYS', 30, 0),
    // Log rows and their charges go in one transaction; by default with the rest of the ledger's writes.
    logFlushMs: num(env, 'LOG_FLUSH_MS', num(env, 'LEDGER_FLUSH_MS', 1000, 1), 1),
    balanceLeaseUnits: num(env, 'BALANCE_LEASE_UNITS', 1, 0),
    ledgerFlushMs: num(env, 'LEDGER_FLUSH_MS', 1000, 1),
    reserveOutputTokens: num(env, 'RESERVE_OUTPUT_TOKENS', 1024, 0),
    defaultInputPrice: num(env, 'DEFAULT_INPUT_PRICE', 2, 0),
    defaultOutputPrice: num(env, 'DEFAULT_OUTPUT_PRICE', 8, 0),
    initialRootBalance: num(env, 'ROOT_INITIAL_BALANCE', 200, 0),
    logLevel: env.LOG_LEVEL || 'warn',
    trustProxy: env.TRUST_PROXY === 'true',
    requestStallTimeoutMs: num(env, 'REQUEST_STALL_TIMEOUT_MS', 60_000, 1),
    localModels: onOff(env, 'LOCAL_MODELS', true),
    localWarmup: onOff(env, 'LOCAL_MODELS_WARMUP', true),
    localGgufPath: env.LOCAL_GGUF_PATH || undefined,
    localEmbedWorkers: env.LOCAL_EMBED_WORKERS ? num(env, 'LOCAL_EMBED_WORKERS', 1, 1) : undefined,
    env,
    ...overrides,
  };
}
