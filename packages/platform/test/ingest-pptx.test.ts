// PowerPoint presentations (.pptx), made by pptxgenjs as PowerPoint would
// save them: each slide in order under "# Slide <n>: <title>", its text boxes,
// a table as a Markdown table, the speaker notes; the slide number in every
// chunk's title path; and the refusals, each naming the file.
import PptxGenJS from 'pptxgenjs';
import { describe, expect, it } from 'vitest';
import { chunkBatches } from '../src/ingest/chunk-stream.js';
import { detectFormat, readDocument } from '../src/ingest/index.js';
import { rejection } from './ingest-fixtures.js';

async function deck(build: (pptx: PptxGenJS) => void): Promise<Buffer> {
  const pptx = new PptxGenJS();
  // A layout with a real title placeholder, as PowerPoint's own layouts have.
  pptx.defineSlideMaster({
    title: 'TITLED',
    objects: [{ placeholder: { options: { name: 'title', type: 'title', x: 0.5, y: 0.2, w: 9, h: 1 }, text: '' } }],
  });
  build(pptx);
  return (await pptx.write({ outputType: 'nodebuffer' })) as Buffer;
}

const harbourDeck = () =>
  deck((pptx) => {
    const first = pptx.addSlide({ masterName: 'TITLED' });
    first.addText('Harbour opening hours', { placeholder: 'title' });
    first.addText('The harbour office opens at 7:30 on weekdays.', { x: 0.5, y: 1.5, w: 9, h: 1 });
    first.addNotes('Mention the winter hours: 8:00 from November.');
    const second = pptx.addSlide({ masterName: 'TITLED' });
    second.addText('Ferry fares', { placeholder: 'title' });
    second.addTable(
      [
        [{ text: 'Route' }, { text: 'Adult' }, { text: 'Child' }],
        [{ text: 'Island A' }, { text: '4.50' }, { text: '2.00' }],
        [{ text: 'Island B | north' }, { text: '6.00' }, { text: '3.00' }],
      ],
      { x: 0.5, y: 1.5, w: 9 },
    );
    const third = pptx.addSlide();
    third.addText('A slide without a title, with a line\nbroken in two.', { x: 0.5, y: 0.5, w: 9, h: 2 });
  });

describe('PowerPoint presentations (.pptx)', () => {
  it('reads each slide in order: its title, text, tables and notes', async () => {
    const r = await readDocument({ data: await harbourDeck(), filename: 'harbour.pptx' });
    expect(r.format).toBe('pptx');
    expect(r.text).toBe(
      [
        '# Slide 1: Harbour opening hours',
        'The harbour office opens at 7:30 on weekdays.',
        'Notes: Mention the winter hours: 8:00 from November.',
        '# Slide 2: Ferry fares',
        '| Route | Adult | Child |\n| --- | --- | --- |\n| Island A | 4.50 | 2.00 |\n| Island B \\| north | 6.00 | 3.00 |',
        '# Slide 3',
        'A slide without a title, with a line\nbroken in two.',
      ].join('\n\n'),
    );
  });

  it('is known by its name, its type or its bytes, and its chunks name their slide', async () => {
    const data = await harbourDeck();
    expect(detectFormat({ data, filename: 'upload', mimeType: 'application/vnd.openxmlformats-officedocument.presentationml.presentation' })).toBe('pptx');
    expect(detectFormat({ data, filename: 'upload' })).toBe('pptx');
    const chunks = [];
    for await (const batch of chunkBatches({ file: { data, filename: 'harbour.pptx' } }, { chunkSize: 512, chunkSplitter: undefined }, 100))
      chunks.push(...batch);
    expect(chunks.map((c) => c.titlePath)).toEqual([['# Slide 1: Harbour opening hours'], ['# Slide 2: Ferry fares'], ['# Slide 3']]);
    expect(chunks[0]!.text).toContain('winter hours');
  });

  it('refuses a protected file, one that is not a zip, and a zip that is no presentation, each by name', async () => {
    const encrypted = Buffer.concat([Buffer.from([0xd0, 0xcf, 0x11, 0xe0, 0xa1, 0xb1, 0x1a, 0xe1]), Buffer.alloc(2048)]);
    const locked = await rejection(readDocument({ data: encrypted, filename: 'board.pptx' }));
    expect([locked.code, locked.status]).toEqual(['encrypted_file', 422]);
    expect(locked.message).toContain('board.pptx is password-protected');
    const notZip = await rejection(readDocument({ data: Buffer.from('slides'), filename: 'notes.pptx' }));
    expect([notZip.code, notZip.message]).toEqual(['corrupt_file', 'notes.pptx is not a PowerPoint presentation (.pptx): it is not a zip archive.']);
    // An Excel workbook renamed: a zip, but without ppt/presentation.xml.
    const ExcelJS = (await import('exceljs')).default;
    const wb = new ExcelJS.Workbook();
    wb.addWorksheet('A').addRow(['x']);
    const renamed = await rejection(readDocument({ data: Buffer.from(await wb.xlsx.writeBuffer()), filename: 'renamed.pptx' }));
    expect([renamed.code, renamed.message]).toEqual(['corrupt_file', 'renamed.pptx is not a PowerPoint presentation (.pptx): it has no ppt/presentation.xml.']);
  });
});
