// The dashboard: series over a time range from the log rollups (rollup.ts),
// optionally split by one dimension (top N by requests, the rest as
// "other"), the users who spent most, and what is disabled now. Knows no
// HTTP: admin/dashboard.ts parses the request.
import { MICROS } from '../accounts/pricing.js';
import type { PublicChannel } from '../channels/service.js';
import type { KeyedSums, RollupStore } from './rollup-store.js';
import {
  addSums, emptySums, GRAIN_MS, HIST_DIMS, histPercentile, LATENCY_ERROR_BOUND, type Dimension, type Grain, type Sums,
} from './rollup.js';

/** The most points a series has (give or take the two partial buckets at the ends). */
export const MAX_POINTS = 200;

/**
 * The bucket for a range: the finest of minute, hour and day that gives at
 * most MAX_POINTS points (up to 200 minutes: minutes; up to 200 hours:
 * hours; up to 200 days: days). null when even days are too many.
 */
export function grainFor(spanMs: number): Grain | null {
  for (const g of ['minute', 'hour', 'day'] as const) if (spanMs <= MAX_POINTS * GRAIN_MS[g]) return g;
  return null;
}

export interface DashboardQuery {
  from: number;
  to: number;
  groupBy?: Dimension;
  /** Groups shown by name when split; the rest add up to "other". */
  top: number;
  /** Users in the spend ranking. */
  rankLimit: number;
}

export interface Point {
  t: number;
  requests: number;
  errors: number;
  prompt_tokens: number;
  completion_tokens: number;
  /** Currency units, as the logs' `cost`; `cost_micros` is exact. */
  cost: number;
  cost_micros: number;
  latency_avg_ms: number | null;
  latency_p50_ms: number | null;
  latency_p95_ms: number | null;
}

export interface Group {
  /** The model, or the id as text; '' for requests without one (e.g. failed before a channel was chosen); 'other' for the rest. */
  key: string;
  label: string;
  other: boolean;
  totals: Omit<Point, 't'>;
  points: Point[];
}

/** GET /api/dashboard's answer. */
export type DashboardAnswer = Awaited<ReturnType<DashboardService['build']>>;
export type TopUser = DashboardAnswer['top_users'][number];
export type DisabledChannels = DashboardAnswer['disabled'];

function shape(s: Sums, percentiles = true): Omit<Point, 't'> {
  return {
    requests: s.requests,
    errors: s.errors,
    prompt_tokens: s.prompt_tokens,
    completion_tokens: s.completion_tokens,
    cost: s.cost / MICROS,
    cost_micros: s.cost,
    latency_avg_ms: s.requests > 0 ? Math.round((s.latency_sum / s.requests) * 10) / 10 : null,
    latency_p50_ms: percentiles ? histPercentile(s.hist, 0.5) : null,
    latency_p95_ms: percentiles ? histPercentile(s.hist, 0.95) : null,
  };
}

export class DashboardService {
  constructor(
    private readonly rollups: RollupStore,
    private readonly channels: () => Promise<PublicChannel[]>,
  ) {}

  async build(q: DashboardQuery) {
    const grain = grainFor(q.to - q.from);
    if (!grain) throw new RangeError(`at most ${MAX_POINTS} days`);
    const step = GRAIN_MS[grain];
    // Whole buckets: the answer says the range it really covers.
    const from = Math.floor(q.from / step) * step;
    const to = Math.ceil(q.to / step) * step;
    const buckets: number[] = [];
    for (let t = from; t < to; t += step) buckets.push(t);
    const range = { grain, from, to };

    const [allRows, ranking, disabled] = await Promise.all([
      this.rollups.series({ ...range, dim: 'all' }),
      this.topUsers(range, q.rankLimit),
      this.disabled(),
    ]);
    const all = this.group(buckets, allRows, '', 'all', false);
    const groups = q.groupBy ? await this.groups(range, buckets, q.groupBy, q.top, allRows) : undefined;
    return {
      from,
      to,
      bucket: grain,
      bucket_ms: step,
      latency_error_bound: LATENCY_ERROR_BOUND,
      totals: all.totals,
      points: all.points,
      ...(q.groupBy ? { group_by: q.groupBy, groups } : {}),
      top_users: ranking,
      disabled,
    };
  }

