// Table types for Kysely. Money is integer micro-units (1 unit = 1,000,000);
// times are epoch milliseconds in bigint columns, the same on every store.
// bigint columns are `number` on all three stores: PGlite reads int8 as a
// number within 2^53, node-postgres gets numericTypeParsers, and mysql2 runs
// with supportBigNumbers and bigNumberStrings off (db.ts). (Aggregates such
// as sum() over bigint are numeric, a string on PGlite: their readers wrap
// them in Number().)
import type { Generated, Insertable, Selectable, Updateable } from 'kysely';

/** The SQL dialect a store speaks (here rather than in db.ts, which migrations.ts would otherwise import back). */
export type StoreKind = 'pglite' | 'postgres' | 'mysql';

export interface UsersTable {
  id: Generated<number>;
  username: string;
  password_hash: string;
  role: 'root' | 'admin' | 'user';
  status: 'enabled' | 'disabled';
  group_name: string;
  balance: number;
  used: number;
  request_count: number;
  created_at: number;
}

export interface SessionsTable {
  id: Generated<number>;
  token_hash: string;
  user_id: number;
  expires_at: number;
}

export interface TokensTable {
  id: Generated<number>;
  user_id: number;
  name: string;
  key_hash: string;
  key_hint: string;
  status: 'enabled' | 'disabled';
  expires_at: number | null;
  quota_limit: number | null;
  quota_used: number;
  models: string | null;
  ip_allow: string | null;
  created_at: number;
  last_used_at: number | null;
  /** The token's price group (accounts/groups.ts); null: its user's. */
  group_name: string | null;
}

export interface ChannelsTable {
  id: Generated<number>;
  name: string;
  type: string;
  base_url: string;
  key_cipher: string;
  models: string;
  model_mapping: string;
  options: string;
  priority: number;
  weight: number;
  status: 'enabled' | 'disabled';
  source: 'env' | 'admin';
  env_provider: string | null;
  created_at: number;
  updated_at: number;
  /** JSON array of the groups whose callers it serves; null (or empty): every group. */
  groups: string | null;
}

export interface ChannelModelStateTable {
  channel_id: number;
  model: string;
  disabled_at: number;
  reason: string;
  /** JSON [{at, error}]: the failures that disabled it, oldest first (null: disabled before they were kept). */
  failures: string | null;
}

/** A disabled key of a channel's key pool (channels/key-pool.ts), named by its fingerprint (an HMAC, never the key). */
export interface ChannelKeyStateTable {
  channel_id: number;
  key_fp: string;
  disabled_at: number;
  reason: string;
}

/** The latest test of each channel model (channels/testing.ts), whichever process ran it. */
export interface ChannelTestsTable {
  channel_id: number;
  model: string;
  tested_at: number;
  ok: number;
  latency_ms: number;
  status: number | null;
  error: string | null;
}

export interface ModelPricesTable {
  model: string;
  input_price: number;
  output_price: number;
  updated_at: number;
}

export interface LogsTable {
  id: Generated<number>;
  request_id: string;
  created_at: number;
  user_id: number | null;
  token_id: number | null;
  channel_id: number | null;
  endpoint: string;
  model: string;
  upstream_model: string | null;
  is_stream: number;
  prompt_tokens: number;
  completion_tokens: number;
  usage_source: string;
  cost: number;
  latency_ms: number;
  ttft_ms: number | null;
  status: number;
  error: string | null;
  attempts: number;
  request_body: string | null;
  /** The model the caller asked for, when a fallback answered (`model` is the one that did). */
  requested_model: string | null;
}

type Tens = '0' | '1' | '2' | '3' | '4' | '5';
type Digit = Tens | '6' | '7' | '8' | '9';
/** The latency histogram's columns, h00..h59 (logs/rollup.ts HIST_COLUMNS, HIST_BUCKETS = 60). */
export type HistColumn = `h${Tens}${Digit}`;

/** Histogram counts: 0 by default, so rows of dimensions without a histogram leave them out. */
type HistColumns = { [K in HistColumn]: Generated<number> };

/**
 * Sums of log rows per time bucket and dimension (logs/rollup.ts), plus the
 * latency histogram columns h00..h59.
 */
