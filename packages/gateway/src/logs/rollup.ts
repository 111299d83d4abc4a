// Rollups of the request log: per time bucket (minute, hour, day) and per one
// dimension (all requests, or one model / channel / token / user), the counts
// and sums the dashboard charts, and a fixed latency histogram from which p50
// and p95 are read. No SQL here (rollup-store.ts writes them): this file says
// what a row adds to which rollup, and how a histogram answers a percentile.
import type { DashboardDimension as Dimension } from '@kbchat/contracts';
import type { HistColumn, NewLog } from '../store/schema.js';

export type { Dimension };

export type Grain = 'minute' | 'hour' | 'day';
export const GRAIN_MS: Record<Grain, number> = { minute: 60_000, hour: 3_600_000, day: 86_400_000 };
/** Stored as a small integer: the first column of the rollups' key. */
export const GRAIN_CODE: Record<Grain, number> = { minute: 0, hour: 1, day: 2 };
export const GRAINS: Grain[] = ['minute', 'hour', 'day'];

/** 'all' has one row per bucket (key ''); the others one per value seen in the bucket. */
export type RollupDim = 'all' | Dimension;
export const ROLLUP_DIMS: RollupDim[] = ['all', 'model', 'channel', 'token', 'user'];
/**
 * The dimensions whose rollups keep a latency histogram. Tokens and users are
 * many, and their rows most of the rollups: 60 more columns there made each
 * rollup row cost ~100 instead of ~22 µs to write on the embedded store
 * (measured), so their groups have an average latency but no percentiles.
 */
export const HIST_DIMS: ReadonlySet<RollupDim> = new Set(['all', 'model', 'channel']);

/**
 * Latency histogram: bucket 0 holds latencies <= 0 ms, bucket k >= 1 holds
 * [2^((k-1)/3), 2^(k/3)) ms, and the last one everything above 2^(58/3) ms
 * (about 11 minutes). A percentile is reported as its bucket's geometric
 * middle, so below 11 minutes it is within 2^(1/6) - 1 = 12.25 % of the true
 * (nearest-rank) percentile: the counts are exact, only the value inside the
 * bucket is not known.
 */
export const HIST_BUCKETS = 60;
export const LATENCY_ERROR_BOUND = 2 ** (1 / 6) - 1;
// The cast: TypeScript cannot follow padStart to the template type; HistColumn spells out the same 60 names.
export const HIST_COLUMNS: readonly HistColumn[] = Array.from({ length: HIST_BUCKETS }, (_, k) => `h${String(k).padStart(2, '0')}` as HistColumn);

export function latencyBucket(ms: number): number {
  if (!(ms > 0)) return 0;
  return Math.min(HIST_BUCKETS - 1, Math.floor(3 * Math.log2(ms)) + 1);
}

/**
 * The smallest whole latency (ms) of each bucket k >= 1, for SQL that buckets
 * integer latencies the same way (the migration's backfill): bucket k holds
 * v with EDGES[k] <= v < EDGES[k + 1]. Found by latencyBucket itself, so the
 * two can never disagree.
 */
export const HIST_EDGES: number[] = (() => {
  const edges = [0];
  let v = 1;
  for (let k = 1; k < HIST_BUCKETS; k++) {
    while (latencyBucket(v) < k) v++;
    edges.push(v);
  }
  return edges;
})();

/** The value reported for a bucket: its geometric middle (the lower edge for the open last bucket). */
export function bucketValue(k: number): number {
  if (k <= 0) return 0;
  if (k >= HIST_BUCKETS - 1) return 2 ** ((HIST_BUCKETS - 2) / 3);
  return 2 ** ((k - 0.5) / 3);
}

/** The nearest-rank q-quantile (0 < q <= 1) of a histogram; null when it is empty. */
export function histPercentile(hist: number[], q: number): number | null {
  let total = 0;
  for (const n of hist) total += n;
  if (total === 0) return null;
  const rank = Math.max(1, Math.ceil(q * total));
  let seen = 0;
  for (let k = 0; k < hist.length; k++) {
    seen += hist[k]!;
    if (seen >= rank) return Math.round(bucketValue(k) * 10) / 10;
  }
  return null;
}

