// The platform's Prometheus metrics: one Registry per platform instance (tests
// run several in one process) with the process's default metrics, requests by
// route pattern, search latency by mode, the indexing rate, and the queue's
// depth read from the store at scrape time. Domain code sees only the small
// recorder interfaces below.
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';

/** Seconds: from a cached full-text search (milliseconds) to a slow model call. */
const LATENCY_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120];

/** What the search service reports (search/service.ts). */
export interface SearchRecorder {
  /** One dataset search: its mode as run (embedding, fullTextRecall, mixedRecall), how long, and whether it failed. */
  searched(mode: string, seconds: number, ok: boolean): void;
}

export type IndexingOutcome = 'indexed' | 'failed' | 'rate_limited' | 'waiting';

/** What the indexing worker reports (indexing/worker.ts). */
export interface IndexingRecorder {
  /**
   * Items a batch settled: indexed (done), failed (an attempt counted against
   * them), rate_limited (put back by a rate limit), waiting (their model is not configured).
   */
  settled(mode: string, outcome: IndexingOutcome, items: number): void;
}

/** A queue count by mode and status (queued, leased, failed). */
export interface QueueCount {
  mode: string;
  status: string;
  items: number;
}

export class PlatformMetrics implements SearchRecorder, IndexingRecorder {
  readonly registry = new Registry();
  private readonly httpRequests: Counter;
  private readonly httpDuration: Histogram;
  private readonly searchDuration: Histogram;
  private readonly indexedItems: Counter;

  /** `queueDepth` is read at each scrape (one grouped count over the queue table). */
  constructor(queueDepth: () => Promise<QueueCount[]>) {
    const registers = [this.registry];
    collectDefaultMetrics({ register: this.registry });
    this.httpRequests = new Counter({
      name: 'kbchat_platform_http_requests_total',
      help: 'Requests answered, by route pattern (never the raw URL) and status',
      labelNames: ['method', 'route', 'status'],
      registers,
    });
    this.httpDuration = new Histogram({
      name: 'kbchat_platform_http_request_duration_seconds',
      help: 'Time to answer a request, by route pattern (a streamed chat: to its last byte)',
      labelNames: ['method', 'route'],
      buckets: LATENCY_BUCKETS,
      registers,
    });
    this.searchDuration = new Histogram({
      name: 'kbchat_platform_search_duration_seconds',
      help: 'A dataset search (searchTest, chat, retrieval checks): embedding the question, the searches, fusion and rerank; by mode and outcome (ok, error)',
      labelNames: ['mode', 'outcome'],
      buckets: LATENCY_BUCKETS,
      registers,
    });
    this.indexedItems = new Counter({
      name: 'kbchat_platform_indexing_items_total',
      help: 'Queue items settled by the indexing worker of this process, by mode (chunk, qa) and outcome (indexed, failed, rate_limited, waiting)',
      labelNames: ['mode', 'outcome'],
      registers,
    });
    new Gauge({
      name: 'kbchat_platform_indexing_queue_items',
      help: 'Items in the indexing queue (every worker sharing the store), by mode and status (queued, leased, failed)',
      labelNames: ['mode', 'status'],
      registers,
      async collect(this: Gauge) {
        const counts = await queueDepth();
        this.reset();
        for (const c of counts) this.set({ mode: c.mode, status: c.status }, c.items);
      },
    });
  }

  /** A request answered: `route` is its pattern, so that the series stay few. */
  httpRequest(method: string, route: string, status: number, seconds: number): void {
    this.httpRequests.inc({ method, route, status: String(status) });
    this.httpDuration.observe({ method, route }, seconds);
  }

  searched(mode: string, seconds: number, ok: boolean): void {
    this.searchDuration.observe({ mode, outcome: ok ? 'ok' : 'error' }, seconds);
  }

  settled(mode: string, outcome: IndexingOutcome, items: number): void {
    if (items > 0) this.indexedItems.inc({ mode, outcome }, items);
  }

  get contentType(): string {
    return this.registry.contentType;
  }

  text(): Promise<string> {
    return this.registry.metrics();
  }
}
