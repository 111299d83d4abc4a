// What every relay handler gets: the services it uses, the caller, and a
// Responder that hides HTTP (so that a replay can capture the answer). The
// Responder and the ClientSignal are the HTTP/1.1 fronts' (http1/exchange.ts);
// they are named here too because every relay handler speaks of them.
import type { Caller } from '../accounts/auth.js';
import type { BalanceLedger } from '../accounts/ledger.js';
import type { FallbackBook } from '../channels/fallbacks.js';
import type { RateLimiter } from '../limits/rate-limits.js';
import type { PriceBook } from '../accounts/pricing.js';
import type { GroupBook } from '../accounts/groups.js';
import type { ChannelHealth } from '../channels/health.js';
import type { ChannelRegistry } from '../channels/registry.js';
import type { GatewayConfig } from '../config.js';
import type { RelayRecorder } from '../metrics/relay-stats.js';
import type { UpstreamClient } from './upstream.js';
import type { ClientSignal } from '../http1/exchange.js';

export { ClientSignal, type Responder } from '../http1/exchange.js';

export interface RelayDeps {
  config: GatewayConfig;
  registry: ChannelRegistry;
  health: ChannelHealth;
  upstream: UpstreamClient;
  ledger: BalanceLedger;
  prices: PriceBook;
  fallbacks: FallbackBook;
  /** Price groups: each caller's ratio (accounts/groups.ts). */
  groups: GroupBook;
  /** Rate limits (limits/): checked in RelayRun.begin. */
  limits: RateLimiter;
  /** The relay's metrics (counted in plain fields; /metrics reads them). */
  metrics: RelayRecorder;
  onError(err: Error): void;
}

export interface RelayContext {
  requestId: string;
  caller: Caller;
  startedAt: number;
  /** Aborted when the client goes away. */
  signal: ClientSignal;
  /** The request body as received, when it was JSON text (sent upstream as is where nothing changes). */
  rawBody?: string;
  /** The caller's X-Kbchat-Priority, for embeddings on kbchat's local models (Provider.relaysPriority). */
  priority?: string;
  /** The run settled and told the metrics (RelayRun.finish): the front does not count the request again. */
  recorded: boolean;
}