export interface Sums {
  requests: number;
  errors: number;
  prompt_tokens: number;
  completion_tokens: number;
  /** Micro-units, as logs.cost. */
  cost: number;
  latency_sum: number;
  hist: number[];
}

export const emptySums = (): Sums => ({
  requests: 0,
  errors: 0,
  prompt_tokens: 0,
  completion_tokens: 0,
  cost: 0,
  latency_sum: 0,
  hist: new Array<number>(HIST_BUCKETS).fill(0),
});

export function addSums(into: Sums, s: Sums, sign = 1): void {
  into.requests += sign * s.requests;
  into.errors += sign * s.errors;
  into.prompt_tokens += sign * s.prompt_tokens;
  into.completion_tokens += sign * s.completion_tokens;
  into.cost += sign * s.cost;
  into.latency_sum += sign * s.latency_sum;
  for (let k = 0; k < HIST_BUCKETS; k++) into.hist[k]! += sign * s.hist[k]!;
}

/** A failed request: an error status, or one that failed after its status was sent (a broken stream). */
export const isErrorRow = (r: { status: number; error?: string | null }): boolean => Number(r.status) >= 400 || (r.error !== null && r.error !== undefined);

export interface RollupRow extends Sums {
  grain: number;
  bucket: number;
  dim: RollupDim;
  /** The model, or the id as text ('' for 'all' and for a row without that id). */
  dim_key: string;
}

const idKey = (id: number | null | undefined) => (id === null || id === undefined ? '' : String(id));

/**
 * What these log rows add to the rollups: one row per grain, bucket,
 * dimension and value. Sorted by key, so that every writer locks rollup rows
 * in the same order (two processes' flushes cannot deadlock on them). Runs on
 * the relay's thread at each flush: rows are first summed per minute and
 * (model, channel, token, user), one map lookup a row, and only those sums
 * are spread over the grains and dimensions.
 */
export function rollupsOf(rows: NewLog[]): RollupRow[] {
  const fine = new Map<string, { minute: number; keys: [RollupDim, string][]; sums: Sums }>();
  const minuteMs = GRAIN_MS.minute;
  for (const r of rows) {
    const created = Number(r.created_at);
    const minute = created - (((created % minuteMs) + minuteMs) % minuteMs);
    const channel = idKey(r.channel_id);
    const token = idKey(r.token_id);
    const user = idKey(r.user_id);
    const key = `${minute}\u0000${channel}\u0000${token}\u0000${user}\u0000${r.model}`;
    let f = fine.get(key);
    if (!f) {
      const keys: [RollupDim, string][] = [
        ['all', ''],
        ['model', r.model],
        ['channel', channel],
        ['token', token],
        ['user', user],
      ];
      fine.set(key, (f = { minute, keys, sums: emptySums() }));
    }
    const s = f.sums;
    const latency = Number(r.latency_ms);
    s.requests++;
    if (isErrorRow({ status: r.status, error: r.error })) s.errors++;
    s.prompt_tokens += Number(r.prompt_tokens);
    s.completion_tokens += Number(r.completion_tokens);
    s.cost += Number(r.cost);
    s.latency_sum += latency;
    s.hist[latencyBucket(latency)]!++;
  }
  const noHist = emptySums().hist;
  const out = new Map<string, RollupRow>();
  for (const { minute, keys, sums } of fine.values()) {
    for (const grain of GRAINS) {
      const bucket = minute - (minute % GRAIN_MS[grain]);
      const code = GRAIN_CODE[grain];
      for (const [dim, dimKey] of keys) {
        const key = `${code}\u0000${dim}\u0000${bucket}\u0000${dimKey}`;
        let row = out.get(key);
        if (!row) out.set(key, (row = { grain: code, bucket, dim, dim_key: dimKey, ...emptySums() }));
        addSums(row, HIST_DIMS.has(dim) ? sums : { ...sums, hist: noHist });
      }
    }
  }
  return [...out.values()].sort(compareRollupKeys);
}

function compareRollupKeys(a: RollupRow, b: RollupRow): number {
  if (a.grain !== b.grain) return a.grain - b.grain;
  if (a.dim !== b.dim) return a.dim < b.dim ? -1 : 1;
  if (a.bucket !== b.bucket) return a.bucket - b.bucket;
  return a.dim_key < b.dim_key ? -1 : a.dim_key > b.dim_key ? 1 : 0;
}
