// The platform's /metrics and /readyz over HTTP, with a real gateway in front
// of the upstream simulator: requests by route pattern, search latency by
// mode, the indexing rate and the queue's depth move by what real requests
// did; the platform's request id reaches the gateway's request log; /readyz
// names the gateway when it cannot be reached.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROOT_TOKEN, startTestGateway, type TestGateway } from '../../gateway/test/helpers.js';
import { parseExposition, type Exposition } from '../../gateway/test/prom-text.js';
import { loadPlatformConfig, startPlatform, type PlatformConfig, type RunningPlatform } from '../src/index.js';
import { apiCaller } from './api-caller.js';

const KEY = 'kbchat-test-metrics-key-0123456789';
const TEXT = ['# Etna\n\nEtna is a volcano on Sicily.', '# Fuji\n\nFuji is a volcano in Japan.', '# Alps\n\nThe Alps have glaciers.'].join('\n\n');

/** A port nothing listens on (taken, then given back). */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as { port: number }).port;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

describe('platform metrics', () => {
  let gw: TestGateway;
  let p: RunningPlatform;
  let dir: string;
  let configPath: string;
  let datasetId: string;
  const call = apiCaller(() => p.url, KEY);
  const config = (overrides: Partial<PlatformConfig>) =>
    loadPlatformConfig(
      { INITIAL_API_KEY: KEY },
      { host: '127.0.0.1', port: 0, dataDir: dir, databaseUrl: 'pglite:memory', configPath, gatewayUrl: gw.url, gatewayToken: ROOT_TOKEN, ...overrides },
    );
  const scrape = async (url = p.url): Promise<Exposition> => {
    const res = await fetch(`${url}/metrics`);
    expect(res.status).toBe(200);
    return parseExposition(await res.text());
  };
  /** Makes a dataset with TEXT in it; resolves with its ids once `until` says the collection is far enough. */
  const addText = async (caller: typeof call, until: (d: any) => boolean) => {
    const id = (await caller('/api/core/dataset/create', { name: 'volcanoes', vectorModel: 'sim-embed-384' })).body.data as string;
    const made = await caller('/api/core/dataset/collection/create/text', { datasetId: id, name: 'volcanoes.md', text: TEXT, chunkSize: 20 });
    expect(made.status, JSON.stringify(made.body)).toBe(200);
    const deadline = Date.now() + 30_000;
    for (;;) {
      const d = (await caller(`/api/core/dataset/collection/trainingDetail?collectionId=${made.body.data.collectionId}`)).body.data;
      if (until(d)) return { datasetId: id, detail: d };
      if (d.failed > 0 || Date.now() > deadline) throw new Error(`indexing stalled: ${JSON.stringify(d)}`);
      await new Promise((r) => setTimeout(r, 100));
    }
  };

  beforeAll(async () => {
    gw = await startTestGateway();
    dir = mkdtempSync(join(tmpdir(), 'kbchat-platform-metrics-'));
    configPath = join(dir, 'config.json');
    writeFileSync(configPath, JSON.stringify({ llmModels: [{ model: 'sim-chat' }], vectorModels: [{ model: 'sim-embed-384', maxToken: 512 }] }));
    p = await startPlatform(config({}));
  }, 60_000);
  afterAll(async () => {
    await p?.close();
    await gw?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('counts indexed items, and searches by mode with their latency', async () => {
    const before = await scrape();
    const made = await addText(call, (d) => d.total >= 3 && d.done === d.total);
    datasetId = made.datasetId;
    const mid = await scrape();
    expect(
      mid.sum('kbchat_platform_indexing_items_total', { mode: 'chunk', outcome: 'indexed' }) -
        before.sum('kbchat_platform_indexing_items_total', { mode: 'chunk', outcome: 'indexed' }),
    ).toBe(made.detail.total);

    for (const mode of ['embedding', 'fullTextRecall', 'mixedRecall']) {
      const r = await call('/api/core/dataset/searchTest', { datasetId, text: 'volcano', searchMode: mode });
      expect(r.status, JSON.stringify(r.body)).toBe(200);
      // The question's embedding call went to the gateway under the platform's id.
      if (mode !== 'fullTextRecall') expect(r.body.data.modelCalls.map((c: any) => c.requestId)).toEqual([`${r.requestId}-1`]);
    }
    const after = await scrape();
    for (const mode of ['embedding', 'fullTextRecall', 'mixedRecall']) {
      const l = { mode, outcome: 'ok' };
      expect(after.sum('kbchat_platform_search_duration_seconds_count', l) - mid.sum('kbchat_platform_search_duration_seconds_count', l)).toBe(1);
      expect(
        after.sum('kbchat_platform_search_duration_seconds_bucket', { ...l, le: '+Inf' }) -
          mid.sum('kbchat_platform_search_duration_seconds_bucket', { ...l, le: '+Inf' }),
      ).toBe(1);
      expect(after.sum('kbchat_platform_search_duration_seconds_sum', l)).toBeGreaterThan(0);
    }
    const route = { method: 'POST', route: '/api/core/dataset/searchTest', status: '200' };
    expect(after.sum('kbchat_platform_http_requests_total', route) - mid.sum('kbchat_platform_http_requests_total', route)).toBe(3);
    expect(after.types.get('kbchat_platform_http_request_duration_seconds')).toBe('histogram');
    expect(after.types.get('process_resident_memory_bytes')).toBe('gauge');
  });

  it("sends the platform's request id to the gateway: one id finds the chat's calls in the gateway's request log", async () => {
    const appId = (
      await call('/api/core/app/create', { name: 'metrics', model: 'sim-chat', datasets: [datasetId], search: { searchMode: 'embedding', similarity: 0 } })
    ).body.data;
    const key = (await call('/api/support/openapi/create', { name: 'k', appId })).body.data as string;
    const res = await fetch(`${p.url}/api/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ stream: false, detail: true, messages: [{ role: 'user', content: 'Which volcano is in Japan?' }] }),
    });
    expect(res.status).toBe(200);
    const platformId = res.headers.get('x-request-id')!;
    expect(platformId).toMatch(/^\d{17}[0-9a-f]{12}$/);
    const answer = (await res.json()) as any;
    const calls = (answer.responseData as any[]).flatMap((s) => s.modelCalls ?? []);
    expect(calls.map((c: any) => c.step)).toEqual(['embeddings', 'chatNode']);
    // Each call has its own id, the platform's with the call's number.
    expect(calls.map((c: any) => c.requestId)).toEqual([`${platformId}-1`, `${platformId}-2`]);
    await gw.gw.services.ledger.flush();
    const logs = ((await (await gw.api('/api/logs?limit=100')).json()) as any).data as any[];
    const rows = logs.filter((r) => r.request_id.startsWith(platformId)).sort((a, b) => a.request_id.localeCompare(b.request_id));
    expect(rows.map((r) => [r.request_id, r.endpoint, r.model])).toEqual([
      [`${platformId}-1`, 'embeddings', 'sim-embed-384'],
      [`${platformId}-2`, 'chat', 'sim-chat'],
    ]);
    const m = await scrape();
    expect(m.sum('kbchat_platform_http_requests_total', { method: 'POST', route: '/api/v1/chat/completions', status: '200' })).toBe(1);
    // The gateway counted them under the same route it knows them by.
    const gwMetrics = parseExposition(await (await fetch(`${gw.url}/metrics`)).text());
    expect(gwMetrics.sum('kbchat_gateway_relay_requests_total', { endpoint: 'chat', model: 'sim-chat', status: '200' })).toBeGreaterThanOrEqual(1);
  });

  it('counts the queue by mode and status at scrape time (a platform whose worker is off)', async () => {
    const idle = await startPlatform(config({ dataDir: mkdtempSync(join(tmpdir(), 'kbchat-platform-metrics-idle-')), runWorker: false }));
    try {
      const idleCall = apiCaller(() => idle.url, KEY);
      const { detail } = await addText(idleCall, (d) => d.total >= 3);
      expect(detail.queued).toBe(detail.total);
      const m = await scrape(idle.url);
      expect(m.sum('kbchat_platform_indexing_queue_items', { mode: 'chunk', status: 'queued' })).toBe(detail.total);
      // Its own registry: nothing of the other platform's searches.
      expect(m.sum('kbchat_platform_search_duration_seconds_count')).toBe(0);
    } finally {
      await idle.close();
    }
  }, 30_000);

  it('/readyz: 200 with the store, its migrations and the gateway answering; 503 naming the gateway when it is unreachable', async () => {
    const ok = await fetch(`${p.url}/readyz`);
    expect(ok.status).toBe(200);
    expect(await ok.json()).toMatchObject({ ok: true, failing: [], checks: { store: { ok: true }, migrations: { ok: true }, gateway: { ok: true } } });
    const unreachable = `http://127.0.0.1:${await closedPort()}`;
    const lonely = await startPlatform(
      config({ dataDir: mkdtempSync(join(tmpdir(), 'kbchat-platform-metrics-lonely-')), gatewayUrl: unreachable, runWorker: false }),
    );
    try {
      const res = await fetch(`${lonely.url}/readyz`);
      expect(res.status).toBe(503);
      const body = (await res.json()) as any;
      expect(body.failing).toEqual(['gateway']);
      expect(body.checks.gateway.error).toContain(unreachable);
      expect(body.checks.store.ok).toBe(true);
      // Alive all the same: /healthz is about the process.
      expect((await fetch(`${lonely.url}/healthz`)).status).toBe(200);
    } finally {
      await lonely.close();
    }
  }, 30_000);

  it('serves /metrics to loopback callers only, unless METRICS_TOKEN is set', async () => {
    const proxied = await fetch(`${p.url}/metrics`, { headers: { 'x-forwarded-for': '198.51.100.7' } });
    expect(proxied.status).toBe(403);
    expect(((await proxied.json()) as any).message).toContain('METRICS_TOKEN');
    const guarded = await startPlatform(
      config({ dataDir: mkdtempSync(join(tmpdir(), 'kbchat-platform-metrics-token-')), runWorker: false, metricsToken: 'platform-metrics-secret' }),
    );
    try {
      expect((await fetch(`${guarded.url}/metrics`)).status).toBe(401);
      expect((await fetch(`${guarded.url}/metrics`, { headers: { authorization: 'Bearer platform-metrics-secret' } })).status).toBe(200);
    } finally {
      await guarded.close();
    }
  }, 30_000);
});
