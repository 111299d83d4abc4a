// Issue 34 item 5: chunks without noise. A line of a code example that starts
// with "#" (a shell or config comment) is never a heading, in Markdown, plain
// text or a PDF; a PDF's running header, footer and page numbers are gone
// before chunking, and the body text stays whole across page breaks. The PDF
// is written with pdfkit, as a real document generator lays a page out.
import PDFDocument from 'pdfkit';
import { describe, expect, it } from 'vitest';
import { chunkMarkdown, readDocument, type Chunk } from '../src/ingest/index.js';
import type { PdfLine } from '../src/ingest/readers/pdf.js';
import { withoutRunningLines } from '../src/ingest/readers/pdf-running-lines.js';

const COMMENT = '# update-mime-database command. DO NOT EDIT!';

/** Chunks of a file as an upload makes them: read by its reader, then chunked. */
async function chunksOf(data: Buffer, filename: string, chunkSize = 96): Promise<{ text: string; chunks: Chunk[] }> {
  const doc = await readDocument({ data, filename });
  return { text: doc.text, chunks: await chunkMarkdown(doc.text, { chunkSize }) };
}

const SUBJECTS = ['The survey boat', 'Every net', 'The radio log', 'A visiting crew', 'The caretaker', 'Each sample jar', 'The weather mast', 'The fuel store', 'A field notebook', 'The boathouse key'];
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
function paragraphs(count: number, sentences: number): string[] {
  return Array.from({ length: count }, (_, p) =>
    Array.from({ length: sentences }, (_, s) => `${SUBJECTS[(p + s) % SUBJECTS.length]} of section ${p + 1} ${PREDICATES[(p * 3 + s) % PREDICATES.length]}, says the ${ORDINALS[s]} rule.`).join(' '),
  );
}

interface ManualOptions {
  body: string[];
  /** Lines set in Courier after the body's second paragraph (a code example). */
  code?: string[];
  /** A title page: the running header's text as a 20 pt title on page 1, which has no header. */
  title?: boolean;
}

/**
 * A handbook as a word processor writes one: Helvetica body text flowing over
 * A4 pages, a running header drawn first on each page, and a footer with the
 * page number drawn last (after the body, as pdfkit's buffered pages do).
 */
async function manualPdf({ body, code, title }: ManualOptions): Promise<{ pdf: Buffer; pages: number }> {
  const doc = new PDFDocument({ size: 'A4', margins: { top: 72, bottom: 72, left: 72, right: 72 }, bufferPages: true });
  const parts: Buffer[] = [];
  doc.on('data', (b: Buffer) => parts.push(b));
  const ended = new Promise((done) => doc.on('end', done));
  const header = () => {
    const { x, y } = doc;
    doc.font('Helvetica').fontSize(9).text('Skarvik Field Manual', 72, 40, { lineBreak: false });
    doc.fontSize(11);
    doc.x = x;
    doc.y = y;
  };
  if (title) doc.font('Helvetica').fontSize(20).text('Skarvik Field Manual').moveDown();
  else header();
  doc.on('pageAdded', header);
  body.forEach((paragraph, i) => {
    doc.font('Helvetica').fontSize(11).text(paragraph).moveDown();
    if (i === 1 && code) {
      doc.text('The survey log starts with these lines:').moveDown(0.5);
      doc.font('Courier').fontSize(9).text(code.join('\n')).moveDown();
    }
  });
  const range = doc.bufferedPageRange();
  for (let i = 0; i < range.count; i++) {
    doc.switchToPage(range.start + i);
    doc.font('Helvetica').fontSize(9);
    doc.text('Confidential: Skarvik Field Station', 72, doc.page.height - 50, { lineBreak: false });
    doc.text(`Page ${i + 1} of ${range.count}`, 440, doc.page.height - 50, { lineBreak: false });
  }
  doc.end();
  await ended;
  return { pdf: Buffer.concat(parts), pages: range.count };
}

