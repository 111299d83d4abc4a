// Tables in PDFs, laid out by pdfkit as a report generator draws them (each
// cell's text at its column's position, figures right-aligned): read as
// Markdown tables, header first, beside the paragraphs around them; text in
// one column and lines that only look spaced stay text. A Word table made by
// the docx library, and a table longer than a chunk cut between rows.
import { Document, HeadingLevel, Packer, Paragraph, Table, TableCell, TableRow } from 'docx';
import PDFDocument from 'pdfkit';
import { describe, expect, it } from 'vitest';
import { chunkBatches } from '../src/ingest/chunk-stream.js';
import { readDocument } from '../src/ingest/index.js';

/** A PDF drawn by `draw` on one A4 page, Helvetica 11 pt. */
async function pdf(draw: (doc: PDFKit.PDFDocument) => void): Promise<Buffer> {
  const doc = new PDFDocument({ size: 'A4', margins: { top: 72, bottom: 72, left: 72, right: 72 } });
  const parts: Buffer[] = [];
  doc.on('data', (b: Buffer) => parts.push(b));
  const ended = new Promise((done) => doc.on('end', done));
  doc.font('Helvetica').fontSize(11);
  draw(doc);
  doc.end();
  await ended;
  return Buffer.concat(parts);
}

/** A table: left-aligned names in the first column, right-aligned figures in the others, a row every 18 pt. */
function table(doc: PDFKit.PDFDocument, rows: string[][], top: number): void {
  rows.forEach((row, r) => {
    const y = top + r * 18;
    row.forEach((cell, c) => {
      if (c === 0) doc.text(cell, 72, y, { lineBreak: false });
      else doc.text(cell, 180 + (c - 1) * 110, y, { width: 90, align: 'right', lineBreak: false });
    });
  });
}

describe('tables in PDFs', () => {
  it('reads a table as a Markdown table between the paragraphs around it', async () => {
    const data = await pdf((doc) => {
      doc.text('Revenue by region in the third and fourth quarter.', 72, 72);
      table(
        doc,
        [
          ['Region', 'Q3 revenue', 'Q4 revenue'],
          ['North', '4.2 M', '4.4 M'],
          ['South and islands', '3.1 M', '13.0 M'],
          ['East', '', '2.9 M'],
        ],
        110,
      );
      doc.text('The fourth quarter includes the winter ferry season.', 72, 200);
    });
    const r = await readDocument({ data, filename: 'report.pdf' });
    expect(r.text).toBe(
      [
        'Revenue by region in the third and fourth quarter.',
        '| Region | Q3 revenue | Q4 revenue |\n| --- | --- | --- |\n| North | 4.2 M | 4.4 M |\n| South and islands | 3.1 M | 13.0 M |\n| East |  | 2.9 M |',
        'The fourth quarter includes the winter ferry season.',
      ].join('\n\n'),
    );
  });

  it('keeps prose, a single spaced line and code as they were', async () => {
    const data = await pdf((doc) => {
      doc.text('Contents', 72, 72, { lineBreak: false });
      doc.text('3', 480, 72, { lineBreak: false }); // one line with a far part: no table
      doc.text(
        'The harbour office opens at half past seven on weekdays and at nine on Saturdays, and the ferry desk beside it keeps the same hours through the summer.',
        72,
        110,
        { width: 450 },
      );
    });
    const r = await readDocument({ data, filename: 'prose.pdf' });
    expect(r.text).not.toContain('|');
    expect(r.text).toContain('The harbour office opens at half past seven on weekdays and at nine on Saturdays, and the ferry desk');
  });
});

describe('tables in Word documents and long tables', () => {
  it('reads a Word table (made by the docx library) as a Markdown table, and cuts a long one between rows with its header repeated', async () => {
    const cell = (text: string) => new TableCell({ children: [new Paragraph(text)] });
    const row = (cells: string[], header = false) => new TableRow({ tableHeader: header, children: cells.map(cell) });
    const berths = Array.from({ length: 40 }, (_, i) => [`Berth ${i + 1}`, `${8 + (i % 7)} m`, `${200 + i * 5} kronor`]);
    const doc = new Document({
      sections: [
        {
          children: [
            new Paragraph({ text: 'Berths', heading: HeadingLevel.HEADING_1 }),
            new Table({ rows: [row(['Berth', 'Length', 'Price per night'], true), ...berths.map((b) => row(b))] }),
            new Paragraph('Prices include water and power.'),
          ],
        },
      ],
    });
    const data = await Packer.toBuffer(doc);
    const r = await readDocument({ data, filename: 'berths.docx' });
    expect(r.text).toContain('# Berths\n\n| Berth | Length | Price per night |\n| --- | --- | --- |\n| Berth 1 | 8 m | 200 kronor |\n');
    expect(r.text).toContain('| Berth 40 | 12 m | 395 kronor |\n\nPrices include water and power.');

    const chunks = [];
    for await (const batch of chunkBatches({ file: { data, filename: 'berths.docx' } }, { chunkSize: 96, chunkSplitter: undefined }, 100))
      chunks.push(...batch);
    const withRows = chunks.filter((c) => c.text.includes('| Berth '));
    expect(withRows.length).toBeGreaterThan(2);
    const seen: string[] = [];
    for (const chunk of withRows) {
      const lines = chunk.text.split('\n').filter((l) => l.startsWith('|'));
      // Each piece of the table starts with its header and separator, then whole rows.
      expect(lines.slice(0, 2)).toEqual(['| Berth | Length | Price per night |', '| --- | --- | --- |']);
      for (const line of lines.slice(2)) {
        expect(line).toMatch(/^\| Berth \d+ \| \d+ m \| \d+ kronor \|$/);
        seen.push(line);
      }
    }
    expect(seen).toHaveLength(40);
  });
});
