// A 429 slows the queue down instead of burning retries: with Retry-After
// (a small HTTP upstream that answers 429, since the gateway does not pass the
// header on) the whole worker waits that long; without it (the simulator's
// per-minute limit, through the real gateway) it backs off exponentially.
// Items keep attempts 0 and show why they wait.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROOT_TOKEN, startTestGateway } from '../../gateway/test/helpers.js';
import { GatewayClient } from '../src/gateway-client/index.js';
import { enqueue, indexChunks, IndexingWorker, progress } from '../src/indexing/index.js';
import { eventually, pgliteKind, queueRows, seed, testWriters, type TestDb } from './fixtures/indexing-stores.js';

let t: TestDb;
beforeAll(async () => {
  t = await pgliteKind().open();
});
afterAll(async () => {
  await t?.close();
});

describe('rate limits', () => {
  it('honours Retry-After: the worker pauses, no attempt is counted, the items say why', async () => {
    const hits: { at: number; status: number }[] = [];
    const server = http.createServer((req, res) => {
      let body = '';
      req.on('data', (d) => (body += d));
      req.on('end', () => {
        const limited = hits.length < 2;
        hits.push({ at: Date.now(), status: limited ? 429 : 200 });
        if (limited) {
          res.writeHead(429, { 'content-type': 'application/json', 'retry-after': '1' });
          res.end(JSON.stringify({ error: { message: 'Rate limit reached for requests', type: 'requests', code: 'rate_limit_exceeded' } }));
          return;
        }
        const { input } = JSON.parse(body) as { input: string[] };
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ data: input.map((_, index) => ({ index, embedding: [0.6, 0.8, 0, 0] })), usage: { prompt_tokens: 1 } }));
      });
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const client = new GatewayClient({ url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` });
    try {
      const s = await seed(t.db, { n: 6 });
      await enqueue(t.db, s.items);
      const worker = new IndexingWorker({
        db: t.db,
        batchSize: 3,
        concurrency: 1,
        pollMs: 10,
        maxAttempts: 1,
        processors: { chunk: indexChunks({ embed: (m, x) => client.embeddings(m, x), vectorModelOf: () => 'm', ...testWriters }) },
      }).start();
      await eventually(async () => expect(hits.length).toBeGreaterThanOrEqual(1));
      await eventually(async () => {
        const rows = await queueRows(t.db);
        expect(rows.some((r) => r.error === 'rate limited, waiting 1 s before trying again: Rate limit reached for requests')).toBe(true);
      });
      await eventually(async () => expect((await progress(t.db, { datasetId: s.datasetId }))[0]).toMatchObject({ done: 6, failed: 0 }), 10_000);
      await worker.stop();
      expect(hits.map((h) => h.status)).toEqual([429, 429, 200, 200]);
      // Each 429 stopped the whole worker for the Retry-After second.
      expect(hits[1]!.at - hits[0]!.at).toBeGreaterThanOrEqual(950);
      expect(hits[2]!.at - hits[1]!.at).toBeGreaterThanOrEqual(950);
      expect(worker.stats).toMatchObject({ rateLimited: 2, failedAttempts: 0, done: 6 });
    } finally {
      await client.close();
      await new Promise<void>((r) => server.close(() => r()));
    }
  });

  it('without Retry-After (the simulator behind the gateway) it backs off exponentially and burns no attempt', async () => {
    const gw = await startTestGateway({ sim: { rpm: 1 } });
    const client = new GatewayClient({ url: gw.url, token: ROOT_TOKEN });
    try {
      const s = await seed(t.db, { n: 4 });
      await enqueue(t.db, s.items);
      const worker = new IndexingWorker({
        db: t.db,
        batchSize: 2,
        pollMs: 5,
        maxAttempts: 1,
        rateLimitBaseMs: 100,
        rateLimitMaxMs: 400,
        processors: { chunk: indexChunks({ embed: (m, x) => client.embeddings(m, x), vectorModelOf: () => 'sim-embed-384', ...testWriters }) },
      }).start();
      const started = Date.now();
      await eventually(() => expect(worker.stats.rateLimited).toBeGreaterThanOrEqual(4), 10_000);
      await worker.stop();
      const elapsed = Date.now() - started;
      // 1 call passes the limit; then 100 + 200 + 400 ms of pauses at least before the 4th 429.
      expect(elapsed).toBeGreaterThanOrEqual(650);
      const rows = (await queueRows(t.db)).filter((r) => r.collection_id === s.collectionId);
      expect(rows).toHaveLength(2);
      for (const r of rows) {
        expect(r.status).toBe('queued');
        expect(Number(r.attempts)).toBe(0);
        expect(r.error).toMatch(/^rate limited, waiting \d+ s before trying again: Rate limit reached: 1 requests per minute \(request id: \w+\)$/);
      }
      expect(worker.stats.failedAttempts).toBe(0);
    } finally {
      await client.close();
      await gw.close();
    }
  });
});