describe('a PDF with a running header, a footer and page numbers on every page', () => {
  it('has none of them in any chunk, and every paragraph whole, also one a page break cut', async () => {
    const body = paragraphs(30, 6);
    const { pdf, pages } = await manualPdf({ body });
    expect(pages).toBeGreaterThanOrEqual(3);
    const doc = await readDocument({ data: pdf, filename: 'manual.pdf' });
    expect(doc.pages).toHaveLength(pages);
    // The layout does cut a paragraph between two pages (else this would test nothing about page breaks).
    const cut = body.filter((p) => !doc.pages!.some((page) => page.includes(p)));
    expect(cut.length).toBeGreaterThan(0);
    expect(doc.text.split('\n\n')).toEqual(body);
    const chunks = await chunkMarkdown(doc.text, { chunkSize: 96 });
    expect(chunks.length).toBeGreaterThan(6);
    for (const c of chunks) {
      expect(c.text).not.toMatch(/Skarvik Field Manual|Confidential|Page \d+ of \d+/);
      expect(c.text).not.toMatch(/(^|\n)\d+(\n|$)/); // no page number alone on a line
      expect(c.titlePath).toEqual([]);
    }
    // Every sentence of the body is in a chunk, whole.
    for (const sentence of body.flatMap((p) => p.split(/(?<=\.) /))) expect(chunks.some((c) => c.text.includes(sentence))).toBe(true);
  });

  it("keeps the first page's title, the running header's text at another height", async () => {
    const body = paragraphs(30, 6);
    const { pdf } = await manualPdf({ body, title: true });
    const doc = await readDocument({ data: pdf, filename: 'manual.pdf' });
    expect(doc.text.split('\n\n')).toEqual(['Skarvik Field Manual', ...body]);
  });
});

describe('a "#" comment line in a code example is never a heading', () => {
  const code = ['# This file was automatically generated by the', COMMENT, '55:text/x-diff:*.patch', '50:text/x-diff:*.diff'];

  it('in a PDF: monospaced lines are fenced as code, and no later chunk has the comment as its title', async () => {
    const { pdf } = await manualPdf({ body: paragraphs(6, 6), code });
    const { text, chunks } = await chunksOf(pdf, 'manual.pdf');
    expect(text).toContain(`The survey log starts with these lines:\n\n\`\`\`\n${code.join('\n')}\n\`\`\``);
    expect(chunks.length).toBeGreaterThan(4);
    for (const c of chunks) expect(c.titlePath.join(' ')).not.toContain('update-mime-database');
    expect(chunks.filter((c) => c.text.includes(COMMENT))).toHaveLength(1);
  });

  it('in a plain text file: a comment block is code, while a "#" line standing as a heading stays one', async () => {
    const later = paragraphs(4, 5).join('\n\n');
    const txt = `# Glob files\n\nThe globs2 file lists weights, MIME types and patterns. For example:\n\n${code.join('\n')}\n...\n\n${later}\n`;
    const { text, chunks } = await chunksOf(Buffer.from(txt), 'spec.txt');
    expect(text).toContain(`\`\`\`\n${code.join('\n')}\n...\n\`\`\``);
    expect(chunks.length).toBeGreaterThan(3);
    for (const c of chunks) expect(c.titlePath).toEqual(['# Glob files']);
  });

  it('in Markdown: a shell comment inside a fenced block, also one the chunker splits, titles no chunk', async () => {
    const script = ['```sh', COMMENT, ...Array.from({ length: 30 }, (_, i) => `update-mime-database /usr/share/mime --step ${i}`), '```'].join('\n');
    const md = `## Setup\n\nRun this once:\n\n${script}\n\n${paragraphs(3, 5).join('\n\n')}\n`;
    const { chunks } = await chunksOf(Buffer.from(md), 'setup.md');
    expect(chunks.length).toBeGreaterThan(4);
    for (const c of chunks) expect(c.titlePath).toEqual(['## Setup']);
  });
});

describe('withoutRunningLines', () => {
  const line = (text: string, y: number): PdfLine => ({ text, x: 72, endX: 72 + 6 * text.length, y, height: 10 });
  const body = (page: number) => [line(`Body text of page ${'ABCDE'[page]} goes on here.`, 600), line('More body text.', 585)];

  it('takes roman and arabic page numbers and a repeated footer, and keeps rows of figures that only look alike', () => {
    const pages = ['ii', 'iii', 'iv', 'v'].map((roman, i) => [
      // A table of figures whose first row stands at the top of each page: its numbers do not go up with the page.
      line(`Station ${[4, 9, 2, 7][i]} logged ${[120, 80, 310, 45][i]} birds`, 740),
      ...body(i),
      line('Skarvik annual report 2024', 60),
      line(`- ${roman} -`, 45),
      line(`${i + 7}`, 30),
    ]);
    const kept = withoutRunningLines(pages).map((lines) => lines.map((l) => l.text));
    kept.forEach((texts, i) => expect(texts).toEqual([pages[i]![0]!.text, ...body(i).map((l) => l.text)]));
  });

  it('keeps everything of a single page, and a body line between two running ones', () => {
    const single = [[line('Skarvik annual report 2024', 740), ...body(0), line('1', 30)]];
    expect(withoutRunningLines(single)).toEqual(single);
    const sections = ['Boats', 'Nets', 'Radios'];
    const pages = sections.map((name, i) => [line('Skarvik annual report', 740), line(`${name} come first here.`, 725), line('Field notes', 710), ...body(i)]);
    expect(withoutRunningLines(pages).map((lines) => lines[0]!.text)).toEqual(sections.map((name) => `${name} come first here.`));
  });
});
