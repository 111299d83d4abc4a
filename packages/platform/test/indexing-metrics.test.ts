// The indexing worker's metrics on a real queue (PGlite, and PostgreSQL when
// it runs): items settled by outcome (a rate limit puts a batch back, counted
// failures, then indexed), and the queue's depth by status read from the store
// at scrape time, in the Prometheus text /metrics serves.
import { afterAll, describe, expect, it } from 'vitest';
import { parseExposition } from '../../gateway/test/prom-text.js';
import { GatewayError } from '../src/gateway-client/index.js';
import { enqueue, IndexingWorker, queueDepth, type BatchProcessor } from '../src/indexing/index.js';
import { PlatformMetrics } from '../src/metrics/index.js';
import { eventually, pgliteKind, postgresKind, queueRows, seed, type StoreKind } from './fixtures/indexing-stores.js';

const kinds: StoreKind[] = [pgliteKind(), await postgresKind()];
afterAll(async () => {
  await Promise.all(kinds.map((k) => k.drop()));
});

describe.each(kinds)('indexing metrics on $name', (kind) => {
  if (kind.skipReason) console.warn(`[skip] indexing metrics on ${kind.name}: ${kind.skipReason}`);
  const run = kind.skipReason ? it.skip : it;

  run(
    'counts items by outcome, and the queue by status at scrape time',
    async () => {
      const t = await kind.open();
      const metrics = new PlatformMetrics(() => queueDepth(t.db));
      const scrape = async () => parseExposition(await metrics.text());
      const items = (m: Awaited<ReturnType<typeof scrape>>, outcome: string) => m.sum('kbchat_platform_indexing_items_total', { mode: 'chunk', outcome });
      const queue = (m: Awaited<ReturnType<typeof scrape>>, status: string) => m.sum('kbchat_platform_indexing_queue_items', { mode: 'chunk', status });
      try {
        const good = await seed(t.db, { n: 6 });
        await enqueue(t.db, good.items);
        expect(queue(await scrape(), 'queued')).toBe(6);

        // The first call is rate limited (the batch goes back, no attempt used), then every item is indexed.
        let calls = 0;
        const flaky: BatchProcessor<null> = {
          async prepare() {
            if (++calls === 1) throw new GatewayError(429, 'rate_limit', 'slow down (request id: test-1)', 'test-1', undefined, 20);
            return null;
          },
          async commit() {},
        };
        const opts = { batchSize: 10, pollMs: 5, leaseMs: 30_000, rateLimitBaseMs: 20, metrics };
        const worker = new IndexingWorker({ ...opts, db: t.db, processors: { chunk: flaky } }).start();
        await eventually(async () => expect(await queueRows(t.db)).toHaveLength(0));
        await worker.stop();
        let m = await scrape();
        expect(items(m, 'rate_limited')).toBe(6);
        expect(items(m, 'indexed')).toBe(6);
        expect(queue(m, 'queued')).toBe(0);

        // Failures: every attempt counts, and with one attempt allowed the items end as failed.
        const bad = await seed(t.db, { n: 3 });
        await enqueue(t.db, bad.items);
        const broken: BatchProcessor<null> = {
          async prepare() {
            throw new GatewayError(502, 'bad_response', 'the upstream broke (request id: test-2)', 'test-2', undefined);
          },
          async commit() {},
        };
        const failing = new IndexingWorker({ ...opts, db: t.db, maxAttempts: 1, processors: { chunk: broken } }).start();
        await eventually(async () => expect((await queueRows(t.db)).filter((r: any) => r.status === 'failed')).toHaveLength(3));
        await failing.stop();
        m = await scrape();
        expect(items(m, 'failed')).toBe(3);
        expect(items(m, 'indexed')).toBe(6);
        expect(queue(m, 'failed')).toBe(3);
        expect(queue(m, 'queued')).toBe(0);
      } finally {
        await t.close();
      }
    },
    60_000,
  );
});
