// Excel workbooks (.xlsx), made by ExcelJS's writer as Excel would save them:
// every sheet under its name, rows as "header: value" blocks, formulas as
// their cached values, merged ranges, dates, rich text and links; chunks that
// never start inside a row and carry the sheet's name; and the refusals:
// a password-protected file, a file that is no workbook, one that would
// expand past the limit, one without values.
import ExcelJS from 'exceljs';
import { describe, expect, it } from 'vitest';
import { chunkBatches } from '../src/ingest/chunk-stream.js';
import { detectFormat, readDocument } from '../src/ingest/index.js';
import { readXlsx } from '../src/ingest/readers/xlsx.js';
import { rejection } from './ingest-fixtures.js';

async function workbook(build: (wb: ExcelJS.Workbook) => void): Promise<Buffer> {
  const wb = new ExcelJS.Workbook();
  build(wb);
  return Buffer.from(await wb.xlsx.writeBuffer());
}

const revenue = () =>
  workbook((wb) => {
    wb.title = 'Quarterly figures';
    const sheet = wb.addWorksheet('Revenue');
    sheet.addRow(['Revenue by region, 2025']); // a caption above the table
    sheet.addRow([]);
    sheet.addRow(['Region', 'Q3 revenue', 'Q4 revenue', 'Closed on']);
    sheet.addRow(['North', '4.2 M', '4.4 M', new Date(Date.UTC(2025, 8, 30))]);
    sheet.addRow(['South', '3.1 M', '3.1 M', new Date(Date.UTC(2025, 8, 30))]);
    sheet.addRow([]); // an empty row inside the table
    sheet.addRow(['East', { formula: 'B4+B5', result: 7.3 }, { richText: [{ text: '2.' }, { font: { bold: true }, text: '9 M' }] }]);
    const staff = wb.addWorksheet('Staff');
    staff.addRow(['Name', 'Team', 'Page']);
    staff.addRow(['Ana', 'Sales', { text: 'profile', hyperlink: 'https://example.com/ana' }]);
    staff.addRow(['Ben', 'Sales', 'none']);
    staff.mergeCells('B2:B3'); // one team for both
    staff.addRow(['Cy', 'Support and on-call']);
    staff.mergeCells('B4:C4'); // a value across two columns
    wb.addWorksheet('Empty');
  });

