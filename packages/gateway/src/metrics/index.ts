// The gateway's Prometheus metrics: one Registry per gateway instance (tests
// run several in one process), the process's default metrics on it, the
// Fastify routes' requests, and the relay's numbers (relay-stats.ts), which
// are counted in plain fields and read only when /metrics is scraped.
import { collectDefaultMetrics, Counter, Histogram, Registry } from 'prom-client';
import { MICROS } from '../accounts/pricing.js';
import type { Channel } from '../channels/registry.js';
import { LATENCY_BUCKETS, RelayStats, type RelaySeries } from './relay-stats.js';
import { scrapedCounter, scrapedGauge, ScrapedHistogram } from './scraped.js';

export { RelayStats, type RelayRecorder } from './relay-stats.js';

/** What the scrape reads from the rest of the gateway. */
export interface GatewayMetricSources {
  channels(): readonly Channel[];
  /** Request-log rows (with their charges) waiting for the next write. */
  pendingLogRows(): number;
}

const seriesLabels = (s: RelaySeries) => ({ endpoint: s.endpoint, channel: s.channel, model: s.model });
const RELAY_LABELS = ['endpoint', 'channel', 'model'];

export class GatewayMetrics {
  readonly registry = new Registry();
  readonly relay = new RelayStats();
  private readonly httpRequests: Counter;
  private readonly httpDuration: Histogram;

  constructor(sources: GatewayMetricSources) {
    const r = this.registry;
    collectDefaultMetrics({ register: r });
    this.httpRequests = new Counter({
      name: 'kbchat_gateway_http_requests_total',
      help: 'Requests Fastify answered (admin API, console, /v1/models, health; the relay POSTs are kbchat_gateway_relay_*), by route pattern and status',
      labelNames: ['method', 'route', 'status'],
      registers: [r],
    });
    this.httpDuration = new Histogram({
      name: 'kbchat_gateway_http_request_duration_seconds',
      help: 'Time to answer a request Fastify served, by route pattern',
      labelNames: ['method', 'route'],
      buckets: [...LATENCY_BUCKETS],
      registers: [r],
    });

    const relay = this.relay;
    scrapedCounter(
      r,
      'kbchat_gateway_relay_requests_total',
      'Relayed requests by endpoint, channel, model and final status (channel and model empty when no channel served it)',
      [...RELAY_LABELS, 'status'],
      (add) => {
        for (const s of relay.all()) for (const [status, n] of s.statuses) add({ ...seriesLabels(s), status: String(status) }, n);
      },
    );
    new ScrapedHistogram(
      r,
      'kbchat_gateway_relay_request_duration_seconds',
      'A relayed request from its body read to its settlement, retries and the whole stream included',
      RELAY_LABELS,
      () => [...relay.all()].filter((s) => s.duration.count > 0).map((s) => ({ labels: seriesLabels(s), counts: s.duration })),
    );
    scrapedGauge(r, 'kbchat_gateway_relay_requests_in_flight', 'Relayed requests begun and not yet answered', [], (set) => set({}, relay.inFlight));
    new ScrapedHistogram(
      r,
      'kbchat_gateway_upstream_duration_seconds',
      'One upstream attempt, to the end of its answer (a stream: its whole length)',
      RELAY_LABELS,
      () => [...relay.all()].filter((s) => s.upstream.count > 0).map((s) => ({ labels: seriesLabels(s), counts: s.upstream })),
    );
    scrapedCounter(
      r,
      'kbchat_gateway_upstream_errors_total',
      'Failed upstream attempts by reason: the upstream status (503, 429, ...), unreachable, timeout, dropped, bad_body, stream',
      [...RELAY_LABELS, 'reason'],
      (add) => {
        for (const s of relay.all()) for (const [reason, n] of s.upstreamFailures) add({ ...seriesLabels(s), reason }, n);
      },
    );
    scrapedCounter(
      r,
      'kbchat_gateway_tokens_total',
      'Tokens charged (as the request log has them), by type: prompt or completion',
      [...RELAY_LABELS, 'type'],
      (add) => {
        for (const s of relay.all()) {
          if (s.promptTokens) add({ ...seriesLabels(s), type: 'prompt' }, s.promptTokens);
          if (s.completionTokens) add({ ...seriesLabels(s), type: 'completion' }, s.completionTokens);
        }
      },
    );
    scrapedCounter(
      r,
      'kbchat_gateway_spend_units_total',
      'Money charged for relayed requests, in currency units (1 unit = 1,000,000 micro-units)',
      RELAY_LABELS,
      (add) => {
        for (const s of relay.all()) if (s.costMicros) add(seriesLabels(s), s.costMicros / MICROS);
      },
    );
    scrapedGauge(r, 'kbchat_gateway_log_rows_pending', 'Request-log rows and their charges queued for the next store write (LOG_FLUSH_MS)', [], (set) =>
      set({}, sources.pendingLogRows()),
    );
    scrapedGauge(
      r,
      'kbchat_gateway_channel_info',
      'One series per channel: its id (the channel label elsewhere), name, type and whether it is enabled',
      ['channel', 'name', 'type', 'enabled'],
      (set) => {
        for (const c of sources.channels()) set({ channel: String(c.id), name: c.name, type: c.type, enabled: String(c.enabled) }, 1);
      },
    );
  }

  /** A request Fastify answered: `route` is its pattern (never the raw URL, so the series stay few). */
  httpRequest(method: string, route: string, status: number, seconds: number): void {
    this.httpRequests.inc({ method, route, status: String(status) });
    this.httpDuration.observe({ method, route }, seconds);
  }

  get contentType(): string {
    return this.registry.contentType;
  }

  text(): Promise<string> {
    return this.registry.metrics();
  }
}
