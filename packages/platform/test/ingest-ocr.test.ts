// Scans read with OCR (issue 29): Tesseract in a worker thread reads a PDF's
// pages without text and image files, offline, a page at a time. Scans are
// made here as a scanner makes them (scan-fixtures.ts: text drawn on a
// canvas, placed on PDF pages by pdfkit), so the PDFs have no text layer.
import { describe, expect, it } from 'vitest';
import { tidyOcrText } from '../src/ingest/ocr/engine.js';
import { ocrPages, type OcrEvent } from '../src/ingest/ocr/index.js';
import { CHINESE_FONT, noScanFont, scannedPagePng, scannedPdf } from './scan-fixtures.js';

const LANGUAGES = ['eng', 'chi_sim'];

async function read(kind: 'pdf' | 'image', data: Buffer, filename: string): Promise<OcrEvent[]> {
  const events: OcrEvent[] = [];
  for await (const e of ocrPages({ kind, data, filename, languages: LANGUAGES })) events.push(e);
  return events;
}

describe('OCR text', () => {
  it('joins wrapped lines, keeps paragraphs, mends hyphenated words and drops spaces between Chinese characters', () => {
    expect(tidyOcrText('The pump is serviced\nevery spring by the\nharbour crew.\n\nRefunds take a main-\ntenance check.\n')).toBe(
      'The pump is serviced every spring by the harbour crew.\n\nRefunds take a maintenance check.',
    );
    expect(tidyOcrText('退货 须 在 三 十 天\n内 办 理 。')).toBe('退货须在三十天内办理。');
    expect(tidyOcrText('Model X 9000 costs 40 euros')).toBe('Model X 9000 costs 40 euros');
  });
});

describe.skipIf(Boolean(noScanFont))('reading scans', () => {
  it('reads each page of a scanned PDF, with its confidence, after its (empty) text layer', async () => {
    const pdf = await scannedPdf([
      scannedPagePng(['The inspection interval for the Falcon pump', 'is eighteen months.']),
      scannedPagePng(['Spare seals are kept in cabinet seven.']),
    ]);
    const events = await read('pdf', pdf, 'manual.pdf');
    expect(events[0]).toEqual({ type: 'layer', pages: ['', ''] });
    const pages = events.slice(1);
    expect(pages.map((p) => p.type === 'page' && p.page)).toEqual([1, 2]);
    const [first, second] = pages as Extract<OcrEvent, { type: 'page' }>[];
    expect(first!.text).toBe('The inspection interval for the Falcon pump is eighteen months.');
    expect(second!.text).toBe('Spare seals are kept in cabinet seven.');
    for (const p of [first!, second!]) expect(p.confidence).toBeGreaterThan(80);
  }, 60_000);

  it('reads only the pages without text of a PDF that has both', async () => {
    const pdf = await scannedPdf(['The warranty lasts seven years from the day of delivery.', scannedPagePng(['Claims go to the service desk in Ghent.'])]);
    const events = await read('pdf', pdf, 'mixed.pdf');
    expect(events[0]).toMatchObject({ type: 'layer', pages: [expect.stringContaining('seven years'), ''] });
    expect(events.slice(1)).toEqual([expect.objectContaining({ type: 'page', page: 2, text: 'Claims go to the service desk in Ghent.' })]);
  }, 60_000);

  it.skipIf(!CHINESE_FONT)(
    'reads an image file, Chinese as well as English (skipped without the fonts-wqy-microhei font)',
    async () => {
      const png = scannedPagePng(['退货须在三十天内办理。'], CHINESE_FONT);
      const events = await read('image', png, 'notice.png');
      expect(events[0]).toEqual({ type: 'layer', pages: [''] });
      expect(events[1]).toMatchObject({ type: 'page', page: 1, text: '退货须在三十天内办理。' });
    },
    60_000,
  );

  it('refuses a file that is not an image, naming it', async () => {
    await expect(read('image', Buffer.from('not an image at all'), 'fake.png')).rejects.toThrow(/./);
    await expect(read('pdf', Buffer.from('%PDF-1.4 broken'), 'broken.pdf')).rejects.toThrow(/broken\.pdf/);
  }, 60_000);
});
