// A link collection synced again (issue 29): POST collection/sync reads the
// page again; an unchanged page is 'sameRaw'; a changed one keeps the rows
// (and vectors) of the chunks it still has, indexes only the new ones, and
// removes the old ones only once the new ones are indexed. A link may be
// synced daily or weekly. The page is served here over HTTP; models are the
// upstream simulator (embeddings slowed, to see the old chunks stay while the
// new ones are indexed) behind a real gateway; the store is PGlite.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROOT_TOKEN, startTestGateway, type TestGateway } from '../../gateway/test/helpers.js';
import { loadPlatformConfig, startPlatform, type RunningPlatform } from '../src/index.js';

const KEY = 'kbchat-test-link-sync-key-01234567';
/** The page's sections: a heading and a paragraph each (a chunk each, at chunkSize 40). */
const PARAGRAPHS = [
  'The harbour office opens at half past seven on weekdays and at nine on Saturdays.',
  'The tide table for the north pier is posted beside the fuel pump every Monday morning.',
  'Berth B7 is kept for the lifeboat and is never let to visitors, whatever the season.',
];
/** A chunk's paragraph: its last line (the lines before are its headings). */
const paragraph = (q: string) => q.split('\n').pop();

describe('link collections synced', () => {
  let gw: TestGateway;
  let p: RunningPlatform;
  let server: Server;
  let page = { status: 200, paragraphs: PARAGRAPHS };
  let pageUrl = '';
  const call = async (path: string, json?: unknown, method = json === undefined ? 'GET' : 'POST') => {
    const res = await fetch(`${p.url}${path}`, {
      method,
      headers: { authorization: `Bearer ${KEY}`, ...(json === undefined ? {} : { 'content-type': 'application/json' }) },
      body: json === undefined ? undefined : JSON.stringify(json),
    });
    return { status: res.status, body: (await res.json()) as any };
  };
  const rows = async (collectionId: string) =>
    (
      (await call('/api/core/dataset/data/v2/list', { collectionId, offset: 0, pageSize: 50 })).body.data.list as {
        _id: string;
        q: string;
        chunkIndex: number;
      }[]
    )
      .map((r) => ({ id: r._id, q: r.q, chunkIndex: r.chunkIndex }))
      .sort((a, b) => a.chunkIndex - b.chunkIndex);
  const indexed = async (datasetId: string) => {
    for (const end = Date.now() + 30_000; ;) {
      const t = (await call(`/api/core/dataset/trainingDetail?datasetId=${datasetId}`)).body.data;
      if (t.total > 0 && t.done === t.total) return;
      if (Date.now() > end) throw new Error(`not indexed: ${JSON.stringify(t)}`);
      await new Promise((r) => setTimeout(r, 100));
    }
  };
  const embedded = () => gw.sim.stats().byModel['sim-embed-384'] ?? 0;

  beforeAll(async () => {
    server = createServer((_req, res) => {
      res.writeHead(page.status, { 'content-type': 'text/html; charset=utf-8' });
      res.end(`<!doctype html><title>Harbour notes</title><main>${page.paragraphs.map((t, i) => `<h2>Section ${i + 1}</h2><p>${t}</p>`).join('')}</main>`);
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    pageUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/notes`;
    gw = await startTestGateway({ sim: { embedDelayMs: 600 } });
    const dir = mkdtempSync(join(tmpdir(), 'kbchat-link-sync-'));
    writeFileSync(join(dir, 'config.json'), JSON.stringify({ llmModels: [{ model: 'sim-echo-prompt' }], vectorModels: [{ model: 'sim-embed-384' }] }));
    p = await startPlatform(
      loadPlatformConfig(
        { INITIAL_API_KEY: KEY },
        {
          host: '127.0.0.1',
          port: 0,
          dataDir: dir,
          databaseUrl: 'pglite:memory',
          configPath: join(dir, 'config.json'),
          gatewayUrl: gw.url,
          gatewayToken: ROOT_TOKEN,
          linkAllowPrivate: true,
          linkSyncCheckMs: 200,
        },
      ),
    );
  }, 60_000);
  afterAll(async () => {
    await p?.close();
    await gw?.close();
    server?.close();
  });

  it('keeps unchanged chunks and their vectors, indexes the new ones, and removes the old ones once the new are indexed', async () => {
    page = { status: 200, paragraphs: PARAGRAPHS };
    const datasetId = (await call('/api/core/dataset/create', { name: 'harbour', vectorModel: 'sim-embed-384' })).body.data;
    const made = await call('/api/core/dataset/collection/create/link', { datasetId, link: pageUrl, chunkSize: 40 });
    expect(made.status, JSON.stringify(made.body)).toBe(200);
    const collectionId = made.body.data.collectionId;
    await indexed(datasetId);
    const before = await rows(collectionId);
    expect(before.map((r) => paragraph(r.q))).toEqual(PARAGRAPHS);

    // Unchanged: nothing is written or embedded.
    const calls = embedded();
    const same = await call('/api/core/dataset/collection/sync', { collectionId });
    expect(same.body).toMatchObject({ code: 200, data: 'sameRaw' });
    expect(await rows(collectionId)).toEqual(before);

    // The tide table moved; a section is added at the end.
    const moved = 'The tide table for the north pier now hangs in the harbour office window.';
    const added = 'Fresh water is free at every berth from May to September.';
    page = { status: 200, paragraphs: [PARAGRAPHS[0]!, moved, PARAGRAPHS[2]!, added] };
    const synced = await call('/api/core/dataset/collection/sync', { collectionId });
    expect(synced.body).toMatchObject({ code: 200, data: 'success' });
    // Until the new chunks are indexed, the old one is still there (and found).
    const during = await rows(collectionId);
    expect(during.map((r) => paragraph(r.q))).toEqual(expect.arrayContaining([PARAGRAPHS[1], added, moved]));
    const found = await call('/api/core/dataset/searchTest', { datasetId, text: 'tide table beside the fuel pump', searchMode: 'fullTextRecall' });
    expect(paragraph(found.body.data.list[0].q)).toBe(PARAGRAPHS[1]);

    await indexed(datasetId);
    for (const end = Date.now() + 10_000; (await rows(collectionId)).length !== 4;) {
      if (Date.now() > end) throw new Error(`the old chunk stayed: ${JSON.stringify(await rows(collectionId))}`);
      await new Promise((r) => setTimeout(r, 100));
    }
    const after = await rows(collectionId);
    expect(after.map((r) => paragraph(r.q))).toEqual([PARAGRAPHS[0], moved, PARAGRAPHS[2], added]);
    // The unchanged chunks are the same rows; only the two new texts were embedded.
    expect(after[0]!.id).toBe(before[0]!.id);
    expect(after[2]!.id).toBe(before[2]!.id);
    expect(embedded() - calls).toBeLessThanOrEqual(2);
    const inputs = JSON.stringify(gw.sim.stats().lastBody['sim-embed-384']);
    expect(inputs).not.toContain('half past seven');
    const detail = (await call(`/api/core/dataset/collection/detail?id=${collectionId}`)).body.data;
    expect(Date.now() - Date.parse(detail.syncedAt)).toBeLessThan(30_000);
  }, 90_000);

  it('refuses what cannot be synced, by name, and changes nothing when the page fails', async () => {
    page = { status: 200, paragraphs: PARAGRAPHS };
    const datasetId = (await call('/api/core/dataset/create', { name: 'refusals', vectorModel: 'sim-embed-384' })).body.data;
    const text = await call('/api/core/dataset/collection/create/text', { datasetId, name: 'note', text: 'A note typed by hand.' });
    const refused = await call('/api/core/dataset/collection/sync', { collectionId: text.body.data.collectionId });
    expect(refused.status).toBe(400);
    expect(refused.body.message).toMatch(/collectionId.*only a link collection can be synced/);
    expect((await call('/api/core/dataset/collection/sync', { collectionId: 'nope' })).status).toBe(404);
    expect((await call('/api/core/dataset/collection/sync', {})).status).toBe(400);
    const link = (await call('/api/core/dataset/collection/create/link', { datasetId, link: pageUrl, chunkSize: 40 })).body.data.collectionId;
    await indexed(datasetId);
    const before = await rows(link);
    page = { status: 500, paragraphs: [] };
    const failed = await call('/api/core/dataset/collection/sync', { collectionId: link });
    expect(failed.status).toBe(502);
    expect(failed.body.message).toContain('500');
    expect(await rows(link)).toEqual(before);
    const schedule = await call('/api/core/dataset/collection/update', { id: text.body.data.collectionId, syncSchedule: 'daily' }, 'PUT');
    expect(schedule.status).toBe(400);
    expect(schedule.body.message).toMatch(/syncSchedule/);
    expect((await call('/api/core/dataset/collection/update', { id: link, syncSchedule: 'hourly' }, 'PUT')).status).toBe(400);
  }, 60_000);

  it('syncs a link on its schedule once it is due', async () => {
    page = { status: 200, paragraphs: PARAGRAPHS };
    const datasetId = (await call('/api/core/dataset/create', { name: 'scheduled', vectorModel: 'sim-embed-384' })).body.data;
    const collectionId = (await call('/api/core/dataset/collection/create/link', { datasetId, link: pageUrl, chunkSize: 40 })).body.data.collectionId;
    await indexed(datasetId);
    expect((await call(`/api/core/dataset/collection/detail?id=${collectionId}`)).body.data).toMatchObject({ syncSchedule: 'off', syncedAt: null });
    expect((await call('/api/core/dataset/collection/update', { id: collectionId, syncSchedule: 'weekly' }, 'PUT')).status).toBe(200);
    const notice = 'The harbour is closed on the first of May.';
    page = { status: 200, paragraphs: [...PARAGRAPHS, notice] };
    // Not due yet: nothing happens.
    await new Promise((r) => setTimeout(r, 600));
    expect((await rows(collectionId)).map((r) => paragraph(r.q))).not.toContain(notice);
    // Made eight days old, it is due: the timer reads it again.
    await sql`update collections set created_at = ${Date.now() - 8 * 86_400_000} where id = ${collectionId}`.execute(p.services.store.db);
    for (const end = Date.now() + 10_000; !(await rows(collectionId)).some((r) => paragraph(r.q) === notice);) {
      if (Date.now() > end) throw new Error('the scheduled sync did not run');
      await new Promise((r) => setTimeout(r, 100));
    }
    const detail = (await call(`/api/core/dataset/collection/detail?id=${collectionId}`)).body.data;
    expect(detail.syncSchedule).toBe('weekly');
    expect(Date.now() - Date.parse(detail.syncedAt)).toBeLessThan(10_000);
  }, 60_000);
});
