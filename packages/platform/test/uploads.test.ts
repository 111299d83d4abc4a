// Uploads over real HTTP on the embedded store: a tus upload cut in the middle
// (and the platform restarted) resumes from the bytes the server has and makes
// one collection with the whole text; the same content twice, or a retry of a
// finished upload, answers the same collection; a second copy only when asked;
// limits and types refused naming the field; another team sees nothing.
import { createHash } from 'node:crypto';
import { mkdtempSync, readdirSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadPlatformConfig, startPlatform, type RunningPlatform } from '../src/index.js';
import { apiKeyRow, newApiKey, newId } from '../src/keys/auth.js';
import { UPLOAD_EXPIRY_MS } from '../src/uploads/service.js';

const KEY = 'kbchat-test-uploads-key-0123456789';
const TUS = '/api/core/dataset/collection/upload/tus';
const LINES = Array.from({ length: 1500 }, (_, i) => `Line ${i + 1}: shelf ${i + 1} of the depot holds ${(i + 1) * 7} crates of tin.`);
const BIG = Buffer.from(`# Depot inventory\n\n${LINES.join('\n\n')}\n`);
const sha = (b: Buffer) => createHash('sha256').update(b).digest('hex');
const tusMeta = (m: Record<string, string>) =>
  Object.entries(m)
    .map(([k, v]) => `${k} ${Buffer.from(v).toString('base64')}`)
    .join(',');

