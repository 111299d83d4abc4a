// Collections from uploaded files (multipart, as FastGPT's clients send them)
// and from links (loopback refused unless the operator allows it).
import { createServer, type Server } from 'node:http';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import ExcelJS from 'exceljs';
import PptxGenJS from 'pptxgenjs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadPlatformConfig, startPlatform, type RunningPlatform } from '../src/index.js';

const KEY = 'kbchat-test-import-key-0123456789';

async function platform(linkAllowPrivate: boolean): Promise<RunningPlatform> {
  const dataDir = mkdtempSync(join(tmpdir(), 'kbchat-platform-import-'));
  return startPlatform(loadPlatformConfig({ INITIAL_API_KEY: KEY }, { host: '127.0.0.1', port: 0, dataDir, databaseUrl: 'pglite:memory', linkAllowPrivate }));
}

describe('collections from files and links', () => {
  let strict: RunningPlatform;
  let open: RunningPlatform;
  let site: Server;
  let siteUrl = '';

  beforeAll(async () => {
    [strict, open] = await Promise.all([platform(false), platform(true)]);
    site = createServer((req, res) => {
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
      res.end(
        '<html><head><title>Opening hours</title></head><body><h1>Hours</h1><p>The library opens at 8 am.</p><table><tr><th>Day</th><th>Open</th></tr><tr><td>Mon</td><td>8-18</td></tr></table></body></html>',
      );
    });
    await new Promise<void>((r) => site.listen(0, '127.0.0.1', r));
    siteUrl = `http://127.0.0.1:${(site.address() as { port: number }).port}/hours`;
  }, 60_000);
  afterAll(async () => {
    await Promise.all([strict?.close(), open?.close()]);
    site?.close();
  });

  const post = async (p: RunningPlatform, path: string, body: unknown) => {
    const res = await fetch(`${p.url}${path}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    return { status: res.status, body: (await res.json()) as any };
  };
  /** A file posted to create/localFile as multipart, with its `data` settings (no file when `file` is undefined). */
  const upload = async (file: { blob: Blob; name: string } | undefined, data: object) => {
    const form = new FormData();
    if (file) form.append('file', file.blob, file.name);
    form.append('data', JSON.stringify(data));
    const res = await fetch(`${strict.url}/api/core/dataset/collection/create/localFile`, {
      method: 'POST',
      headers: { authorization: `Bearer ${KEY}` },
      body: form,
    });
    return { status: res.status, body: (await res.json()) as any };
  };

  it('uploads a markdown file and keeps its headings in the chunks', async () => {
    const datasetId = (await post(strict, '/api/core/dataset/create', { name: 'files' })).body.data;
    const { status, body } = await upload(
      { blob: new Blob(['# Guide\n\n## Returns\n\nBooks go back within 21 days.\n'], { type: 'text/markdown' }), name: 'guide.md' },
      { datasetId, trainingType: 'chunk', chunkSize: 64 },
    );
    expect(status, JSON.stringify(body)).toBe(200);
    const collectionId = body.data.collectionId;
    const detail = (await (
      await fetch(`${strict.url}/api/core/dataset/collection/detail?id=${collectionId}`, { headers: { authorization: `Bearer ${KEY}` } })
    ).json()) as any;
    expect(detail.data).toMatchObject({ name: 'guide.md', type: 'file', fileName: 'guide.md' });
    const data = await post(strict, '/api/core/dataset/data/v2/list', { collectionId });
    expect(data.body.data.list.some((d: any) => d.titlePath.join('/').includes('Returns') && /21 days/.test(d.q))).toBe(true);
  });

  it('uploads a workbook and a presentation: rows and slides in chunks that name their sheet and slide', async () => {
    const datasetId = (await post(strict, '/api/core/dataset/create', { name: 'office files' })).body.data;
    const wb = new ExcelJS.Workbook();
    const sheet = wb.addWorksheet('Revenue');
    sheet.addRow(['Region', 'Q3 revenue']);
    sheet.addRow(['North', '4.2 M']);
    const pptx = new PptxGenJS();
    pptx.addSlide().addText('Ferries leave every hour.', { x: 0.5, y: 0.5, w: 9, h: 1 });
    const files: [string, Buffer][] = [
      ['figures.xlsx', Buffer.from(await wb.xlsx.writeBuffer())],
      ['ferries.pptx', (await pptx.write({ outputType: 'nodebuffer' })) as Buffer],
    ];
    const chunks: { titlePath: string[]; q: string }[] = [];
    for (const [name, bytes] of files) {
      const { status, body } = await upload({ blob: new Blob([new Uint8Array(bytes)]), name }, { datasetId, trainingType: 'chunk' });
      expect(status, JSON.stringify(body)).toBe(200);
      chunks.push(...(await post(strict, '/api/core/dataset/data/v2/list', { collectionId: body.data.collectionId })).body.data.list);
    }
    expect(chunks.map((c) => [c.titlePath, c.q])).toEqual([
      [['# Sheet: Revenue'], '# Sheet: Revenue\nRegion: North\nQ3 revenue: 4.2 M'],
      [['# Slide 1'], '# Slide 1\nFerries leave every hour.'],
    ]);
  });

  it('stores the chunks of a hard-wrapped file unwrapped', async () => {
    const datasetId = (await post(strict, '/api/core/dataset/create', { name: 'wrapped' })).body.data;
    const md =
      '# Keys\n\n- **Upstream keys** are sealed with AES-256-GCM under `GATEWAY_SECRET_KEY` (or a\r\n  random key kept in the data dir); passwords with scrypt.\r\n';
    const { status, body } = await upload({ blob: new Blob([md], { type: 'text/markdown' }), name: 'keys.md' }, { datasetId, trainingType: 'chunk' });
    expect(status, JSON.stringify(body)).toBe(200);
    const data = await post(strict, '/api/core/dataset/data/v2/list', { collectionId: body.data.collectionId });
    expect(data.body.data.list.map((d: any) => d.q)).toEqual([
      '# Keys\n- **Upstream keys** are sealed with AES-256-GCM under `GATEWAY_SECRET_KEY` (or a random key kept in the data dir); passwords with scrypt.',
    ]);
  });

  it('refuses an unknown file type with a 400 naming it, and a missing file', async () => {
    const datasetId = (await post(strict, '/api/core/dataset/create', { name: 'files2' })).body.data;
    const refused = await upload({ blob: new Blob([new Uint8Array([0xd0, 0xcf, 0x11, 0xe0, 1, 2, 3])]), name: 'sheet.xls' }, { datasetId });
    expect(refused.status).toBe(400);
    expect(refused.body.message).toMatch(/\.xls files are not supported/);
    const none = await upload(undefined, { datasetId });
    expect(none.status).toBe(400);
    expect(none.body.message).toMatch(/'file'/);
  });

  it('refuses a loopback link by default, and imports it where the operator allows private addresses', async () => {
    const strictSet = (await post(strict, '/api/core/dataset/create', { name: 'links' })).body.data;
    const refused = await post(strict, '/api/core/dataset/collection/create/link', { datasetId: strictSet, link: siteUrl });
    expect(refused.status).toBe(400);
    expect(refused.body.message).toMatch(/127\.0\.0\.1|loopback|private/i);

    const openSet = (await post(open, '/api/core/dataset/create', { name: 'links' })).body.data;
    const made = await post(open, '/api/core/dataset/collection/create/link', { datasetId: openSet, link: siteUrl });
    expect(made.status, JSON.stringify(made.body)).toBe(200);
    const list = await post(open, '/api/core/dataset/collection/listV2', { datasetId: openSet });
    expect(list.body.data.list[0]).toMatchObject({ name: 'Opening hours', type: 'link', rawLink: siteUrl });
    const data = await post(open, '/api/core/dataset/data/v2/list', { collectionId: made.body.data.collectionId });
    expect(data.body.data.list.map((d: any) => d.q).join('\n')).toMatch(/opens at 8 am/);
  });
});
