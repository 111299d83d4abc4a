// The answers bench's documents: four Markdown files and a CSV committed
// beside this file, and a PDF and a Word document built here at bench time
// (a PDF written by hand, line by line as a word processor lays it out; a
// .docx zipped with jszip). Each document also gives its text as blocks
// (a paragraph unwrapped, a list item, a table row, a CSV field line), which
// is what the bench checks answer sentences against.
import { readFileSync } from 'node:fs';
import JSZip from 'jszip';

const here = (name) => new URL(name, import.meta.url);

/** The travel policy, laid out as a PDF: lines of at most 88 characters, a wider gap between paragraphs. */
const TRAVEL_POLICY = [
  { heading: 'Lumen Analytics travel and expenses policy' },
  'This policy applies to every employee of Lumen Analytics who travels on company business. It was last revised in March 2024 by the finance team.',
  { heading: 'Booking travel' },
  "All trips must be booked through the company's travel portal, Wayfarer. A trip that lasts longer than three days needs the written approval of your manager before it is booked.",
  'Flights shorter than six hours are booked in economy class. For flights of six hours or more, employees may book premium economy. Trains are preferred over flights for journeys under four hours.',
  { heading: 'Hotels' },
  'The company pays up to 160 euros per night for a hotel room in most cities. In London, Paris and Zurich the limit is 220 euros per night.',
  { heading: 'Meals and daily allowance' },
  'Employees receive a daily allowance of 45 euros for meals on every full travel day. On the day of departure and the day of return the allowance is half that amount. Alcohol is never reimbursed.',
  { heading: 'Using your own car' },
  'Employees who drive their own car on business are paid 0.30 euros per kilometre. Parking fees and road tolls are reimbursed against receipts.',
  { heading: 'Claiming expenses' },
  'Expense claims are submitted in Wayfarer with a photo of every receipt. Claims must be filed within 30 days of the end of the trip, and they are paid with the next monthly salary.',
  'A lost receipt can be replaced by a signed declaration, but only twice a year.',
];

/** The onboarding guide, as a Word document: headings, paragraphs, a bulleted list, a table. */
const ONBOARDING = [
  { heading: 1, text: 'Welcome to Lumen Analytics' },
  'This guide tells new employees what happens in their first weeks at Lumen Analytics.',
  { heading: 2, text: 'Your first day' },
  'Your first day starts at 9:30 at the reception on the fourth floor of Harbour House, Dock Street 12. Reception gives you a visitor badge; your own access badge is ready by the end of the first week.',
  'IT hands out your laptop at 11:00. Every employee receives a ThinkPad X1 Carbon with the company software already installed.',
  { heading: 2, text: 'Your buddy' },
  'Every new employee is paired with a buddy from another team. Your buddy has lunch with you on the first day and meets you once a week during the first month.',
  { heading: 2, text: 'Before the end of the first week' },
  'Please complete these tasks before the end of your first week:',
  {
    list: [
      'Sign your employment contract in the HR portal.',
      'Set up two-factor authentication for your company account.',
      'Complete the data protection training, which takes about 40 minutes.',
      'Book a meeting with your manager to agree on goals for the probation period.',
    ],
  },
  { heading: 2, text: 'Employment terms' },
  'The probation period lasts six months. Full-time employees have 28 days of paid vacation per year, and salaries are paid on the 25th of each month.',
  'Lumen Analytics pays half of a monthly public transport pass for every employee.',
  { heading: 2, text: 'Who to ask' },
  {
    table: [
      ['Topic', 'Contact', 'Email'],
      ['Payroll', 'Maria Lind', 'payroll@lumen.example'],
      ['Laptops and accounts', 'IT service desk', 'it@lumen.example'],
      ['Office access', 'Reception', 'reception@lumen.example'],
    ],
  },
];

/** Words of `text` on lines of at most `width` characters. */
function wrapLines(text, width) {
  const lines = [];
  let line = '';
  for (const word of text.split(' ')) {
    if (line && (line + ' ' + word).length > width) {
      lines.push(line);
      line = word;
    } else line = line ? `${line} ${word}` : word;
  }
  if (line) lines.push(line);
  return lines;
}

