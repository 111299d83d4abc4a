// PDFs as a document generator lays them out (pdfkit): body text flowing over
// A4 pages, a running header drawn first on each page and a footer with the
// page number drawn last (after the body, as pdfkit's buffered pages do), and
// code set in Courier. What ingest must make clean chunks of (issue 34).
import PDFDocument from 'pdfkit';

const SUBJECTS = [
  'The survey boat',
  'Every net',
  'The radio log',
  'A visiting crew',
  'The caretaker',
  'Each sample jar',
  'The weather mast',
  'The fuel store',
  'A field notebook',
  'The boathouse key',
];
const PREDICATES = [
  'is checked before the morning tide turns',
  'stays in the drying room until the evening meeting',
  'goes back to its hook beside the northern door',
  'is signed out in the ledger with the date and the hour',
  'needs a second pair of hands when the wind is strong',
  'is rinsed in fresh water after every trip to the skerries',
  'waits for the harbour master to wave it through',
];

const ORDINALS = ['first', 'second', 'third', 'fourth', 'fifth', 'sixth', 'seventh'];

/**
 * Paragraphs of distinct sentences (none repeats), so that a sentence out of
 * place or cut is seen. No number ends a sentence: "2." at the start of a
 * wrapped line would read as a list item.
 */
export function manualParagraphs(count: number, sentences: number): string[] {
  return Array.from({ length: count }, (_, p) =>
    Array.from(
      { length: sentences },
      (_, s) => `${SUBJECTS[(p + s) % SUBJECTS.length]} of section ${p + 1} ${PREDICATES[(p * 3 + s) % PREDICATES.length]}, says the ${ORDINALS[s]} rule.`,
    ).join(' '),
  );
}

export const MANUAL_HEADER = 'Skarvik Field Manual';
export const MANUAL_FOOTER = 'Confidential: Skarvik Field Station';

export interface ManualOptions {
  /** Paragraphs of Helvetica 11 pt body text. */
  body: string[];
  /** A code example set in Courier 9 pt after the body's second paragraph, with the sentence introducing it. */
  code?: { intro: string; lines: string[] };
  /** A title page: the running header's text as a 20 pt title on page 1, which has no header. */
  title?: boolean;
}

/** The PDF's bytes and its number of pages; every page has the header (but a title page), the footer and "Page n of N". */
export async function manualPdf({ body, code, title }: ManualOptions): Promise<{ pdf: Buffer; pages: number }> {
  const doc = new PDFDocument({ size: 'A4', margins: { top: 72, bottom: 72, left: 72, right: 72 }, bufferPages: true });
  const parts: Buffer[] = [];
  doc.on('data', (b: Buffer) => parts.push(b));
  const ended = new Promise((done) => doc.on('end', done));
  const header = () => {
    const { x, y } = doc;
    doc.font('Helvetica').fontSize(9).text(MANUAL_HEADER, 72, 40, { lineBreak: false });
    doc.fontSize(11);
    doc.x = x;
    doc.y = y;
  };
  if (title) doc.font('Helvetica').fontSize(20).text(MANUAL_HEADER).moveDown();
  else header();
  doc.on('pageAdded', header);
  body.forEach((paragraph, i) => {
    doc.font('Helvetica').fontSize(11).text(paragraph).moveDown();
    if (i === 1 && code) {
      doc.text(code.intro).moveDown(0.5);
      doc.font('Courier').fontSize(9).text(code.lines.join('\n')).moveDown();
    }
  });
  const range = doc.bufferedPageRange();
  for (let i = 0; i < range.count; i++) {
    doc.switchToPage(range.start + i);
    doc.font('Helvetica').fontSize(9);
    doc.text(MANUAL_FOOTER, 72, doc.page.height - 50, { lineBreak: false });
    doc.text(`Page ${i + 1} of ${range.count}`, 440, doc.page.height - 50, { lineBreak: false });
  }
  doc.end();
  await ended;
  return { pdf: Buffer.concat(parts), pages: range.count };
}
