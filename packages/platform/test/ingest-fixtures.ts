// Builders for real test files: a PDF written by hand (so the test controls
// positions and order exactly) and a DOCX zipped with jszip.
import JSZip from 'jszip';
import { expect } from 'vitest';
import { IngestError } from '../src/ingest/index.js';

/** A line of text at (x, y) in points, 12 pt Helvetica (or `font`). */
export type PdfLine = [x: number, y: number, text: string];

export function buildPdf(pages: PdfLine[][], opts: { title?: string; font?: 'Helvetica' | 'Courier' } = {}): Buffer {
  const objects: string[] = [];
  const add = (body: string) => objects.push(body);
  const esc = (s: string) => s.replace(/[\\()]/g, (c) => `\\${c}`);
  add(`<< /Type /Font /Subtype /Type1 /BaseFont /${opts.font ?? 'Helvetica'} >>`); // 1
  const pagesRef = 2 + pages.length * 2;
  const kids: number[] = [];
  for (const lines of pages) {
    const stream = `BT /F1 12 Tf\n${lines.map(([x, y, t]) => `1 0 0 1 ${x} ${y} Tm (${esc(t)}) Tj`).join('\n')}\nET`;
    add(`<< /Length ${Buffer.byteLength(stream, 'latin1')} >>\nstream\n${stream}\nendstream`);
    add(`<< /Type /Page /Parent ${pagesRef} 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 1 0 R >> >> /Contents ${objects.length} 0 R >>`);
    kids.push(objects.length);
  }
  add(`<< /Type /Pages /Kids [${kids.map((k) => `${k} 0 R`).join(' ')}] /Count ${kids.length} >>`);
  add(`<< /Type /Catalog /Pages ${pagesRef} 0 R >>`);
  const catalog = objects.length;
  if (opts.title) add(`<< /Title (${esc(opts.title)}) >>`);
  let out = '%PDF-1.4\n';
  const offsets: number[] = [];
  objects.forEach((body, i) => {
    offsets.push(Buffer.byteLength(out, 'latin1'));
    out += `${i + 1} 0 obj\n${body}\nendobj\n`;
  });
  const xref = Buffer.byteLength(out, 'latin1');
  out += `xref\n0 ${objects.length + 1}\n0000000000 65535 f \n${offsets.map((o) => `${String(o).padStart(10, '0')} 00000 n \n`).join('')}`;
  const info = opts.title ? ` /Info ${objects.length} 0 R` : '';
  out += `trailer\n<< /Size ${objects.length + 1} /Root ${catalog} 0 R${info} >>\nstartxref\n${xref}\n%%EOF\n`;
  return Buffer.from(out, 'latin1');
}

const W = 'xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"';
const xmlEsc = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

export const docx = {
  heading: (level: number, text: string) => `<w:p><w:pPr><w:pStyle w:val="Heading${level}"/></w:pPr><w:r><w:t>${xmlEsc(text)}</w:t></w:r></w:p>`,
  para: (text: string) => `<w:p><w:r><w:t xml:space="preserve">${xmlEsc(text)}</w:t></w:r></w:p>`,
  table: (rows: string[][]) =>
    `<w:tbl>${rows.map((r) => `<w:tr>${r.map((c) => `<w:tc><w:p><w:r><w:t>${xmlEsc(c)}</w:t></w:r></w:p></w:tc>`).join('')}</w:tr>`).join('')}</w:tbl>`,
};

/** A minimal but real .docx: content types, relationships, styles (so headings map), document. */
export async function buildDocx(bodyXml: string): Promise<Buffer> {
  const zip = new JSZip();
  zip.file(
    '[Content_Types].xml',
    `<?xml version="1.0" encoding="UTF-8"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"><Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/><Default Extension="xml" ContentType="application/xml"/><Override PartName="/word/document.xml" ContentType="application/vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml"/><Override PartName="/word/styles.xml" ContentType="application/vnd.openxmlformats-officedocument.wordprocessingml.styles+xml"/></Types>`,
  );
  zip.file(
    '_rels/.rels',
    `<?xml version="1.0" encoding="UTF-8"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/officeDocument" Target="word/document.xml"/></Relationships>`,
  );
  zip.file(
    'word/_rels/document.xml.rels',
    `<?xml version="1.0" encoding="UTF-8"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/styles" Target="styles.xml"/></Relationships>`,
  );
  const styles = [1, 2, 3].map((n) => `<w:style w:type="paragraph" w:styleId="Heading${n}"><w:name w:val="heading ${n}"/></w:style>`).join('');
  zip.file('word/styles.xml', `<?xml version="1.0" encoding="UTF-8"?><w:styles ${W}>${styles}</w:styles>`);
  zip.file('word/document.xml', `<?xml version="1.0" encoding="UTF-8"?><w:document ${W}><w:body>${bodyXml}</w:body></w:document>`);
  return zip.generateAsync({ type: 'nodebuffer' });
}

/** The IngestError `p` is refused with (a test fails if it is not refused, or with another error). */
export async function rejection(p: Promise<unknown>): Promise<IngestError> {
  try {
    await p;
  } catch (err) {
    expect(err).toBeInstanceOf(IngestError);
    return err as IngestError;
  }
  throw new Error('expected a rejection');
}
