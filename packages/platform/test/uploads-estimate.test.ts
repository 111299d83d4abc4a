// Before a large file is indexed (issue 34): an upload's estimate counts the
// chunks its import makes with the real reader and chunker, times them at the
// dataset's measured rate and says whether that passes the threshold, writing
// nothing, and says when its speed was measured and on what; an upload whose
// content is refused is discarded, bytes and all, never offered for resuming,
// while one refused for a setting is kept. A finished upload is listed as
// complete (nothing to resume) with its last estimate and settings, so that a
// page reloaded while it asks asks the same again.
import { createHash } from 'node:crypto';
import { mkdtempSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadPlatformConfig, startPlatform, type RunningPlatform } from '../src/index.js';
import { PROBE_WORKER } from '../src/indexing/rate-store.js';
import { saveRate } from '../src/indexing/index.js';
import { apiCaller } from './api-caller.js';

const KEY = 'kbchat-test-estimates-key-0123456789';
const TUS = '/api/core/dataset/collection/upload/tus';
const sha = (b: Buffer) => createHash('sha256').update(b).digest('hex');
const tusMeta = (m: Record<string, string>) =>
  Object.entries(m)
    .map(([k, v]) => `${k} ${Buffer.from(v).toString('base64')}`)
    .join(',');
/** 400 paragraphs of about 45 tokens: 200 chunks of local-embed's 100 tokens. */
const LEDGER = Buffer.from(
  Array.from(
    { length: 400 },
    (_, i) =>
      `Entry ${i + 1}: the warehouse on pier ${i % 9} received ${(i + 3) * 17} crates of copper wire, ${(i + 5) * 11} drums of oil and ${(i + 7) * 13} bales of cotton from the northern supplier, checked by inspector ${i % 13}.`,
  ).join('\n\n'),
);

