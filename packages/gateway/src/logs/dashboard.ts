// The dashboard: series over a time range from the log rollups (rollup.ts),
// optionally split by one dimension (top N by requests, the rest as
// "other"), the users who spent most, and what is disabled now. Knows no
// HTTP: admin/dashboard.ts parses the request.
import type { DashboardPoint as Point, DashboardGroup as Group, DashboardAnswer, TopUser, DisabledChannels } from '@kbchat/contracts';
import { MICROS } from '../accounts/pricing.js';
import type { PublicChannel } from '../channels/service.js';
import type { KeyedSums, RollupStore } from './rollup-store.js';
import { addSums, emptySums, GRAIN_MS, HIST_DIMS, histPercentile, LATENCY_ERROR_BOUND, type Dimension, type Grain, type Sums } from './rollup.js';

export type { Point, Group, DashboardAnswer, TopUser, DisabledChannels };

/**
 * The most log rows read for the p50 / p95 of token and user groups (their
 * rollups keep no histogram): ~3.4 µs a row on PGlite on a loaded 2-core
 * machine, so at most ~170 ms (docs/benchmarks.md, the console).
 */
export const PERCENTILE_ROWS_MAX = 50_000;

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

  async build(q: DashboardQuery): Promise<DashboardAnswer> {
    const grain = grainFor(q.to - q.from);
    if (!grain) throw new RangeError(`at most ${MAX_POINTS} days`);
    const step = GRAIN_MS[grain];
    // Whole buckets: the answer says the range it really covers.
    const from = Math.floor(q.from / step) * step;
    const to = Math.ceil(q.to / step) * step;
    const buckets: number[] = [];
    for (let t = from; t < to; t += step) buckets.push(t);
    const range = { grain, from, to };

    const [allRows, ranking, disabled] = await Promise.all([this.rollups.series({ ...range, dim: 'all' }), this.topUsers(range, q.rankLimit), this.disabled()]);
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

  private async groups(
    range: { grain: Grain; from: number; to: number },
    buckets: number[],
    dim: Dimension,
    top: number,
    allRows: KeyedSums[],
  ): Promise<Group[]> {
    const shown = (await this.rollups.topKeys({ ...range, dim }, 'requests', top)).map((k) => k.dim_key);
    const rows = await this.rollups.series({ ...range, dim }, shown);
    const labels = await this.labels(dim, shown);
    // Token and user rollups keep no histogram (rollup.ts HIST_DIMS): their groups' points have no
    // percentiles, and their totals' come from the log rows of the groups shown (logPercentiles).
    const pct = HIST_DIMS.has(dim);
    const out = shown.map((k) =>
      this.group(
        buckets,
        rows.filter((r) => r.dim_key === k),
        k,
        labels.get(k) ?? k,
        false,
        pct,
      ),
    );
    // "other" is everything minus the shown groups, bucket by bucket: histograms subtract too.
    const rest = new Map<number, KeyedSums>();
    for (const r of allRows) rest.set(r.bucket, { ...r, hist: [...r.hist] });
    for (const r of rows) {
      const o = rest.get(r.bucket);
      if (o) addSums(o, r, -1);
    }
    const restRows = [...rest.values()].filter((r) => r.requests > 0);
    if (restRows.length > 0) out.push(this.group(buckets, restRows, 'other', 'other', true, pct));
    if (!pct) await this.logPercentiles(dim as 'token' | 'user', range, out, allRows);
    return out;
  }

  /**
   * p50 and p95 of each shown token or user group over the whole range, from
   * its log rows' latencies; "other"'s from the range's histogram (the 'all'
   * rollup's) minus theirs. Exact counts, the same buckets and error bound as
   * the rollups' percentiles.
   */
  private async logPercentiles(dim: 'token' | 'user', range: { from: number; to: number }, groups: Group[], allRows: KeyedSums[]): Promise<void> {
    // The read is bounded: the smallest groups first, while their rows fit PERCENTILE_ROWS_MAX;
    // a group past it keeps null percentiles (and so does "other", which needs them all).
    const shown = groups.filter((g) => !g.other).sort((a, b) => a.totals.requests - b.totals.requests);
    const read: Group[] = [];
    let rows = 0;
    for (const g of shown) {
      if (rows + g.totals.requests > PERCENTILE_ROWS_MAX) break;
      rows += g.totals.requests;
      read.push(g);
    }
    const hists = await this.rollups.latencyHistograms(
      dim,
      read.map((g) => g.key),
      range.from,
      range.to,
    );
    const rest = emptySums();
    for (const r of allRows) addSums(rest, r);
    for (const g of read) addSums(rest, { ...emptySums(), hist: hists.get(g.key)! }, -1);
    for (const g of groups) {
      const hist = g.other ? (read.length === shown.length ? rest.hist : undefined) : hists.get(g.key);
      if (!hist) continue;
      g.totals.latency_p50_ms = histPercentile(hist, 0.5);
      g.totals.latency_p95_ms = histPercentile(hist, 0.95);
    }
  }

  private async labels(dim: Dimension, keys: string[]): Promise<Map<string, string>> {
    if (dim === 'model') return new Map(keys.map((k) => [k, k]));
    const ids = keys.filter((k) => /^\d+$/.test(k)).map(Number);
    const names = await this.rollups.names(dim, ids);
    return new Map(keys.map((k) => [k, k === '' ? `(no ${dim})` : (names.get(Number(k)) ?? `${dim} ${k} (deleted)`)]));
  }

  private async topUsers(range: { grain: Grain; from: number; to: number }, limit: number) {
    const rows = (await this.rollups.topKeys({ ...range, dim: 'user' }, 'cost', limit)).filter((r) => r.dim_key !== '');
    const names = await this.rollups.names(
      'user',
      rows.map((r) => Number(r.dim_key)),
    );
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
        c.disabled_models.map((d) => ({
          channel_id: c.id,
          channel_name: c.name,
          channel_status: c.status,
          model: d.model,
          reason: d.reason,
          since: d.disabled_at,
        })),
      ),
    };
  }
}