export interface LogRollupsTable extends HistColumns {
  grain: number;
  dim: string;
  bucket: number;
  dim_key: string;
  requests: number;
  errors: number;
  prompt_tokens: number;
  completion_tokens: number;
  cost: number;
  latency_sum: number;
}

/** A gateway process that may hold leases (accounts/ledger-store.ts). */
export interface LedgerHoldersTable {
  id: string;
  host: string;
  pid: number;
  started_at: number;
  /** The store's clock (epoch ms) after which the holder is presumed dead. */
  expires_at: number;
  beats: number;
}

/** Money a holder has taken from a user's balance or a token's limit and not yet given back or spent. */
export interface BalanceLeasesTable {
  holder_id: string;
  kind: 'user' | 'token';
  account_id: number;
  amount: number;
}

/** A top-up code (accounts/redemptions.ts): its key kept as a hash, redeemed at most once. */
export interface RedemptionsTable {
  id: Generated<number>;
  name: string;
  key_hash: string;
  key_hint: string;
  /** Micro-units added to the balance of whoever redeems it. */
  quota: number;
  status: 'unused' | 'redeemed' | 'disabled';
  created_by: number;
  created_at: number;
  redeemed_by: number | null;
  redeemed_at: number | null;
}

/** Money added to a balance other than by an administrator's edit (a redeemed code): the ledger's rows besides the logs. */
export interface BalanceChangesTable {
  id: Generated<number>;
  user_id: number;
  /** Micro-units added. */
  delta: number;
  reason: 'topup';
  /** The redemption's id. */
  ref_id: number | null;
  created_at: number;
}

/** A model's fallbacks (channels/fallbacks.ts): a JSON array of model names, tried in order. */
export interface ModelFallbacksTable {
  model: string;
  fallbacks: string;
  updated_at: number;
}

/** A price group (accounts/groups.ts): its ratio, in millionths, multiplies every cost charged to its callers. */
export interface GroupsTable {
  name: string;
  /** 1,000,000 = ratio 1 (full price); 500,000 = half price. */
  ratio_micros: number;
  description: string;
  created_at: number;
  updated_at: number;
}

/** A subject's rate limits and budget (limits/): on a token (its id), a user (its id), a group or a model (their names); null = no limit of that kind. */
export interface RateLimitsTable {
  scope: 'token' | 'user' | 'group' | 'model';
  subject: string;
  rpm: number | null;
  tpm: number | null;
  rpd: number | null;
  /** Micro-units a token or user may spend per budget_period (UTC day, week from Monday, or month); null = no budget. */
  budget: number | null;
  budget_period: 'day' | 'week' | 'month' | null;
  updated_at: number;
}

/** A rate-limit window's count on the shared database (limits/store.ts, used by limits/counters.ts): points used until expires_at (epoch ms). */
export interface RateCountersTable {
  key: string;
  points: number;
  expires_at: number;
}

export interface GatewayTables {
  users: UsersTable;
  sessions: SessionsTable;
  tokens: TokensTable;
  channels: ChannelsTable;
  channel_model_state: ChannelModelStateTable;
  channel_tests: ChannelTestsTable;
  channel_key_state: ChannelKeyStateTable;
  model_prices: ModelPricesTable;
  logs: LogsTable;
  log_rollups: LogRollupsTable;
  ledger_holders: LedgerHoldersTable;
  balance_leases: BalanceLeasesTable;
  redemptions: RedemptionsTable;
  balance_changes: BalanceChangesTable;
  model_fallbacks: ModelFallbacksTable;
  rate_limits: RateLimitsTable;
  rate_counters: RateCountersTable;
  groups: GroupsTable;
}

export type UserRow = Selectable<UsersTable>;
export type TokenRow = Selectable<TokensTable>;
export type ChannelRow = Selectable<ChannelsTable>;
export type NewChannel = Insertable<ChannelsTable>;
export type ChannelUpdate = Updateable<ChannelsTable>;
export type GroupRow = Selectable<GroupsTable>;
export type LogRow = Selectable<LogsTable>;
export type NewLog = Insertable<LogsTable>;