  /** Sums per bucket (dense: a bucket without requests is a zero point). */
  private group(buckets: number[], rows: KeyedSums[], key: string, label: string, other: boolean, percentiles = true): Group {
    const byBucket = new Map(rows.map((r) => [r.bucket, r]));
    const total = emptySums();
    const points = buckets.map((t) => {
      const s = byBucket.get(t) ?? emptySums();
      addSums(total, s);
      return { t, ...shape(s, percentiles) };
    });
    return { key, label, other, totals: shape(total, percentiles), points };
  }

  private async groups(range: { grain: Grain; from: number; to: number }, buckets: number[], dim: Dimension, top: number, allRows: KeyedSums[]): Promise<Group[]> {
    const shown = (await this.rollups.topKeys({ ...range, dim }, 'requests', top)).map((k) => k.dim_key);
    const rows = await this.rollups.series({ ...range, dim }, shown);
    const labels = await this.labels(dim, shown);
    // Token and user rollups keep no histogram (rollup.ts HIST_DIMS): their groups have no percentiles.
    const pct = HIST_DIMS.has(dim);
    const out = shown.map((k) => this.group(buckets, rows.filter((r) => r.dim_key === k), k, labels.get(k) ?? k, false, pct));
    // "other" is everything minus the shown groups, bucket by bucket: histograms subtract too.
    const rest = new Map<number, KeyedSums>();
    for (const r of allRows) rest.set(r.bucket, { ...r, hist: [...r.hist] });
    for (const r of rows) {
      const o = rest.get(r.bucket);
      if (o) addSums(o, r, -1);
    }
    const restRows = [...rest.values()].filter((r) => r.requests > 0);
    if (restRows.length > 0) out.push(this.group(buckets, restRows, 'other', 'other', true, pct));
    return out;
  }

  private async labels(dim: Dimension, keys: string[]): Promise<Map<string, string>> {
    if (dim === 'model') return new Map(keys.map((k) => [k, k]));
    const ids = keys.filter((k) => /^\d+$/.test(k)).map(Number);
    const names = await this.rollups.names(dim, ids);
    return new Map(keys.map((k) => [k, k === '' ? `(no ${dim})` : (names.get(Number(k)) ?? `${dim} ${k} (deleted)`)]));
  }

  private async topUsers(range: { grain: Grain; from: number; to: number }, limit: number) {
    const rows = (await this.rollups.topKeys({ ...range, dim: 'user' }, 'cost', limit)).filter((r) => r.dim_key !== '');
    const names = await this.rollups.names('user', rows.map((r) => Number(r.dim_key)));
    return rows.map((r) => ({
      user_id: Number(r.dim_key),
      username: names.get(Number(r.dim_key)) ?? null,
      requests: r.requests,
      errors: r.errors,
      prompt_tokens: r.prompt_tokens,
      completion_tokens: r.completion_tokens,
      cost: r.cost / MICROS,
      cost_micros: r.cost,
    }));
  }

  /**
   * Channels an operator disabled (since their last edit, which is when that
   * happened unless they were edited again) and channel models disabled by
   * the health check, with its reason (channels/health.ts).
   */
  private async disabled() {
    const list = await this.channels();
    return {
      channels: list
        .filter((c) => c.status === 'disabled')
        .map((c) => ({ channel_id: c.id, name: c.name, reason: 'disabled by an administrator', since: c.updated_at })),
      models: list.flatMap((c) =>
        c.disabled_models.map((d) => ({ channel_id: c.id, channel_name: c.name, channel_status: c.status, model: d.model, reason: d.reason, since: d.disabled_at })),
      ),
    };
  }
}