/** A PDF of Helvetica text lines (12 pt, 15 pt apart; 27 pt between paragraphs), A4-ish pages. */
function buildPdf(blocks) {
  const pages = [[]];
  let y = 760;
  for (const b of blocks) {
    const lines = typeof b === 'string' ? wrapLines(b, 88) : [b.heading];
    if (y - lines.length * 15 < 60) {
      pages.push([]);
      y = 760;
    }
    for (const l of lines) {
      pages.at(-1).push([56, y, l]);
      y -= 15;
    }
    y -= 12;
  }
  const objects = [];
  const esc = (s) => s.replace(/[\\()]/g, (c) => `\\${c}`);
  objects.push('<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>');
  const pagesRef = 2 + pages.length * 2;
  const kids = [];
  for (const lines of pages) {
    const stream = `BT /F1 12 Tf\n${lines.map(([x, yy, t]) => `1 0 0 1 ${x} ${yy} Tm (${esc(t)}) Tj`).join('\n')}\nET`;
    objects.push(`<< /Length ${Buffer.byteLength(stream, 'latin1')} >>\nstream\n${stream}\nendstream`);
    objects.push(`<< /Type /Page /Parent ${pagesRef} 0 R /MediaBox [0 0 595 842] /Resources << /Font << /F1 1 0 R >> >> /Contents ${objects.length} 0 R >>`);
    kids.push(objects.length);
  }
  objects.push(`<< /Type /Pages /Kids [${kids.map((k) => `${k} 0 R`).join(' ')}] /Count ${kids.length} >>`);
  objects.push(`<< /Type /Catalog /Pages ${pagesRef} 0 R >>`);
  let out = '%PDF-1.4\n';
  const offsets = [];
  objects.forEach((body, i) => {
    offsets.push(Buffer.byteLength(out, 'latin1'));
    out += `${i + 1} 0 obj\n${body}\nendobj\n`;
  });
  const xref = Buffer.byteLength(out, 'latin1');
  out += `xref\n0 ${objects.length + 1}\n0000000000 65535 f \n${offsets.map((o) => `${String(o).padStart(10, '0')} 00000 n \n`).join('')}`;
  out += `trailer\n<< /Size ${objects.length + 1} /Root ${objects.length} 0 R >>\nstartxref\n${xref}\n%%EOF\n`;
  return Buffer.from(out, 'latin1');
}

const W = 'xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"';
const xml = (s) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
const run = (text) => `<w:r><w:t xml:space="preserve">${xml(text)}</w:t></w:r>`;

/** A real .docx: content types, relationships, heading styles, a bullet numbering, the body. */
async function buildDocx(blocks) {
  const body = blocks
    .map((b) => {
      if (typeof b === 'string') return `<w:p>${run(b)}</w:p>`;
      if (b.heading) return `<w:p><w:pPr><w:pStyle w:val="Heading${b.heading}"/></w:pPr>${run(b.text)}</w:p>`;
      if (b.list) return b.list.map((item) => `<w:p><w:pPr><w:numPr><w:ilvl w:val="0"/><w:numId w:val="1"/></w:numPr></w:pPr>${run(item)}</w:p>`).join('');
      return `<w:tbl>${b.table.map((r) => `<w:tr>${r.map((c) => `<w:tc><w:p>${run(c)}</w:p></w:tc>`).join('')}</w:tr>`).join('')}</w:tbl>`;
    })
    .join('');
  const zip = new JSZip();
  const rel = 'http://schemas.openxmlformats.org/officeDocument/2006/relationships';
  zip.file(
    '[Content_Types].xml',
    '<?xml version="1.0" encoding="UTF-8"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"><Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/><Default Extension="xml" ContentType="application/xml"/><Override PartName="/word/document.xml" ContentType="application/vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml"/><Override PartName="/word/styles.xml" ContentType="application/vnd.openxmlformats-officedocument.wordprocessingml.styles+xml"/><Override PartName="/word/numbering.xml" ContentType="application/vnd.openxmlformats-officedocument.wordprocessingml.numbering+xml"/></Types>',
  );
  zip.file('_rels/.rels', `<?xml version="1.0" encoding="UTF-8"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="${rel}/officeDocument" Target="word/document.xml"/></Relationships>`);
  zip.file(
    'word/_rels/document.xml.rels',
    `<?xml version="1.0" encoding="UTF-8"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="${rel}/styles" Target="styles.xml"/><Relationship Id="rId2" Type="${rel}/numbering" Target="numbering.xml"/></Relationships>`,
  );
  const styles = [1, 2, 3].map((n) => `<w:style w:type="paragraph" w:styleId="Heading${n}"><w:name w:val="heading ${n}"/></w:style>`).join('');
  zip.file('word/styles.xml', `<?xml version="1.0" encoding="UTF-8"?><w:styles ${W}>${styles}</w:styles>`);
  zip.file(
    'word/numbering.xml',
    `<?xml version="1.0" encoding="UTF-8"?><w:numbering ${W}><w:abstractNum w:abstractNumId="0"><w:lvl w:ilvl="0"><w:numFmt w:val="bullet"/><w:lvlText w:val="•"/></w:lvl></w:abstractNum><w:num w:numId="1"><w:abstractNumId w:val="0"/></w:num></w:numbering>`,
  );
  zip.file('word/document.xml', `<?xml version="1.0" encoding="UTF-8"?><w:document ${W}><w:body>${body}</w:body></w:document>`);
  return zip.generateAsync({ type: 'nodebuffer' });
}

