// What every relay handler gets: the services it uses, the caller, and a
// Responder that hides HTTP (so that a replay can capture the answer).
import type { Caller } from '../accounts/auth.js';
import type { BalanceLedger } from '../accounts/ledger.js';
import type { PriceBook } from '../accounts/pricing.js';
import type { ChannelHealth } from '../channels/health.js';
import type { ChannelRegistry } from '../channels/registry.js';
import type { GatewayConfig } from '../config.js';
import type { RelayRecorder } from '../metrics/relay-stats.js';
import type { UpstreamClient } from './upstream.js';

export interface RelayDeps {
  config: GatewayConfig;
  registry: ChannelRegistry;
  health: ChannelHealth;
  upstream: UpstreamClient;
  ledger: BalanceLedger;
  prices: PriceBook;
  /** The relay's metrics (counted in plain fields; /metrics reads them). */
  metrics: RelayRecorder;
  onError(err: Error): void;
}

/**
 * Tells the relay that the client went away. Deliberately tiny (no
 * EventEmitter): one per request, and at most one upstream call listens at a
 * time, since attempts run one after another.
 */
export class ClientSignal {
  aborted = false;
  private listener: (() => void) | undefined;

  onAbort(listener: () => void): void {
    this.listener = listener;
  }

  offAbort(listener: () => void): void {
    if (this.listener === listener) this.listener = undefined;
  }

  abort(): void {
    if (this.aborted) return;
    this.aborted = true;
    this.listener?.();
  }
}

export interface RelayContext {
  requestId: string;
  caller: Caller;
  startedAt: number;
  /** Aborted when the client goes away. */
  signal: ClientSignal;
  /** The request body as received, when it was JSON text (sent upstream as is where nothing changes). */
  rawBody?: string;
  /** The run settled and told the metrics (RelayRun.finish): the front does not count the request again. */
  recorded: boolean;
}

export interface Responder {
  /** A complete JSON answer (text already serialised). */
  json(status: number, text: string): void;
  /** Starts an SSE answer; nothing has been sent before this. */
  startStream(): void;
  /** Writes to the open stream; resolves when the socket can take more. */
  write(text: string): Promise<void> | void;
  /** Ends the stream; `text`, if any, is its last write (one socket write with the end). */
  end(text?: string): void;
  readonly started: boolean;
}
