// prom-client families whose values live elsewhere (relay-stats.ts says why)
// and are read when /metrics is scraped. Counters and gauges use prom-client's
// own collect(); a histogram's buckets cannot be set through its API, so
// ScrapedHistogram answers get() itself, in the shape the Registry formats.
import { Counter, Gauge, Histogram, type Registry } from 'prom-client';
import { LATENCY_BUCKETS, type BucketCounts } from './relay-stats.js';

type Labels = Record<string, string>;

/** A counter refilled from `read` at every scrape. */
export function scrapedCounter(
  registry: Registry,
  name: string,
  help: string,
  labelNames: string[],
  read: (add: (labels: Labels, value: number) => void) => void,
): Counter {
  return new Counter({
    name,
    help,
    labelNames,
    registers: [registry],
    collect(this: Counter) {
      this.reset();
      read((labels, value) => this.inc(labels, value));
    },
  });
}

/** A gauge set from `read` at every scrape (it may query a store). */
export function scrapedGauge(
  registry: Registry,
  name: string,
  help: string,
  labelNames: string[],
  read: (set: (labels: Labels, value: number) => void) => void | Promise<void>,
): Gauge {
  return new Gauge({
    name,
    help,
    labelNames,
    registers: [registry],
    async collect(this: Gauge) {
      this.reset();
      await read((labels, value) => this.set(labels, value));
    },
  });
}

interface HistogramValue {
  labels: Labels;
  value: number;
  metricName: string;
}

/** A histogram whose series are `BucketCounts` read at scrape time. */
export class ScrapedHistogram extends Histogram {
  constructor(
    registry: Registry,
    private readonly family: string,
    private readonly description: string,
    labelNames: string[],
    private readonly read: () => Iterable<{ labels: Labels; counts: BucketCounts }>,
  ) {
    super({ name: family, help: description, labelNames, buckets: [...LATENCY_BUCKETS], registers: [registry] });
  }

  override async get(): Promise<any> {
    const values: HistogramValue[] = [];
    const name = this.family;
    const bucket = `${name}_bucket`;
    for (const { labels, counts } of this.read()) {
      let cumulative = 0;
      LATENCY_BUCKETS.forEach((le, i) => {
        cumulative += counts.counts[i]!;
        values.push({ labels: { ...labels, le: String(le) }, value: cumulative, metricName: bucket });
      });
      values.push({ labels: { ...labels, le: '+Inf' }, value: counts.count, metricName: bucket });
      values.push({ labels, value: counts.sum, metricName: `${name}_sum` });
      values.push({ labels, value: counts.count, metricName: `${name}_count` });
    }
    return { name, help: this.description, type: 'histogram', values, aggregator: 'sum' };
  }

  /** What the Registry calls for the text format (prom-client's Histogram has its own). */
  getForPromString(): Promise<any> {
    return this.get();
  }
}