describe('Excel workbooks (.xlsx)', () => {
  it('reads every sheet under its name, one block per row with the header kept', async () => {
    const r = await readDocument({ data: await revenue(), filename: 'figures.xlsx' });
    expect(r.format).toBe('xlsx');
    expect(r.title).toBe('Quarterly figures');
    expect(r.text).toBe(
      [
        '# Sheet: Revenue',
        'Revenue by region, 2025',
        'Region: North\nQ3 revenue: 4.2 M\nQ4 revenue: 4.4 M\nClosed on: 2025-09-30',
        'Region: South\nQ3 revenue: 3.1 M\nQ4 revenue: 3.1 M\nClosed on: 2025-09-30',
        'Region: East\nQ3 revenue: 7.3\nQ4 revenue: 2.9 M',
        '# Sheet: Staff',
        'Name: Ana\nTeam: Sales\nPage: profile',
        'Name: Ben\nTeam: Sales\nPage: none',
        'Name: Cy\nTeam: Support and on-call',
      ].join('\n\n'),
    );
  });

  it('is known by its name, its type or its bytes', async () => {
    const data = await revenue();
    expect(detectFormat({ data, filename: 'a.XLSX' })).toBe('xlsx');
    expect(detectFormat({ data, filename: 'upload', mimeType: 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet' })).toBe('xlsx');
    expect(detectFormat({ data, filename: 'upload', mimeType: 'application/octet-stream' })).toBe('xlsx');
  });

  it('chunks whole rows that carry the sheet name, none starting inside the row before, five at most', async () => {
    const data = await workbook((wb) => {
      const sheet = wb.addWorksheet('Stores');
      sheet.addRow(['Store', 'City', 'Opening hours', 'Manager']);
      for (let i = 1; i <= 60; i++) sheet.addRow([`Store ${i}`, `City number ${i}`, `from ${(i % 4) + 7} to ${(i % 5) + 17}`, `Manager ${i} of the store`]);
    });
    const chunks = [];
    for await (const batch of chunkBatches({ file: { data, filename: 'stores.xlsx' } }, { chunkSize: 80, chunkSplitter: undefined }, 100))
      chunks.push(...batch);
    expect(chunks.length).toBeGreaterThan(5);
    const rows = new Set<number>();
    for (const chunk of chunks) {
      expect(chunk.titlePath).toEqual(['# Sheet: Stores']);
      expect(chunk.overlap).toBe('');
      const body = chunk.text.replace(/^# Sheet: Stores\n+/, '');
      // Every block is a whole row: its four lines, in order.
      const inChunk: number[] = [];
      for (const block of body.split('\n\n')) {
        const m = /^Store: Store (\d+)\nCity: City number \1\nOpening hours: from \d+ to \d+\nManager: Manager \1 of the store$/.exec(block);
        expect(m, block).not.toBeNull();
        rows.add(Number(m![1]));
        inChunk.push(Number(m![1]));
      }
      // Its rows for citations: Store i is on row i + 1, under the header.
      expect(chunk.rows).toEqual([inChunk[0]! + 1, inChunk.at(-1)! + 1]);
    }
    expect(rows.size).toBe(60);
    // With a model's long chunks, a few rows at most in each: 60 rows in 12 chunks of 5.
    const long = [];
    for await (const batch of chunkBatches({ file: { data, filename: 'stores.xlsx' } }, { chunkSize: 2048, chunkSplitter: undefined }, 100))
      long.push(...batch);
    expect(long.map((c) => c.text.split('\n\n').length)).toEqual(Array(12).fill(5));
  });

  it('gives each chunk the rows it holds, as the sheet numbers them: past a caption and empty rows, per sheet, streamed or not; and a CSV its records', async () => {
    const data = await workbook((wb) => {
      const fares = wb.addWorksheet('Fares');
      fares.addRow(['Island ferry fares, summer']);
      fares.addRow(['Route', 'Adult', 'Child']);
      fares.addRow(['Holmsund', '4.50', '2.25']);
      fares.addRow([]);
      fares.addRow(['Norrby', '6.00', '3.00']);
      fares.addRow(['Lillö', '3.20', '1.60']);
      const staff = wb.addWorksheet('Staff');
      staff.addRow(['Name', 'Role']);
      staff.addRow(['Maja Lind', 'Harbour master']);
    });
    for (const streamAboveBytes of [undefined, 0]) {
      const read = await readXlsx(data, { filename: 'fares.xlsx', ...(streamAboveBytes === 0 ? { streamAboveBytes } : {}) });
      // Row 4 is empty; row 1 is the caption, row 2 the header.
      expect(read.rows.map((r) => r.row)).toEqual([3, 5, 6, 2]);
    }
    const rowsOf = async (file: { data: Buffer; filename: string }, chunkSize = 512) => {
      const out: { text: string; rows?: [number, number] }[] = [];
      for await (const batch of chunkBatches({ file }, { chunkSize, chunkSplitter: undefined }, 100)) out.push(...batch);
      return out.map((c) => [c.text.split('\n').find((l) => l.includes(':') && !l.startsWith('#')), c.rows]);
    };
    // The caption is no row; row 4 is empty.
    expect(await rowsOf({ data, filename: 'fares.xlsx' })).toEqual([
      ['Route: Holmsund', [3, 6]],
      ['Name: Maja Lind', [2, 2]],
    ]);
    const csv = Buffer.from('Berth,Length,Note\nA1,8,"by the ""north"" pier"\nA2,10,\nB7,14,kept for the lifeboat\n');
    expect(await rowsOf({ data: csv, filename: 'berths.csv' })).toEqual([['Berth: A1', [2, 4]]]);
    // A row longer than a chunk: each of its chunks cites it.
    const long = Buffer.from(`Berth,Note\nA1,short\nC3,${Array.from({ length: 120 }, (_, i) => `word${i}`).join(' ')}\nD4,after\n`);
    const parts = await rowsOf({ data: long, filename: 'long.csv' }, 32);
    expect(parts.length).toBeGreaterThan(3);
    expect(parts[0]![1]).toEqual([2, 3]);
    expect(parts.slice(1, -1).every(([, rows]) => JSON.stringify(rows) === '[3,3]')).toBe(true);
    expect(parts.at(-1)![1]).toEqual([3, 4]);
  });

  it('reads a large workbook as a stream: the same rows, dates and formulas', async () => {
    const data = await workbook((wb) => {
      const sheet = wb.addWorksheet('Orders');
      sheet.addRow(['Order', 'Shipped', 'Total']);
      for (let i = 1; i <= 50; i++) sheet.addRow([`ORD-${i}`, new Date(Date.UTC(2025, 0, i)), { formula: `${i}*2`, result: i * 2 }]);
      wb.addWorksheet('Notes').addRow(['Checked by the harbour office']);
    });
    const loaded = await readXlsx(data, { filename: 'orders.xlsx' });
    const streamed = await readXlsx(data, { filename: 'orders.xlsx', streamAboveBytes: 0 });
    expect(streamed.text).toBe(loaded.text);
    expect(streamed.text).toContain('Order: ORD-31\nShipped: 2025-01-31\nTotal: 62');
    expect(streamed.text).toContain('# Sheet: Notes\n\nChecked by the harbour office');
  });

  it('refuses a password-protected workbook, one that is not a zip, and one without values, each by name', async () => {
    // What Excel saves with a password: an OLE2 compound file, whatever the extension.
    const encrypted = Buffer.concat([Buffer.from([0xd0, 0xcf, 0x11, 0xe0, 0xa1, 0xb1, 0x1a, 0xe1]), Buffer.alloc(4096)]);
    const locked = await rejection(readDocument({ data: encrypted, filename: 'salaries.xlsx' }));
    expect([locked.code, locked.status]).toEqual(['encrypted_file', 422]);
    expect(locked.message).toBe(
      'salaries.xlsx is password-protected (or in the older binary format): save it as an Excel workbook (.xlsx) without a password, then import it.',
    );

    const notZip = await rejection(readDocument({ data: Buffer.from('Region,Revenue\nNorth,4'), filename: 'renamed.xlsx' }));
    expect([notZip.code, notZip.message]).toEqual(['corrupt_file', 'renamed.xlsx is not an Excel workbook (.xlsx): it is not a zip archive.']);

    const empty = await rejection(readDocument({ data: await workbook((wb) => void wb.addWorksheet('Blank')), filename: 'blank.xlsx' }));
    expect([empty.code, empty.message]).toEqual(['empty_document', 'blank.xlsx has no values in any of its sheets.']);
  });

  it('refuses a workbook whose entries expand past the limit before unpacking it', async () => {
    // 20,000 rows of one repeated text: a small file, megabytes of XML once unpacked.
    const data = await workbook((wb) => {
      const sheet = wb.addWorksheet('Filler');
      sheet.addRow(['n', 'text']);
      for (let i = 0; i < 20_000; i++) sheet.addRow([i, 'the same words again and again and again']);
    });
    expect(data.byteLength).toBeLessThan(400_000);
    const big = await rejection(readXlsx(data, { filename: 'filler.xlsx', maxExpandedBytes: 1024 * 1024 }));
    expect(big.code).toBe('too_complex');
    expect(big.status).toBe(413);
    expect(big.message).toMatch(/^filler\.xlsx expands to \d+\.\d MiB when unpacked; the limit is 1\.0 MiB\./);
    // Under the default limit it is read.
    expect((await readXlsx(data, { filename: 'filler.xlsx' })).text).toContain('n: 19999\ntext: the same words again');
  });
});
