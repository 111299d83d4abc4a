// Citations say where: a PDF's chunks know the pages they come from (found in
// the pages' own texts after chunking the joined text), a spreadsheet's the
// rows they hold; the search test's results and a chat's quotes carry them,
// and chunks of other documents carry none. The PDF is made by pdfkit; models are the upstream simulator behind a
// real gateway.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import ExcelJS from 'exceljs';
import PDFDocument from 'pdfkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROOT_TOKEN, startTestGateway, type TestGateway } from '../../gateway/test/helpers.js';
import { chunkBatches } from '../src/ingest/chunk-stream.js';
import { loadPlatformConfig, startPlatform, type RunningPlatform } from '../src/index.js';

const KEY = 'kbchat-test-pages-key-0123456789';

/** A three-page PDF: a paragraph on each page. */
async function harbourPdf(): Promise<Buffer> {
  const doc = new PDFDocument({ size: 'A6', margins: { top: 36, bottom: 36, left: 36, right: 36 } });
  const parts: Buffer[] = [];
  doc.on('data', (b: Buffer) => parts.push(b));
  const ended = new Promise((done) => doc.on('end', done));
  doc.font('Helvetica').fontSize(10);
  doc.text('The harbour office opens at half past seven on weekdays.');
  doc.addPage().text('The tide table for the north pier is posted beside the fuel pump every Monday morning.');
  doc.addPage().text('Berth B7 is kept for the lifeboat and is never let to visitors.');
  doc.end();
  await ended;
  return Buffer.concat(parts);
}

async function chunksOf(data: Buffer, filename: string) {
  const out = [];
  for await (const batch of chunkBatches({ file: { data, filename } }, { chunkSize: 24, chunkSplitter: undefined }, 100)) out.push(...batch);
  return out;
}