describe('upload estimates and refused uploads', () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'kbchat-platform-estimates-'));
  let p: RunningPlatform;
  const api = apiCaller(() => p.url, KEY);
  const call = (path: string, init: { method?: string; json?: unknown } = {}) => api(path, init.json, init.method);
  const tus = (path: string, method: string, headers: Record<string, string>, body?: Buffer) =>
    fetch(`${p.url}${path}`, { method, headers: { authorization: `Bearer ${KEY}`, 'tus-resumable': '1.0.0', ...headers }, body });
  /** A tus upload with all its bytes in; its id. */
  const uploaded = async (datasetId: string, file: Buffer, name: string, filetype = 'text/plain') => {
    const made = await tus(TUS, 'POST', {
      'upload-length': String(file.length),
      'upload-metadata': tusMeta({ datasetId, filename: name, filetype, sha256: sha(file) }),
    });
    expect(made.status).toBe(201);
    const location = made.headers.get('location')!;
    expect((await tus(location, 'PATCH', { 'upload-offset': '0', 'content-type': 'application/offset+octet-stream' }, file)).status).toBe(204);
    return location.split('/').pop()!;
  };
  const dataset = async (name: string) => (await call('/api/core/dataset/create', { json: { name } })).body.data as string;
  const unfinished = async (datasetId: string) =>
    (await call(`/api/core/dataset/collection/upload/list?datasetId=${datasetId}`)).body.data as { uploadId: string }[];
  const onDisk = (uploadId: string) => readdirSync(join(dataDir, 'uploads')).filter((f) => f.startsWith(uploadId));

  beforeAll(async () => {
    // No gateway answers here: a probe of the model fails, and the estimate says why.
    p = await startPlatform(loadPlatformConfig({ INITIAL_API_KEY: KEY, GATEWAY_URL: 'http://127.0.0.1:9' }, { host: '127.0.0.1', port: 0, dataDir }));
  }, 60_000);
  afterAll(async () => p?.close());

  it("estimates an upload without importing it: the import's chunk count, the time at the measured rate, large past the threshold", async () => {
    const datasetId = await dataset('Ledger');
    const uploadId = await uploaded(datasetId, LEDGER, 'ledger.txt');

    // Nothing measured, and the model does not answer a probe: the count alone, and large for being over 100 chunks.
    const blind = await call('/api/core/dataset/collection/upload/estimate', { json: { uploadId } });
    expect(blind.status, JSON.stringify(blind.body)).toBe(200);
    const chunks = blind.body.data.chunks as number;
    expect(chunks).toBeGreaterThan(100);
    expect(blind.body.data).toMatchObject({
      trainingType: 'chunk',
      chunksPerSecond: null,
      rateSource: null,
      rateMeasuredAt: null,
      rateAgeSeconds: null,
      rateFromThisFile: false,
      seconds: null,
      large: true,
      confirmAboveSeconds: 600,
    });
    expect(blind.body.data.rateError).toEqual(expect.any(String));

    // A probe an earlier estimate made 3 minutes ago, of another file: used, and said to be that, not this file's.
    const probedAt = Date.now() - 180_000;
    await saveRate(p.services.store.db, {
      model: 'local-embed',
      mode: 'chunk',
      workerId: PROBE_WORKER,
      itemsPerSecond: 4,
      items: 16,
      busyMs: 4000,
      now: probedAt,
    });
    const reused = (await call('/api/core/dataset/collection/upload/estimate', { json: { uploadId } })).body.data;
    expect(reused).toMatchObject({ chunksPerSecond: 4, rateSource: 'probe', rateFromThisFile: false, rateMeasuredAt: new Date(probedAt).toISOString() });
    expect(reused.rateAgeSeconds).toBeGreaterThanOrEqual(180);
    expect(reused.rateAgeSeconds).toBeLessThan(200);

    // A rate the workers measured: the time is the chunks over it, large as it passes 600 s.
    await saveRate(p.services.store.db, { model: 'local-embed', mode: 'chunk', workerId: 'worker-a', itemsPerSecond: 0.2, items: 4, busyMs: 20_000 });
    const slow = (await call('/api/core/dataset/collection/upload/estimate', { json: { uploadId } })).body.data;
    expect(slow).toMatchObject({
      chunks,
      chunksPerSecond: 0.2,
      rateSource: 'measured',
      rateFromThisFile: false,
      rateError: null,
      seconds: Math.ceil(chunks / 0.2),
      large: true,
    });
    expect(slow.rateAgeSeconds).toBeLessThan(20);
    expect(slow.secondsWithQueue).toBe(Math.ceil((chunks + slow.queuedAhead) / 0.2));
    await saveRate(p.services.store.db, { model: 'local-embed', mode: 'chunk', workerId: 'worker-a', itemsPerSecond: 1000, items: 10_000, busyMs: 10_000 });
    const fast = (await call('/api/core/dataset/collection/upload/estimate', { json: { uploadId } })).body.data;
    expect(fast).toMatchObject({ chunks, seconds: Math.ceil(chunks / 1000), large: false });
    // Other chunking settings, another count.
    const smaller = (await call('/api/core/dataset/collection/upload/estimate', { json: { uploadId, chunkSize: 40 } })).body.data;
    expect(smaller.chunks).toBeGreaterThan(chunks);

    // Nothing was written; the upload is still there to import, and the import makes exactly that many chunks.
    expect((await call('/api/core/dataset/collection/listV2', { json: { datasetId } })).body.data.total).toBe(0);
    const done = await call('/api/core/dataset/collection/create/upload', { json: { uploadId } });
    expect(done.status, JSON.stringify(done.body)).toBe(200);
    expect(done.body.data.results.insertLen).toBe(chunks);
    // Imported: an estimate of it is a conflict, naming the collection.
    const after = await call('/api/core/dataset/collection/upload/estimate', { json: { uploadId } });
    expect(after.status).toBe(409);
    expect(after.body.message).toContain(done.body.data.collectionId);
  }, 60_000);

  it('discards an upload whose content is refused (by the import or the estimate): not listed for resuming, its bytes gone from <data-dir>/uploads', async () => {
    const datasetId = await dataset('Refused');
    const blank = await uploaded(datasetId, Buffer.from('   \n\n \t \n'), 'blank.txt');
    expect(onDisk(blank).length).toBeGreaterThan(0);
    const refused = await call('/api/core/dataset/collection/create/upload', { json: { uploadId: blank } });
    expect(refused.status).toBe(422);
    expect(refused.body).toMatchObject({ statusText: 'empty_document', message: 'blank.txt has no text to import. The upload was discarded.' });
    expect(await unfinished(datasetId)).toEqual([]);
    expect(onDisk(blank)).toEqual([]);

    const broken = await uploaded(datasetId, Buffer.from('these bytes are no PDF at all'), 'report.pdf', 'application/pdf');
    const estimate = await call('/api/core/dataset/collection/upload/estimate', { json: { uploadId: broken } });
    expect(estimate.status).toBe(422);
    expect(estimate.body.statusText).toBe('corrupt_file');
    expect(estimate.body.message).toMatch(/The upload was discarded\.$/);
    expect(await unfinished(datasetId)).toEqual([]);
    expect(onDisk(broken)).toEqual([]);
    // Discarded means gone: importing it after is a 404, not a second refusal.
    expect((await call('/api/core/dataset/collection/create/upload', { json: { uploadId: broken } })).status).toBe(404);

    // Refused for a setting, not for its content: kept, and imported with another setting.
    const note = await uploaded(datasetId, Buffer.from('The ferry leaves the north pier at 7:15.'), 'ferry.txt');
    const tooBig = await call('/api/core/dataset/collection/create/upload', { json: { uploadId: note, chunkSize: 30_000 } });
    expect(tooBig.status).toBe(400);
    expect(tooBig.body.message).toMatch(/^Invalid 'chunkSize'/);
    expect((await unfinished(datasetId)).map((u) => u.uploadId)).toEqual([note]);
    expect((await call('/api/core/dataset/collection/create/upload', { json: { uploadId: note } })).status).toBe(200);
  }, 60_000);

  it('lists a finished upload as complete, with the estimate it was asked about and its settings; only a partial one has anything to resume', async () => {
    const datasetId = await dataset('Waiting');
    // Half of a file's bytes: partial, to resume.
    const made = await tus(TUS, 'POST', {
      'upload-length': String(LEDGER.length),
      'upload-metadata': tusMeta({ datasetId, filename: 'half.txt', filetype: 'text/plain', sha256: sha(LEDGER) }),
    });
    const half = made.headers.get('location')!.split('/').pop()!;
    expect(
      (await tus(made.headers.get('location')!, 'PATCH', { 'upload-offset': '0', 'content-type': 'application/offset+octet-stream' }, LEDGER.subarray(0, 1000)))
        .status,
    ).toBe(204);
    // Every byte in, not estimated yet (a reload between the last byte and the estimate).
    const other = Buffer.from(`${LEDGER.toString()}\n\nOne more entry at the end.`);
    const full = await uploaded(datasetId, other, 'full.txt');
    const listed = async () => new Map(((await unfinished(datasetId)) as any[]).map((u) => [u.uploadId, u]));
    expect((await listed()).get(half)).toMatchObject({ complete: false, offset: 1000, size: LEDGER.length, estimate: null, settings: null });
    expect((await listed()).get(full)).toMatchObject({ complete: true, offset: other.length, size: other.length, estimate: null, settings: null });

    // Estimated (the page asks): kept with the upload, settings and all, the rate's age as of the listing.
    const settings = { trainingType: 'chunk', chunkSize: 80, chunkSplitter: '\n\n', qaPrompt: 'unused for chunk imports' };
    const asked = (await call('/api/core/dataset/collection/upload/estimate', { json: { uploadId: full, ...settings } })).body.data;
    expect(asked.chunks).toBeGreaterThan(100);
    const kept = (await listed()).get(full);
    expect(kept).toMatchObject({ complete: true, settings, estimate: { ...asked, rateAgeSeconds: expect.any(Number) } });
    expect(kept.estimate.rateAgeSeconds).toBeGreaterThanOrEqual(asked.rateAgeSeconds);
    // The same content found by check: complete, so a client imports it rather than sending it again.
    const checked = (await call('/api/core/dataset/collection/upload/check', { json: { datasetId, sha256: sha(other), size: other.length } })).body.data;
    expect(checked.unfinished).toMatchObject({ uploadId: full, complete: true, estimate: { chunks: asked.chunks } });

    // Imported with the kept settings: the count it was asked about; then listed no more.
    const done = await call('/api/core/dataset/collection/create/upload', { json: { uploadId: full, ...kept.settings } });
    expect(done.status, JSON.stringify(done.body)).toBe(200);
    expect(done.body.data.results.insertLen).toBe(asked.chunks);
    expect([...(await listed()).keys()]).toEqual([half]);
  }, 60_000);
});
