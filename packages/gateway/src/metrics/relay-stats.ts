// The relay's numbers, kept as plain counters: a prom-client observe() with
// labels builds a label hash string, a closure and an object per call, which
// the relay's 16-30 us of CPU a request cannot spare four times over. Here a
// request costs three Map lookups and a few additions; the series are turned
// into Prometheus families only when /metrics is scraped (index.ts).
import type { Endpoint } from '../providers/index.js';

/** Seconds; shared by the request and upstream histograms (a stream's upstream call lasts as long as the stream). */
export const LATENCY_BUCKETS: readonly number[] = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120];

/** A histogram's counts, one per bucket (not cumulative), and its sum and count. */
export class BucketCounts {
  readonly counts = new Float64Array(LATENCY_BUCKETS.length);
  sum = 0;
  count = 0;

  observe(seconds: number): void {
    let i = 0;
    while (i < LATENCY_BUCKETS.length && seconds > LATENCY_BUCKETS[i]!) i++;
    if (i < LATENCY_BUCKETS.length) this.counts[i]! += 1;
    this.sum += seconds;
    this.count += 1;
  }
}

/** What the relay tells about its requests (relay code sees only this). */
export interface RelayRecorder {
  /** A client's request arrived at a front: in flight until `ended`. */
  started(): void;
  ended(): void;
  /**
   * A request that ran (a model was reserved for): its final status, the whole
   * request's duration, and what it cost. `channelId` undefined: no channel
   * served it, and then the model is not a label either (a client can name any).
   */
  finished(
    endpoint: Endpoint,
    model: string,
    channelId: number | undefined,
    status: number,
    ms: number,
    promptTokens: number,
    completionTokens: number,
    costMicros: number,
  ): void;
  /** A request answered before a model ran (token, body, quota, schema). */
  refused(endpoint: Endpoint, status: number, ms: number): void;
  /** One upstream attempt; `failure` is why it failed (an HTTP status, or unreachable, timeout, ...), undefined when it served. */
  upstream(endpoint: Endpoint, channelId: number, model: string, seconds: number, failure: string | undefined): void;
}

/** One (endpoint, channel, model): everything the relay counts about it. */
export class RelaySeries {
  /** Requests by final HTTP status. */
  readonly statuses = new Map<number, number>();
  readonly duration = new BucketCounts();
  readonly upstream = new BucketCounts();
  /** Failed upstream attempts by reason. */
  readonly upstreamFailures = new Map<string, number>();
  promptTokens = 0;
  completionTokens = 0;
  costMicros = 0;

  constructor(
    readonly endpoint: Endpoint,
    /** The channel id as a label value; '' when no channel served. */
    readonly channel: string,
    /** '' when no channel served. */
    readonly model: string,
  ) {}
}

const NO_CHANNEL = -1;

export class RelayStats implements RelayRecorder {
  inFlight = 0;
  private readonly byEndpoint: Record<Endpoint, Map<number, Map<string, RelaySeries>>> = { chat: new Map(), embeddings: new Map(), rerank: new Map() };

  started(): void {
    this.inFlight++;
  }

  ended(): void {
    this.inFlight--;
  }

  finished(
    endpoint: Endpoint,
    model: string,
    channelId: number | undefined,
    status: number,
    ms: number,
    promptTokens: number,
    completionTokens: number,
    costMicros: number,
  ): void {
    const s = channelId === undefined ? this.series(endpoint, NO_CHANNEL, '') : this.series(endpoint, channelId, model);
    s.statuses.set(status, (s.statuses.get(status) ?? 0) + 1);
    s.duration.observe(ms / 1000);
    s.promptTokens += promptTokens;
    s.completionTokens += completionTokens;
    s.costMicros += costMicros;
  }

  refused(endpoint: Endpoint, status: number, ms: number): void {
    const s = this.series(endpoint, NO_CHANNEL, '');
    s.statuses.set(status, (s.statuses.get(status) ?? 0) + 1);
    s.duration.observe(ms / 1000);
  }

  upstream(endpoint: Endpoint, channelId: number, model: string, seconds: number, failure: string | undefined): void {
    const s = this.series(endpoint, channelId, model);
    s.upstream.observe(seconds);
    if (failure !== undefined) s.upstreamFailures.set(failure, (s.upstreamFailures.get(failure) ?? 0) + 1);
  }

  /** Every series so far, for a scrape. */
  *all(): Generator<RelaySeries> {
    for (const byChannel of Object.values(this.byEndpoint)) for (const byModel of byChannel.values()) yield* byModel.values();
  }

  private series(endpoint: Endpoint, channelId: number, model: string): RelaySeries {
    const byChannel = this.byEndpoint[endpoint];
    let byModel = byChannel.get(channelId);
    if (byModel === undefined) byChannel.set(channelId, (byModel = new Map()));
    let s = byModel.get(model);
    if (s === undefined) byModel.set(model, (s = new RelaySeries(endpoint, channelId === NO_CHANNEL ? '' : String(channelId), model)));
    return s;
  }
}