/** RFC 4180 rows (quoted fields may hold commas). */
function parseCsv(text) {
  const rows = [];
  for (const line of text.split('\n').filter((l) => l.trim())) {
    const row = [];
    for (const m of line.matchAll(/(?:^|,)(?:"((?:[^"]|"")*)"|([^,]*))/g)) row.push((m[1] ?? m[2] ?? '').replace(/""/g, '"'));
    rows.push(row);
  }
  return rows;
}

/**
 * Blocks of a Markdown file as a reader should see them: paragraphs with
 * their line breaks as spaces, each list item, each heading, each table row.
 */
function markdownBlocks(text) {
  const blocks = [];
  for (const part of text.split(/\n\s*\n/)) {
    const lines = part.split('\n');
    if (lines[0].startsWith('|')) blocks.push(...lines);
    else if (/^(\d+\.|-) /.test(lines[0])) {
      for (const line of lines) {
        if (/^(\d+\.|-) /.test(line)) blocks.push(line);
        else blocks[blocks.length - 1] += ' ' + line.trim();
      }
    } else blocks.push(unwrap(lines));
  }
  return blocks;
}

/** Lines of one paragraph as one: a space between them, none between two CJK characters. */
function unwrap(lines) {
  return lines.map((l) => l.trim()).reduce((a, b) => (a && /[\p{Script=Han}。，、；：！？]$/u.test(a) && /^\p{Script=Han}/u.test(b) ? a + b : a ? `${a} ${b}` : b), '');
}

/** The documents as uploaded (name, bytes) and the blocks of their text. */
export async function loadDocuments() {
  const docs = [];
  for (const name of ['kbchat-guide.md', 'field-station.md', 'faq-zh.md', 'relay-notes.md']) {
    const text = readFileSync(here(name), 'utf8');
    docs.push({ name, bytes: Buffer.from(text), blocks: markdownBlocks(text) });
  }
  const csv = readFileSync(here('products.csv'), 'utf8');
  const [header, ...rows] = parseCsv(csv);
  docs.push({ name: 'products.csv', bytes: Buffer.from(csv), blocks: rows.flatMap((r) => r.map((v, i) => (v ? `${header[i]}: ${v}` : '')).filter(Boolean)) });
  docs.push({ name: 'travel-policy.pdf', bytes: buildPdf(TRAVEL_POLICY), blocks: TRAVEL_POLICY.map((b) => (typeof b === 'string' ? b : b.heading)) });
  docs.push({
    name: 'onboarding.docx',
    bytes: await buildDocx(ONBOARDING),
    blocks: ONBOARDING.flatMap((b) => (typeof b === 'string' ? [b] : b.heading ? [b.text] : b.list ? b.list : b.table.map((r) => `| ${r.join(' | ')} |`))),
  });
  return docs;
}