describe('uploads', () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'kbchat-platform-uploads-'));
  let p: RunningPlatform;
  const start = () => startPlatform(loadPlatformConfig({ INITIAL_API_KEY: KEY }, { host: '127.0.0.1', port: 0, dataDir }));
  const call = async (path: string, init: { method?: string; json?: unknown; key?: string } = {}) => {
    const res = await fetch(`${p.url}${path}`, {
      method: init.method ?? (init.json === undefined ? 'GET' : 'POST'),
      headers: { authorization: `Bearer ${init.key ?? KEY}`, ...(init.json === undefined ? {} : { 'content-type': 'application/json' }) },
      body: init.json === undefined ? undefined : JSON.stringify(init.json),
    });
    return { status: res.status, body: (await res.json()) as any };
  };
  const tus = (path: string, method: string, headers: Record<string, string>, body?: Buffer, key = KEY) =>
    fetch(`${p.url}${path}`, { method, headers: { authorization: `Bearer ${key}`, 'tus-resumable': '1.0.0', ...headers }, body });
  const create = (datasetId: string, file: Buffer, name: string, extra: Record<string, string> = {}, key = KEY) =>
    tus(
      TUS,
      'POST',
      {
        'upload-length': String(file.length),
        'upload-metadata': tusMeta({ datasetId, filename: name, filetype: 'text/markdown', sha256: sha(file), ...extra }),
      },
      undefined,
      key,
    );
  const offsetOf = async (location: string, key = KEY) => Number((await tus(location, 'HEAD', {}, undefined, key)).headers.get('upload-offset'));
  const patch = (location: string, offset: number, bytes: Buffer, key = KEY) =>
    tus(location, 'PATCH', { 'upload-offset': String(offset), 'content-type': 'application/offset+octet-stream' }, bytes, key);
  const multipart = async (datasetId: string, file: Buffer, name: string, data: Record<string, unknown> = {}) => {
    const form = new FormData();
    form.append('file', new Blob([file], { type: 'text/markdown' }), name);
    form.append('data', JSON.stringify({ datasetId, ...data }));
    const res = await fetch(`${p.url}/api/core/dataset/collection/create/localFile`, {
      method: 'POST',
      headers: { authorization: `Bearer ${KEY}` },
      body: form,
    });
    return { status: res.status, body: (await res.json()) as any };
  };
  const collections = async (datasetId: string) =>
    (await call('/api/core/dataset/collection/listV2', { json: { datasetId } })).body.data.list as { _id: string; name: string }[];
  const dataset = async (name: string) => (await call('/api/core/dataset/create', { json: { name } })).body.data as string;

  beforeAll(async () => {
    p = await start();
  }, 60_000);
  afterAll(async () => p?.close());

  it('resumes an upload cut in the middle, across a restart, into one collection with the whole text', async () => {
    const datasetId = await dataset('Depot');
    const made = await create(datasetId, BIG, 'depot.md');
    expect(made.status).toBe(201);
    const location = made.headers.get('location')!;
    expect(location).toMatch(new RegExp(`^${TUS}/[0-9a-f]+$`));
    const uploadId = location.split('/').pop()!;

    // The connection dies after about half the bytes.
    const half = Math.floor(BIG.length / 2);
    await new Promise<void>((resolve) => {
      const url = new URL(`${p.url}${location}`);
      const req = request(url, {
        method: 'PATCH',
        headers: {
          authorization: `Bearer ${KEY}`,
          'tus-resumable': '1.0.0',
          'upload-offset': '0',
          'content-type': 'application/offset+octet-stream',
          'content-length': String(BIG.length),
        },
      });
      req.on('error', () => resolve());
      req.write(BIG.subarray(0, half), () => setTimeout(() => (req.destroy(), resolve()), 300));
    });
    let offset = 0;
    await expect.poll(async () => (offset = await offsetOf(location)), { timeout: 5000 }).toBeGreaterThan(0);
    expect(offset).toBeLessThanOrEqual(half);
    // Not all there yet: importing it is refused, naming how far it got.
    const early = await call('/api/core/dataset/collection/create/upload', { json: { uploadId } });
    expect(early.status).toBe(409);
    expect(early.body.message).toContain(`has ${offset} of its ${BIG.length} bytes`);

    // The platform restarts; the upload is listed with what it has, and found by its content.
    await p.close();
    p = await start();
    expect(await offsetOf(location)).toBe(offset);
    const listed = await call(`/api/core/dataset/collection/upload/list?datasetId=${datasetId}`);
    expect(listed.body.data).toEqual([expect.objectContaining({ uploadId, fileName: 'depot.md', size: BIG.length, offset, sha256: sha(BIG) })]);
    const checked = await call('/api/core/dataset/collection/upload/check', { json: { datasetId, sha256: sha(BIG), size: BIG.length } });
    expect(checked.body.data).toMatchObject({ imported: null, unfinished: { uploadId, offset } });

    // The rest from where the server is: one collection with every line.
    const rest = await patch(location, offset, BIG.subarray(offset));
    expect(rest.status).toBe(204);
    expect(Number(rest.headers.get('upload-offset'))).toBe(BIG.length);
    const done = await call('/api/core/dataset/collection/create/upload', { json: { uploadId, chunkSize: 128 } });
    expect(done.status, JSON.stringify(done.body)).toBe(200);
    expect(done.body.data).toMatchObject({ alreadyImported: false, results: { insertLen: expect.any(Number) } });
    const list = await collections(datasetId);
    expect(list).toHaveLength(1);
    expect(list[0]).toMatchObject({ _id: done.body.data.collectionId, name: 'depot.md' });
    const data = (await call('/api/core/dataset/data/v2/list', { json: { collectionId: done.body.data.collectionId, pageSize: 500 } })).body.data;
    expect(data.total).toBe(done.body.data.results.insertLen);
    const text = data.list.map((d: { q: string }) => d.q).join('\n');
    for (const line of LINES) expect(text).toContain(line);
    // Imported: the bytes are gone from disk, and it is no longer listed as unfinished.
    expect(readdirSync(join(dataDir, 'uploads')).filter((f) => f.startsWith(uploadId))).toEqual([]);
    expect((await call(`/api/core/dataset/collection/upload/list?datasetId=${datasetId}`)).body.data).toEqual([]);
  }, 60_000);

  it('imports the same content once: a second file, a retry of a finished upload and a repeated multipart request answer the first collection', async () => {
    const datasetId = await dataset('Once');
    const file = Buffer.from('# Ferry\n\nThe ferry leaves the north pier at 7:15 every morning.\n');
    const first = await multipart(datasetId, file, 'ferry.md');
    expect(first.status, JSON.stringify(first.body)).toBe(200);
    expect(first.body.data).toMatchObject({ alreadyImported: false, results: { insertLen: 1 } });
    const collectionId = first.body.data.collectionId;

    // The same bytes again under another name, without a hash (a FastGPT-shaped client): the first collection.
    const again = await multipart(datasetId, file, 'ferry (copy).md');
    expect(again.body.data).toEqual({ collectionId, results: { insertLen: 0 }, alreadyImported: true });
    // Over tus: the check says so before any byte is sent, and an upload of it anyway imports nothing new.
    expect(
      (await call('/api/core/dataset/collection/upload/check', { json: { datasetId, sha256: sha(file), size: file.length } })).body.data.imported,
    ).toMatchObject({ collectionId, name: 'ferry.md' });
    const made = await create(datasetId, file, 'ferry.md');
    const location = made.headers.get('location')!;
    expect((await patch(location, 0, file)).status).toBe(204);
    const uploadId = location.split('/').pop()!;
    const viaTus = await call('/api/core/dataset/collection/create/upload', { json: { uploadId } });
    expect(viaTus.body.data).toMatchObject({ collectionId, alreadyImported: true });
    expect(await collections(datasetId)).toHaveLength(1);

    // A retry of a finished upload (its answer was lost): the same collection again, nothing new.
    const other = Buffer.from('# Tides\n\nHigh tide at the harbour is at 14:02 today.\n');
    const loc2 = (await create(datasetId, other, 'tides.md')).headers.get('location')!;
    await patch(loc2, 0, other);
    const id2 = loc2.split('/').pop()!;
    const [a, b] = await Promise.all([1, 2].map(() => call('/api/core/dataset/collection/create/upload', { json: { uploadId: id2 } })));
    expect(a!.body.data.collectionId).toBe(b!.body.data.collectionId);
    expect([a!.body.data.alreadyImported, b!.body.data.alreadyImported].sort()).toEqual([false, true]);
    const retry = await call('/api/core/dataset/collection/create/upload', { json: { uploadId: id2 } });
    expect(retry.body.data).toMatchObject({ collectionId: a!.body.data.collectionId, alreadyImported: true });
    expect(await collections(datasetId)).toHaveLength(2);

    // A second copy when asked for, once per idempotency key however often it is sent.
    const key = newId();
    const copy = await multipart(datasetId, file, 'ferry.md', { allowDuplicate: true, idempotencyKey: key, chunkSize: 64 });
    expect(copy.body.data.alreadyImported).toBe(false);
    expect(copy.body.data.collectionId).not.toBe(collectionId);
    const copyRetry = await multipart(datasetId, file, 'ferry.md', { allowDuplicate: true, idempotencyKey: key, chunkSize: 64 });
    expect(copyRetry.body.data).toMatchObject({ collectionId: copy.body.data.collectionId, alreadyImported: true });
    expect(await collections(datasetId)).toHaveLength(3);

    // A deleted collection's content may come in again.
    await call(`/api/core/dataset/collection/delete?id=${a!.body.data.collectionId}`, { method: 'DELETE' });
    const back = await multipart(datasetId, other, 'tides.md');
    expect(back.body.data.alreadyImported).toBe(false);
  }, 60_000);

  it('refuses what is too large, of a type no reader takes, or not what it claims, naming the field', async () => {
    const datasetId = await dataset('Limits');
    const tooBig = await tus(TUS, 'POST', { 'upload-length': String(50 * 1024 * 1024 + 1), 'upload-metadata': tusMeta({ datasetId, filename: 'huge.md' }) });
    expect(tooBig.status).toBe(413);
    expect(((await tooBig.json()) as any).message).toMatch(/^Invalid 'Upload-Length': 52428801 bytes is more than the 50 MiB/);
    const sheet = await tus(TUS, 'POST', { 'upload-length': '10', 'upload-metadata': tusMeta({ datasetId, filename: 'sheet.xls' }) });
    expect(sheet.status).toBe(400);
    expect(((await sheet.json()) as any).message).toMatch(/^Invalid 'filename': sheet\.xls: \.xls files are not supported/);
    const noLength = await tus(TUS, 'POST', { 'upload-defer-length': '1', 'upload-metadata': tusMeta({ datasetId, filename: 'a.md' }) });
    expect(((await noLength.json()) as any).message).toMatch(/^Invalid 'Upload-Length'/);
    const badHash = await tus(TUS, 'POST', { 'upload-length': '10', 'upload-metadata': tusMeta({ datasetId, filename: 'a.md', sha256: 'abc' }) });
    expect(((await badHash.json()) as any).message).toMatch(/^Invalid 'sha256'/);
    const noDataset = await tus(TUS, 'POST', { 'upload-length': '10', 'upload-metadata': tusMeta({ filename: 'a.md' }) });
    expect(((await noDataset.json()) as any).message).toMatch(/^Invalid 'datasetId'/);
    expect((await call('/api/core/dataset/collection/upload/list?datasetId=' + datasetId)).body.data).toEqual([]);

    // Bytes that are not what the client hashed: refused by name, and the upload discarded.
    const file = Buffer.from('The lock opens at dawn.');
    const loc = (await create(datasetId, file, 'lock.md', { sha256: sha(Buffer.from('something else')) })).headers.get('location')!;
    await patch(loc, 0, file);
    const wrong = await call('/api/core/dataset/collection/create/upload', { json: { uploadId: loc.split('/').pop() } });
    expect(wrong.status).toBe(400);
    expect(wrong.body.message).toMatch(/^Invalid 'sha256': the 23 bytes received hash to [0-9a-f]{64}, not the/);
    expect((await tus(loc, 'HEAD', {})).status).toBe(404);
    const declared = await multipart(datasetId, file, 'lock.md', { sha256: sha(Buffer.from('other')) });
    expect(declared.status).toBe(400);
    expect(declared.body.message).toMatch(/^Invalid 'sha256'/);
    // More bytes than declared are refused by the tus server, before they reach the disk.
    const small = await create(datasetId, file, 'small.md');
    const over = await patch(small.headers.get('location')!, 0, Buffer.concat([file, file]));
    expect(over.status).toBe(413);
  }, 30_000);

  it('keeps another team out: it cannot resume, read, import, list or discard an upload', async () => {
    const datasetId = await dataset('Private uploads');
    const file = Buffer.from('# Vault\n\nThe vault code changes every Monday.\n');
    const loc = (await create(datasetId, file, 'vault.md')).headers.get('location')!;
    await patch(loc, 0, file.subarray(0, 10));
    const uploadId = loc.split('/').pop()!;
    const otherTeam = newId();
    await p.services.keys.insertTeam(otherTeam, 'other');
    const other = newApiKey();
    await p.services.keys.insertKey(apiKeyRow(other, { teamId: otherTeam, appId: null, name: 'other', expiresAt: null }));
    expect((await tus(loc, 'HEAD', {}, undefined, other)).status).toBe(404);
    expect((await patch(loc, 10, file.subarray(10), other)).status).toBe(404);
    expect((await tus(loc, 'DELETE', {}, undefined, other)).status).toBe(404);
    expect((await call('/api/core/dataset/collection/create/upload', { json: { uploadId }, key: other })).status).toBe(404);
    expect((await call(`/api/core/dataset/collection/upload/delete?id=${uploadId}`, { method: 'DELETE', key: other })).status).toBe(404);
    expect((await call(`/api/core/dataset/collection/upload/list?datasetId=${datasetId}`, { key: other })).status).toBe(404);
    expect((await call('/api/core/dataset/collection/upload/check', { json: { datasetId, sha256: sha(file), size: file.length }, key: other })).status).toBe(
      404,
    );
    // Nor start one in this team's dataset.
    expect((await create(datasetId, file, 'vault.md', {}, other)).status).toBe(404);
    // Still the owner's, untouched.
    expect(await offsetOf(loc)).toBe(10);
  });

  it('removes unfinished uploads and their bytes once they expire', async () => {
    const datasetId = await dataset('Expiry');
    const file = Buffer.from('# Kiln\n\nThe kiln fires at 1260 degrees.\n');
    const loc = (await create(datasetId, file, 'kiln.md')).headers.get('location')!;
    await patch(loc, 0, file.subarray(0, 5));
    const uploadId = loc.split('/').pop()!;
    expect(readdirSync(join(dataDir, 'uploads'))).toContain(uploadId);
    expect(await p.services.uploads.service.sweep(Date.now() + 1000)).toBe(0);
    expect(await p.services.uploads.service.sweep(Date.now() + UPLOAD_EXPIRY_MS + 1000)).toBeGreaterThanOrEqual(1);
    expect(readdirSync(join(dataDir, 'uploads'))).not.toContain(uploadId);
    expect((await tus(loc, 'HEAD', {})).status).toBe(404);
    expect((await call(`/api/core/dataset/collection/upload/list?datasetId=${datasetId}`)).body.data).toEqual([]);
  });
});
