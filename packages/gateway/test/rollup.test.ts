// The log rollups: the latency histogram's buckets and percentile bound, and
// on every store the migration's SQL backfill building exactly the rollups
// that LogsStore.insertMany writes with the rows.
import { sql } from 'kysely';
import { afterAll, describe, expect, it } from 'vitest';
import { backfillRollups } from '../src/logs/rollup-store.js';
import { HIST_BUCKETS, HIST_EDGES, histPercentile, LATENCY_ERROR_BOUND, latencyBucket } from '../src/logs/rollup.js';
import { LogsStore } from '../src/logs/store.js';
import { openStore } from '../src/store/db.js';
import type { NewLog } from '../src/store/schema.js';
import { STORE_NAMES, testStore, type TestStore } from './stores.js';

const stores: TestStore[] = await Promise.all(STORE_NAMES.map((n) => testStore(n)));
afterAll(async () => {
  await Promise.all(stores.map((s) => s.drop()));
});

describe('latency histogram', () => {
  it('buckets whole milliseconds as its SQL edges do', () => {
    // The backfill's SQL: bucket k holds EDGES[k] <= v < EDGES[k + 1] (empty where they are equal).
    const sqlBucket = (v: number) => {
      if (v < 1) return 0;
      for (let k = HIST_BUCKETS - 1; k >= 1; k--) if (v >= HIST_EDGES[k]! && (k === HIST_BUCKETS - 1 || v < HIST_EDGES[k + 1]!)) return k;
      return -1;
    };
    for (let v = -2; v < 20_000; v++) expect(sqlBucket(v)).toBe(latencyBucket(v));
    for (let v = 20_000; v < 5_000_000; v += 997) expect(sqlBucket(v)).toBe(latencyBucket(v));
    expect(latencyBucket(10_000_000)).toBe(HIST_BUCKETS - 1);
  });

  it('reads percentiles within the stated bound of the nearest-rank value', () => {
    let seed = 1;
    const random = () => (seed = (seed * 16807) % 2147483647) / 2147483647;
    for (let trial = 0; trial < 200; trial++) {
      const values = Array.from({ length: 1 + Math.floor(random() * 300) }, () => Math.round(Math.exp(random() * 12)));
      const hist = new Array<number>(HIST_BUCKETS).fill(0);
      for (const v of values) hist[latencyBucket(v)]!++;
      const sorted = [...values].sort((a, b) => a - b);
      for (const q of [0.5, 0.95]) {
        const truth = sorted[Math.ceil(q * sorted.length) - 1]!;
        expect(Math.abs(histPercentile(hist, q)! - truth)).toBeLessThanOrEqual(LATENCY_ERROR_BOUND * truth + 0.05);
      }
    }
    expect(histPercentile(new Array(HIST_BUCKETS).fill(0), 0.5)).toBeNull();
  });
});

function logRow(i: number, over: Partial<NewLog>): NewLog {
  return {
    request_id: `req-${i}`,
    created_at: 0,
    user_id: 1 + (i % 3),
    token_id: i % 5 ? 10 + (i % 5) : null,
    channel_id: null,
    endpoint: 'chat',
    model: 'm',
    upstream_model: null,
    is_stream: 0,
    prompt_tokens: i,
    completion_tokens: 2 * i,
    usage_source: 'upstream',
    cost: 3 * i,
    latency_ms: 1,
    ttft_ms: null,
    status: 200,
    error: null,
    attempts: 1,
    request_body: null,
    ...over,
  };
}

describe.each(stores)('rollup backfill: $name', (t) => {
  it.skipIf(Boolean(t.skipReason))('builds from stored rows exactly what insertMany wrote with them', async () => {
    const store = await openStore({ url: t.url });
    try {
      const logs = new LogsStore(store.db, store.kind === 'pglite');
      const base = Date.UTC(2026, 0, 1);
      const rows = Array.from({ length: 700 }, (_, i) =>
        logRow(i, {
          created_at: base + i * 97_001,
          latency_ms: (i * 37) % 5000,
          model: i % 3 ? 'Model-A' : 'model-a', // different models to every store, MySQL's collation included
          channel_id: i % 4 ? 100 + (i % 4) : null,
          status: i % 9 ? 200 : 502,
          error: i % 9 ? (i % 13 ? null : 'stream broke') : 'upstream',
        }),
      );
      await logs.insertMany(rows);
      const dump = async () =>
        (await sql<Record<string, unknown>>`select * from log_rollups order by grain, dim, bucket, dim_key`.execute(store.db)).rows.map((r) =>
          Object.fromEntries(Object.entries(r).map(([k, v]) => [k, k === 'dim' || k === 'dim_key' ? v : Number(v)])),
        );
      const written = await dump();
      expect(
        written
          .filter((r) => r.grain === 2 && r.dim === 'model')
          .map((r) => r.dim_key)
          .sort(),
      ).toEqual(['Model-A', 'model-a']);
      await sql`delete from log_rollups`.execute(store.db);
      await backfillRollups(store.db);
      expect(await dump()).toEqual(written);
    } finally {
      await store.close();
    }
  });
});
