// The dataset API over HTTP on a real embedded store: FastGPT's paths and
// shapes, general keys only, team scoping, and 4xx errors that name the field.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadPlatformConfig, startPlatform, type RunningPlatform } from '../src/index.js';
import { apiKeyRow, newApiKey, newId } from '../src/keys/auth.js';

const KEY = 'kbchat-test-general-key-0123456789';

describe('dataset API', () => {
  let p: RunningPlatform;
  const call = async (path: string, init: { method?: string; json?: unknown; key?: string } = {}) => {
    const res = await fetch(`${p.url}${path}`, {
      method: init.method ?? (init.json === undefined ? 'GET' : 'POST'),
      headers: { authorization: `Bearer ${init.key ?? KEY}`, ...(init.json === undefined ? {} : { 'content-type': 'application/json' }) },
      body: init.json === undefined ? undefined : JSON.stringify(init.json),
    });
    return { status: res.status, body: (await res.json()) as any };
  };

  beforeAll(async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'kbchat-platform-api-'));
    p = await startPlatform(loadPlatformConfig({ INITIAL_API_KEY: KEY }, { host: '127.0.0.1', port: 0, dataDir, databaseUrl: 'pglite:memory' }));
  }, 60_000);
  afterAll(async () => p?.close());

  it('refuses calls without a key, with an unknown key, and with an application key', async () => {
    expect((await fetch(`${p.url}/api/core/dataset/list`, { method: 'POST' })).status).toBe(401);
    const unknown = await call('/api/core/dataset/list', { json: {}, key: 'kbchat-nope' });
    expect(unknown.status).toBe(401);
    expect(unknown.body).toMatchObject({ code: 401, statusText: 'unauthorized', data: null });
    const appKey = newApiKey();
    await p.services.keys.insertKey(apiKeyRow(appKey, { teamId: p.services.rootTeamId, appId: 'app1', name: 'app', expiresAt: null }));
    expect((await call('/api/core/dataset/list', { json: {}, key: appKey })).status).toBe(403);
  });

  it('authenticates before it reads the body: no key is a 401 whatever the body, a key with a bad body a 400 naming the field', async () => {
    const noKey = (body: string) =>
      fetch(`${p.url}/api/core/dataset/collection/create/text`, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
    for (const body of ['{"datasetId": ', JSON.stringify({ datasetId: 42 })]) {
      const r = await noKey(body);
      expect(r.status).toBe(401);
      expect(await r.json()).toMatchObject({ code: 401, statusText: 'unauthorized', data: null });
    }
    const bad = await call('/api/core/dataset/collection/create/text', { json: { datasetId: 'd1', name: 'n', text: 'some text', chunkSize: 'big' } });
    expect(bad.status).toBe(400);
    expect(bad.body).toEqual({ code: 400, statusText: 'invalid_field', message: "Invalid 'chunkSize': must be a number", data: null });
    const missing = await call('/api/core/dataset/detail');
    expect(missing.status).toBe(400);
    expect(missing.body).toMatchObject({ statusText: 'invalid_field', message: "Invalid 'id': is required" });
  });

  it('creates, lists, reads and deletes a dataset bound to the default vector model', async () => {
    const created = await call('/api/core/dataset/create', { json: { name: 'Handbook', intro: 'company handbook' } });
    expect(created.status).toBe(200);
    expect(created.body).toMatchObject({ code: 200, statusText: '', message: '' });
    const id = created.body.data as string;
    const detail = await call(`/api/core/dataset/detail?id=${id}`);
    expect(detail.body.data).toMatchObject({ _id: id, name: 'Handbook', vectorModel: { model: 'local-embed' } });
    const list = await call('/api/core/dataset/list', { json: { searchKey: 'hand' } });
    expect(list.body.data.map((d: any) => d._id)).toContain(id);
    expect((await call(`/api/core/dataset/delete?id=${id}`, { method: 'DELETE' })).status).toBe(200);
    expect((await call(`/api/core/dataset/detail?id=${id}`)).status).toBe(404);
  });

  it('an upload into a dataset deleted after an earlier upload is a 404, and leaves nothing behind', async () => {
    const id = (await call('/api/core/dataset/create', { json: { name: 'Short-lived' } })).body.data as string;
    expect((await call('/api/core/dataset/collection/create/text', { json: { datasetId: id, name: 'a', text: 'First text.' } })).status).toBe(200);
    expect((await call(`/api/core/dataset/delete?id=${id}`, { method: 'DELETE' })).status).toBe(200);
    const late = await call('/api/core/dataset/collection/create/text', { json: { datasetId: id, name: 'b', text: 'Second text.' } });
    expect(late.status).toBe(404);
    expect(late.body.message).toMatch(id);
    const left = await p.services.store.db.selectFrom('collections').select('id').where('dataset_id', '=', id).execute();
    expect(left).toHaveLength(0);
  });

  it('bad input is a 400 naming the field', async () => {
    const noName = await call('/api/core/dataset/create', { json: { intro: 'x' } });
    expect(noName.status).toBe(400);
    expect(noName.body.message).toMatch(/'name'/);
    const badModel = await call('/api/core/dataset/create', { json: { name: 'x', vectorModel: 'text-embedding-3-small' } });
    expect(badModel.status).toBe(400);
    expect(badModel.body.message).toMatch(/vectorModel/);
    const badJson = await fetch(`${p.url}/api/core/dataset/create`, {
      method: 'POST',
      headers: { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' },
      body: '{"name":',
    });
    expect(badJson.status).toBe(400);
  });

  it('a text collection is chunked with headings kept; data can be pushed, listed, updated and deleted', async () => {
    const datasetId = (await call('/api/core/dataset/create', { json: { name: 'Docs' } })).body.data;
    const text = '# Office\n\nThe office opens at 9 am.\n\n## Parking\n\nParking is free for visitors on weekdays.';
    const made = await call('/api/core/dataset/collection/create/text', { json: { datasetId, name: 'office.md', text, chunkSize: 40 } });
    expect(made.status).toBe(200);
    const collectionId = made.body.data.collectionId;
    expect(made.body.data.results.insertLen).toBeGreaterThanOrEqual(2);
    const listed = await call('/api/core/dataset/collection/listV2', { json: { datasetId, offset: 0, pageSize: 10 } });
    expect(listed.body.data.total).toBe(1);
    expect(listed.body.data.list[0]).toMatchObject({ _id: collectionId, name: 'office.md', dataAmount: made.body.data.results.insertLen });
    const data = await call('/api/core/dataset/data/v2/list', { json: { collectionId, offset: 0, pageSize: 10 } });
    expect(data.body.data.list[1].titlePath.join(' > ')).toMatch(/Parking/);

    const pushed = await call('/api/core/dataset/data/pushData', {
      json: { collectionId, data: [{ q: 'Who cleans the kitchen?', a: 'Everyone, by turns.' }] },
    });
    expect(pushed.body.data.insertLen).toBe(1);
    const all = (await call('/api/core/dataset/data/v2/list', { json: { collectionId, searchText: 'kitchen' } })).body.data;
    expect(all.total).toBe(1);
    const dataId = all.list[0]._id;
    expect((await call('/api/core/dataset/data/update', { method: 'PUT', json: { dataId, a: 'The cleaning team.' } })).status).toBe(200);
    const detail = (await call(`/api/core/dataset/data/detail?id=${dataId}`)).body.data;
    expect(detail).toMatchObject({ q: 'Who cleans the kitchen?', a: 'The cleaning team.' });
    expect(detail.indexes[0]).toMatchObject({ defaultIndex: true, text: 'Who cleans the kitchen?\nThe cleaning team.' });
    const tooMany = await call('/api/core/dataset/data/pushData', { json: { collectionId, data: Array.from({ length: 201 }, () => ({ q: 'x' })) } });
    expect(tooMany.status).toBe(400);
    expect(tooMany.body.message).toMatch(/data/);
    expect((await call(`/api/core/dataset/data/delete?id=${dataId}`, { method: 'DELETE' })).status).toBe(200);
    expect((await call(`/api/core/dataset/collection/delete?id=${collectionId}`, { method: 'DELETE' })).status).toBe(200);
    expect((await call('/api/core/dataset/data/v2/list', { json: { collectionId } })).status).toBe(404);
  });

  it("another team's key never reaches this team's datasets", async () => {
    const datasetId = (await call('/api/core/dataset/create', { json: { name: 'Private' } })).body.data;
    const otherTeam = newId();
    await p.services.keys.insertTeam(otherTeam, 'other');
    const otherKey = newApiKey();
    await p.services.keys.insertKey(apiKeyRow(otherKey, { teamId: otherTeam, appId: null, name: 'other', expiresAt: null }));
    expect((await call(`/api/core/dataset/detail?id=${datasetId}`, { key: otherKey })).status).toBe(404);
    expect((await call(`/api/core/dataset/delete?id=${datasetId}`, { method: 'DELETE', key: otherKey })).status).toBe(404);
    expect((await call('/api/core/dataset/list', { json: {}, key: otherKey })).body.data).toEqual([]);
    expect((await call(`/api/core/dataset/detail?id=${datasetId}`)).status).toBe(200);
  });
});
