// A scan uploaded through the API (issue 29): the upload is answered at once,
// its collection shows the OCR's progress a page at a time, then its chunks
// (with their pages and each page's confidence) are searchable. A dataset can
// turn OCR off; deleting a collection stops its OCR; a platform that stops
// mid-scan says so on the collection at its next start. Models are the
// upstream simulator behind a real gateway; the store is PGlite.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROOT_TOKEN, startTestGateway, type TestGateway } from '../../gateway/test/helpers.js';
import { READ_STOPPED } from '../src/datasets/jobs.js';
import { loadPlatformConfig, startPlatform, type RunningPlatform } from '../src/index.js';
import { noScanFont, scannedPagePng, scannedPdf } from './scan-fixtures.js';

const KEY = 'kbchat-test-ocr-key-0123456789ab';

describe.skipIf(Boolean(noScanFont))('scans uploaded', () => {
  let gw: TestGateway;
  let dir: string;
  let p: RunningPlatform;
  const start = () =>
    startPlatform(
      loadPlatformConfig(
        { INITIAL_API_KEY: KEY },
        { host: '127.0.0.1', port: 0, dataDir: dir, configPath: join(dir, 'config.json'), gatewayUrl: gw.url, gatewayToken: ROOT_TOKEN },
      ),
    );
  const call = async (path: string, json?: unknown, method = json === undefined ? 'GET' : 'POST') => {
    const res = await fetch(`${p.url}${path}`, {
      method,
      headers: { authorization: `Bearer ${KEY}`, ...(json === undefined ? {} : { 'content-type': 'application/json' }) },
      body: json === undefined ? undefined : JSON.stringify(json),
    });
    return { status: res.status, body: (await res.json()) as any };
  };
  const upload = async (datasetId: string, data: Buffer, filename: string, chunkSize = 64) => {
    const form = new FormData();
    form.append('file', new Blob([new Uint8Array(data)]), filename);
    form.append('data', JSON.stringify({ datasetId, chunkSize }));
    const res = await fetch(`${p.url}/api/core/dataset/collection/create/localFile`, {
      method: 'POST',
      headers: { authorization: `Bearer ${KEY}` },
      body: form,
    });
    return { status: res.status, body: (await res.json()) as any };
  };
  const training = async (collectionId: string) => (await call(`/api/core/dataset/collection/trainingDetail?collectionId=${collectionId}`)).body.data;
  async function until<T>(what: string, probe: () => Promise<T | undefined>, ms = 60_000): Promise<T> {
    for (const end = Date.now() + ms; ;) {
      const v = await probe();
      if (v !== undefined) return v;
      if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
      await new Promise((r) => setTimeout(r, 100));
    }
  }
  const newDataset = async (name: string) => (await call('/api/core/dataset/create', { name, vectorModel: 'sim-embed-384' })).body.data as string;

  beforeAll(async () => {
    gw = await startTestGateway();
    dir = mkdtempSync(join(tmpdir(), 'kbchat-ocr-'));
    writeFileSync(join(dir, 'config.json'), JSON.stringify({ llmModels: [{ model: 'sim-echo-prompt' }], vectorModels: [{ model: 'sim-embed-384' }] }));
    p = await start();
  }, 60_000);
  afterAll(async () => {
    await p?.close();
    await gw?.close();
  });

  it('answers at once, shows the pages read, then indexes the text with its pages and confidences', async () => {
    const datasetId = await newDataset('manuals');
    expect((await call(`/api/core/dataset/detail?id=${datasetId}`)).body.data.ocr).toBe(true);
    const pdf = await scannedPdf([
      'Chapter one covers the pump housing and its bolts.',
      scannedPagePng(['The inspection interval for the Falcon pump', 'is eighteen months.']),
      scannedPagePng(['Spare seals are kept in cabinet seven.']),
    ]);
    const made = await upload(datasetId, pdf, 'falcon-manual.pdf', 20);
    expect(made.status, JSON.stringify(made.body)).toBe(200);
    expect(made.body.data.results.insertLen).toBe(0);
    const collectionId = made.body.data.collectionId;
    // Progress a page at a time, as the job of kind "ocr" (two of the three pages have no text).
    const seen = new Set<string>();
    await until('the OCR to finish', async () => {
      const t = await training(collectionId);
      if (t.job?.kind === 'ocr') seen.add(`${t.job.done}/${t.job.total}`);
      return !t.job && t.total > 0 && t.done === t.total ? t : undefined;
    });
    expect([...seen].every((s) => /^[0-2]\/2$/.test(s) || s === '0/0')).toBe(true);
    expect([...seen].some((s) => s.endsWith('/2'))).toBe(true);

    const detail = (await call(`/api/core/dataset/collection/detail?id=${collectionId}`)).body.data;
    expect(detail.readError).toBeNull();
    expect(detail.ocr.pages.map((x: any) => x.page)).toEqual([2, 3]);
    for (const page of detail.ocr.pages) expect(page.confidence).toBeGreaterThan(80);
    expect(detail.ocr.confidence).toBeGreaterThan(80);

    const searched = await call('/api/core/dataset/searchTest', { datasetId, text: 'Falcon pump inspection interval', searchMode: 'fullTextRecall' });
    expect(searched.status, JSON.stringify(searched.body)).toBe(200);
    const hit = searched.body.data.list.find((r: any) => r.q.includes('eighteen months'));
    expect(hit?.sourceName).toBe('falcon-manual.pdf');
    expect(hit?.pages[0]).toBe(2);
    const text = searched.body.data.list.find((r: any) => r.q.includes('pump housing'));
    expect(text?.pages).toEqual([1, 1]);
  }, 90_000);

  it('reads an image file as one page', async () => {
    const datasetId = await newDataset('notices');
    const made = await upload(datasetId, scannedPagePng(['Visitors sign in at the north gate.']), 'gate-notice.png');
    expect(made.status, JSON.stringify(made.body)).toBe(200);
    const collectionId = made.body.data.collectionId;
    await until('the image to be indexed', async () => {
      const t = await training(collectionId);
      return t.total > 0 && t.done === t.total ? t : undefined;
    });
    const items = (await call('/api/core/dataset/data/v2/list', { collectionId, offset: 0, pageSize: 10 })).body.data.list;
    expect(items.map((i: any) => i.q)).toEqual(['Visitors sign in at the north gate.']);
  }, 60_000);

  it('refuses scans and images, naming the setting, in a dataset that turned OCR off', async () => {
    const datasetId = await newDataset('no ocr');
    const off = await call('/api/core/dataset/update', { id: datasetId, ocr: false }, 'PUT');
    expect(off.status, JSON.stringify(off.body)).toBe(200);
    expect((await call(`/api/core/dataset/detail?id=${datasetId}`)).body.data.ocr).toBe(false);
    const scan = await upload(datasetId, await scannedPdf([scannedPagePng(['Nothing to see.'])]), 'scan.pdf');
    expect(scan.status).toBe(422);
    expect(scan.body.message).toMatch(/scan\.pdf has no text layer.*OCR is off/);
    const image = await upload(datasetId, scannedPagePng(['Nothing to see.']), 'photo.jpg');
    expect(image.status).toBe(422);
    expect(image.body.message).toMatch(/photo\.jpg is an image.*OCR.*off/);
    // A PDF with text pages keeps them and leaves its scanned pages out.
    const mixed = await upload(datasetId, await scannedPdf(['The ferry leaves at nine.', scannedPagePng(['Not read.'])]), 'mixed.pdf');
    expect(mixed.status).toBe(200);
    expect(mixed.body.data.results.insertLen).toBe(1);
    expect((await call('/api/core/dataset/update', { id: datasetId, ocr: 'no' }, 'PUT')).status).toBe(400);
    expect((await call('/api/core/dataset/update', { id: 'nope', ocr: true }, 'PUT')).status).toBe(404);
  }, 60_000);

  it('stops the OCR of a 500-page scan when its collection is deleted', async () => {
    const datasetId = await newDataset('archive');
    const pdf = await scannedPdf([scannedPagePng(['Ledger page of the old archive.'])], 500);
    const made = await upload(datasetId, pdf, 'archive.pdf');
    expect(made.status, JSON.stringify(made.body)).toBe(200);
    const collectionId = made.body.data.collectionId;
    const job = await until('two pages to be read', async () => {
      const t = await training(collectionId);
      return t.job?.kind === 'ocr' && t.job.done >= 2 ? t.job : undefined;
    });
    expect(job.total).toBe(500);
    const deleted = await call(`/api/core/dataset/collection/delete?id=${collectionId}`, undefined, 'DELETE');
    expect(deleted.status).toBe(200);
    expect((await call(`/api/core/dataset/collection/detail?id=${collectionId}`)).status).toBe(404);
    // The OCR thread is gone: the process (this test's, which runs the platform) goes quiet.
    await new Promise((r) => setTimeout(r, 300));
    const before = process.cpuUsage();
    await new Promise((r) => setTimeout(r, 2000));
    const used = process.cpuUsage(before);
    expect((used.user + used.system) / 1000).toBeLessThan(1000);
  }, 120_000);

  it('says on the collection, at the next start, that the platform stopped while reading it', async () => {
    const datasetId = await newDataset('interrupted');
    const pdf = await scannedPdf([scannedPagePng(['A page that is never finished.'])], 50);
    const made = await upload(datasetId, pdf, 'long-scan.pdf');
    const collectionId = made.body.data.collectionId;
    await until('a page to be read', async () => ((await training(collectionId)).job?.done >= 1 ? true : undefined));
    await p.close();
    p = await start();
    const detail = await until('the collection to say why', async () => {
      const d = (await call(`/api/core/dataset/collection/detail?id=${collectionId}`)).body.data;
      return d.readError ? d : undefined;
    });
    expect(detail.readError).toBe(READ_STOPPED);
    const t = await training(collectionId);
    expect(t).toMatchObject({ job: null, total: 0, lastError: READ_STOPPED });
  }, 120_000);
});