describe('the pages a chunk comes from', () => {
  it("gives each chunk of a PDF its first and last page, and none to other documents' chunks", async () => {
    const chunks = await chunksOf(await harbourPdf(), 'harbour.pdf');
    const pagesOf = (words: string) => chunks.find((c) => c.text.includes(words))?.pages;
    expect(pagesOf('half past seven')).toEqual([1, 1]);
    expect(pagesOf('tide table')).toEqual([2, 2]);
    expect(pagesOf('lifeboat')).toEqual([3, 3]);
    expect(chunks.every((c) => c.pages && c.pages[0] <= c.pages[1])).toBe(true);
    const text = await chunksOf(Buffer.from('# Notes\n\nThe harbour office opens at half past seven.'), 'notes.md');
    expect(text.map((c) => c.pages)).toEqual([undefined]);
  });

  describe('through the API', () => {
    let gw: TestGateway;
    let p: RunningPlatform;
    const call = async (path: string, json?: unknown, key = KEY) => {
      const res = await fetch(`${p.url}${path}`, {
        method: json === undefined ? 'GET' : 'POST',
        headers: { authorization: `Bearer ${key}`, ...(json === undefined ? {} : { 'content-type': 'application/json' }) },
        body: json === undefined ? undefined : JSON.stringify(json),
      });
      return { status: res.status, body: (await res.json()) as any };
    };

    beforeAll(async () => {
      gw = await startTestGateway();
      const dir = mkdtempSync(join(tmpdir(), 'kbchat-pages-'));
      const configPath = join(dir, 'config.json');
      writeFileSync(configPath, JSON.stringify({ llmModels: [{ model: 'sim-echo-prompt' }], vectorModels: [{ model: 'sim-embed-384' }] }));
      p = await startPlatform(
        loadPlatformConfig(
          { INITIAL_API_KEY: KEY },
          { host: '127.0.0.1', port: 0, dataDir: dir, databaseUrl: 'pglite:memory', configPath, gatewayUrl: gw.url, gatewayToken: ROOT_TOKEN },
        ),
      );
    }, 60_000);
    afterAll(async () => {
      await p?.close();
      await gw?.close();
    });

    it('shows a spreadsheet’s rows in the search test', async () => {
      const datasetId = (await call('/api/core/dataset/create', { name: 'ferries', vectorModel: 'sim-embed-384' })).body.data;
      const wb = new ExcelJS.Workbook();
      const sheet = wb.addWorksheet('Timetable');
      sheet.addRow(['Route', 'Departs', 'Adult fare']);
      for (const [route, departs, fare] of [
        ['Holmsund', '07:40', '4.50'],
        ['Norrby', '09:15', '6.00'],
        ['Lillö', '11:30', '3.20'],
      ])
        sheet.addRow([route, departs, fare]);
      for (let i = 0; i < 12; i++) sheet.addRow([`Skerry ${i}`, `1${i % 10}:05`, `${i}.10`]);
      const form = new FormData();
      form.append('file', new Blob([new Uint8Array(await wb.xlsx.writeBuffer())]), 'ferries.xlsx');
      form.append('data', JSON.stringify({ datasetId }));
      const made = await fetch(`${p.url}/api/core/dataset/collection/create/localFile`, {
        method: 'POST',
        headers: { authorization: `Bearer ${KEY}` },
        body: form,
      });
      expect(made.status).toBe(200);
      for (const until = Date.now() + 30_000; ;) {
        const d = (await call(`/api/core/dataset/trainingDetail?datasetId=${datasetId}`)).body.data;
        if (d.total > 0 && d.done === d.total) break;
        if (Date.now() > until) throw new Error(`indexing did not finish: ${JSON.stringify(d)}`);
        await new Promise((r) => setTimeout(r, 100));
      }
      const searched = await call('/api/core/dataset/searchTest', { datasetId, text: 'Norrby departs', searchMode: 'fullTextRecall' });
      expect(searched.status, JSON.stringify(searched.body)).toBe(200);
      // Five rows a chunk: Norrby (row 3) is in the first, rows 2 to 6.
      expect(searched.body.data.list[0]).toMatchObject({ sourceName: 'ferries.xlsx', rows: [2, 6] });
      expect(searched.body.data.list[0].pages).toBeUndefined();
    });

    it('shows the pages in the search test and in a chat answer’s quotes', async () => {
      const datasetId = (await call('/api/core/dataset/create', { name: 'harbour', vectorModel: 'sim-embed-384' })).body.data;
      const form = new FormData();
      form.append('file', new Blob([new Uint8Array(await harbourPdf())]), 'harbour.pdf');
      form.append('data', JSON.stringify({ datasetId, chunkSize: 24 }));
      const made = await fetch(`${p.url}/api/core/dataset/collection/create/localFile`, {
        method: 'POST',
        headers: { authorization: `Bearer ${KEY}` },
        body: form,
      });
      expect(made.status).toBe(200);
      for (const until = Date.now() + 30_000; ;) {
        const d = (await call(`/api/core/dataset/trainingDetail?datasetId=${datasetId}`)).body.data;
        if (d.total > 0 && d.done === d.total) break;
        if (Date.now() > until) throw new Error(`indexing did not finish: ${JSON.stringify(d)}`);
        await new Promise((r) => setTimeout(r, 100));
      }
      const searched = await call('/api/core/dataset/searchTest', { datasetId, text: 'tide table north pier', searchMode: 'fullTextRecall' });
      expect(searched.status, JSON.stringify(searched.body)).toBe(200);
      expect(searched.body.data.list[0]).toMatchObject({ sourceName: 'harbour.pdf', pages: [2, 2] });

      const appId = (
        await call('/api/core/app/create', { name: 'harbour desk', model: 'sim-echo-prompt', datasets: [datasetId], search: { searchMode: 'fullTextRecall' } })
      ).body.data;
      const appKey = (await call('/api/support/openapi/create', { name: 'pages', appId })).body.data;
      const res = await fetch(`${p.url}/api/v1/chat/completions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${appKey}`, 'content-type': 'application/json' },
        body: JSON.stringify({ detail: true, messages: [{ role: 'user', content: 'Which berth is kept for the lifeboat?' }] }),
      });
      const body = (await res.json()) as any;
      expect(res.status, JSON.stringify(body)).toBe(200);
      const quotes = body.responseData.find((r: any) => r.quoteList)?.quoteList;
      expect(quotes.find((q: any) => q.q.includes('lifeboat'))).toMatchObject({ sourceName: 'harbour.pdf', pages: [3, 3] });
    });
  });
});
