// Real documents in, right answers out (issue 29, item 9): documents of each
// kind kbchat reads for structure (a workbook, a presentation, a PDF with a
// table, a CSV, a 50-page scan read with OCR) made with real writer libraries
// (the scan: text drawn on a canvas, placed on PDF pages as images), each uploaded into its own
// knowledge base on `kbchat start` with no provider key (local-embed,
// local-extractive), and questions whose answers are known asked through an
// application on each. Printed per kind: the share of answers with the
// expected fact, the indexing time (upload to indexed) per page, sheet or
// slide, the kbchat process's peak resident memory (VmHWM) after each kind
// was indexed, and the most its resident memory rose above what it was just
// before the upload while the kind was read and indexed. No baseline: the kinds are new; the numbers go to
// docs/benchmarks.md ("Documents") to compare later runs with.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createCanvas } from '@napi-rs/canvas';
import ExcelJS from 'exceljs';
import PDFDocument from 'pdfkit';
import PptxGenJS from 'pptxgenjs';
import { startKbchat } from './kbchat-process.mjs';
import { client } from './platform-api.mjs';
import { status } from './proc-memory.mjs';

const KEY = 'kbchat-documents-bench-key-0123456789';
const ROUTES = [
  ['Holmsund', '07:40', '08:25', '4.50'],
  ['Norrby', '09:15', '10:05', '6.00'],
  ['Lillö', '11:30', '11:55', '3.20'],
  ['Storskär', '13:45', '15:10', '9.80'],
  ['Västerhamn', '16:20', '17:00', '5.40'],
  ['Östergrund', '18:05', '19:30', '8.70'],
];

async function workbook() {
  const wb = new ExcelJS.Workbook();
  const times = wb.addWorksheet('Timetable');
  times.addRow(['Island ferry timetable, summer']);
  times.addRow(['Route', 'Departs', 'Arrives', 'Adult fare']);
  for (const r of ROUTES) times.addRow(r);
  const staff = wb.addWorksheet('Staff');
  staff.addRow(['Name', 'Role', 'Phone']);
  staff.addRow(['Maja Lind', 'Harbour master', '+46 70 111 22 33']);
  staff.addRow(['Oskar Berg', 'Ticket office', '+46 70 444 55 66']);
  return { name: 'ferries.xlsx', bytes: Buffer.from(await wb.xlsx.writeBuffer()), units: 2, unit: 'sheet' };
}

async function presentation() {
  const pptx = new PptxGenJS();
  pptx.defineSlideMaster({ title: 'T', objects: [{ placeholder: { options: { name: 'title', type: 'title', x: 0.5, y: 0.2, w: 9, h: 1 }, text: '' } }] });
  const slides = [
    ['Opening hours', 'The visitor centre opens at 09:00 and closes at 17:30 from May to September.', 'Winter opening is on weekends only.'],
    ['Guided walks', 'Guided walks to the lighthouse start at 11:00 and take two hours.', 'Boots are lent free of charge.'],
    ['Bird season', 'The eider ducks nest on the outer skerries from April to June.', 'Landing on the outer skerries is forbidden while they nest.'],
    ['Cabins', 'The six cabins each sleep four guests and cost 950 kronor a night.', 'Bed linen is 120 kronor extra.'],
  ];
  for (const [title, text, notes] of slides) {
    const s = pptx.addSlide({ masterName: 'T' });
    s.addText(title, { placeholder: 'title' });
    s.addText(text, { x: 0.5, y: 1.5, w: 9, h: 1.5 });
    s.addNotes(notes);
  }
  return { name: 'visitor-centre.pptx', bytes: await pptx.write({ outputType: 'nodebuffer' }), units: slides.length, unit: 'slide' };
}

async function reportPdf() {
  const doc = new PDFDocument({ size: 'A4', margins: { top: 72, bottom: 72, left: 72, right: 72 } });
  const parts = [];
  doc.on('data', (b) => parts.push(b));
  const ended = new Promise((done) => doc.on('end', done));
  doc.font('Helvetica').fontSize(11);
  doc.text('Fuel prices at the harbour, per litre, by grade.', 72, 72);
  const rows = [
    ['Grade', 'Member price', 'Guest price'],
    ['Diesel', '18.40', '19.90'],
    ['Petrol 95', '19.10', '20.60'],
    ['Alkylate', '27.50', '29.00'],
  ];
  rows.forEach((row, r) =>
    row.forEach((cell, c) =>
      c === 0
        ? doc.text(cell, 72, 110 + r * 18, { lineBreak: false })
        : doc.text(cell, 200 + (c - 1) * 120, 110 + r * 18, { width: 90, align: 'right', lineBreak: false }),
    ),
  );
  doc.text('The fuel pump is open from 08:00 to 20:00; pay at the ticket office outside those hours.', 72, 200, { width: 450 });
  doc.end();
  await ended;
  return { name: 'fuel.pdf', bytes: Buffer.concat(parts), units: 1, unit: 'page' };
}

function csv() {
  const rows = [
    ['Berth', 'Length (m)', 'Price per night'],
    ['A1', '8', '220'],
    ['A2', '10', '260'],
    ['B7', '14', '340'],
  ];
  return { name: 'berths.csv', bytes: Buffer.from(rows.map((r) => r.join(',')).join('\n')), units: 1, unit: 'file' };
}

/** 50 letter pages, each an image of printed lines (no text layer), a locker and its cabin on each. */
// English names: the OCR reads English and Chinese (OCR_LANGUAGES), and reads "Tärnan" as "Tarnan".
const CABINS = ['Tern', 'Gull', 'Eider', 'Auk', 'Skua', 'Cormorant', 'Puffin', 'Herring', 'Sprat', 'Pike'];
async function scanPdf() {
  const doc = new PDFDocument({ autoFirstPage: false });
  const parts = [];
  doc.on('data', (b) => parts.push(b));
  const ended = new Promise((done) => doc.on('end', done));
  for (let page = 1; page <= 50; page++) {
    const canvas = createCanvas(1275, 1650);
    const g = canvas.getContext('2d');
    g.fillStyle = '#fff';
    g.fillRect(0, 0, canvas.width, canvas.height);
    g.fillStyle = '#111';
    g.font = '30px "DejaVu Sans"';
    const lines = [
      `Key register, page ${page}.`,
      `Locker ${page * 3} holds the spare key of cabin ${CABINS[page % CABINS.length]} ${page}.`,
      `The key of cabin ${CABINS[page % CABINS.length]} ${page} was last checked on ${(page % 28) + 1} May.`,
    ];
    lines.forEach((line, i) => g.fillText(line, 120, 180 + i * 52));
    doc.addPage({ size: 'LETTER', margin: 0 });
    doc.image(canvas.toBuffer('image/png'), 0, 0, { width: 612, height: 792 });
  }
  doc.end();
  await ended;
  return { name: 'key-register-scan.pdf', bytes: Buffer.concat(parts), units: 50, unit: 'page' };
}

const KINDS = [
  {
    kind: 'xlsx',
    make: workbook,
    questions: [
      { q: 'When does the ferry to Norrby depart?', fact: '09:15' },
      { q: 'When does the Storskär ferry arrive?', fact: '15:10' },
      { q: 'What is the adult fare to Östergrund?', fact: '8.70' },
      { q: 'What is the adult fare to Lillö?', fact: '3.20' },
      { q: 'Who is the harbour master?', fact: 'Maja Lind' },
      { q: 'What is the phone number of the ticket office?', fact: '444 55 66' },
    ],
  },
  {
    kind: 'pptx',
    make: presentation,
    questions: [
      { q: 'When does the visitor centre close?', fact: '17:30' },
      { q: 'When do the guided walks to the lighthouse start?', fact: '11:00' },
      { q: 'When do the eider ducks nest?', fact: 'April to June' },
      { q: 'How much does a cabin cost per night?', fact: '950' },
      { q: 'Are boots lent for the guided walks?', fact: 'free of charge' },
    ],
  },
  {
    kind: 'pdf (table)',
    make: reportPdf,
    questions: [
      { q: 'What is the guest price of diesel?', fact: '19.90' },
      { q: 'What is the member price of alkylate?', fact: '27.50' },
      { q: 'When is the fuel pump open?', fact: '08:00 to 20:00' },
    ],
  },
  {
    kind: 'pdf (scan)',
    make: scanPdf,
    questions: [
      { q: 'Which locker holds the spare key of cabin Eider 12?', fact: '36' },
      { q: 'Which locker holds the spare key of cabin Herring 27?', fact: '81' },
      { q: 'Which cabin has its spare key in locker 120?', fact: 'Tern 40' },
      { q: 'When was the key of cabin Auk 43 last checked?', fact: '16 May' },
    ],
  },
  {
    kind: 'csv',
    make: csv,
    questions: [
      { q: 'How much is berth B7 per night?', fact: '340' },
      { q: 'How long is berth A2?', fact: '10' },
    ],
  },
];

const dataDir = mkdtempSync(join(tmpdir(), 'kbchat-documents-bench-'));
const kb = await startKbchat({ dataDir, key: KEY });
const api = client(kb.url, KEY);
const results = [];
try {
  for (const k of KINDS) {
    const doc = await k.make();
    const datasetId = await api('/api/core/dataset/create', { name: `documents bench ${k.kind}` });
    const idleKb = status(kb.pid)?.rss ?? 0;
    let peakKb = idleKb;
    const sampler = setInterval(() => (peakKb = Math.max(peakKb, status(kb.pid)?.rss ?? 0)), 100);
    const started = performance.now();
    const form = new FormData();
    form.append('data', JSON.stringify({ datasetId }));
    form.append('file', new Blob([doc.bytes]), doc.name);
    const res = await fetch(`${kb.url}/api/core/dataset/collection/create/localFile`, {
      method: 'POST',
      headers: { authorization: `Bearer ${KEY}` },
      body: form,
    });
    if (res.status !== 200) throw new Error(`upload of ${doc.name}: ${res.status} ${await res.text()}`);
    for (const until = Date.now() + 600_000; ;) {
      if (Date.now() > until) throw new Error(`${doc.name} was not indexed within 10 minutes`);
      const p = await api(`/api/core/dataset/trainingDetail?datasetId=${datasetId}`);
      if (p.failed) throw new Error(`indexing of ${doc.name} failed: ${p.lastError}`);
      if (p.total > 0 && p.done === p.total) break;
      await new Promise((r) => setTimeout(r, 100));
    }
    const indexedMs = performance.now() - started;
    clearInterval(sampler);
    const hwmKb = status(kb.pid)?.hwm ?? 0;
    const appId = await api('/api/core/app/create', { name: `documents ${k.kind}`, model: 'local-extractive', datasets: [datasetId] });
    const appKey = await api('/api/support/openapi/create', { name: 'bench', appId });
    const misses = [];
    for (const question of k.questions) {
      const r = await fetch(`${kb.url}/api/v1/chat/completions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${appKey}`, 'content-type': 'application/json' },
        body: JSON.stringify({ messages: [{ role: 'user', content: question.q }] }),
      });
      const body = await r.json();
      const answer = body.choices?.[0]?.message?.content ?? JSON.stringify(body);
      if (!answer.includes(question.fact)) misses.push({ ...question, answer });
    }
    results.push({ ...k, doc, indexedMs, hwmKb, aboveIdleKb: peakKb - idleKb, right: k.questions.length - misses.length, misses });
  }
} finally {
  await kb.stop();
  rmSync(dataDir, { recursive: true, force: true });
}

console.log('\nkind          right answers   indexing (upload to indexed)   peak RSS of kbchat after it   most above idle while read');
for (const r of results) {
  const perUnit = r.indexedMs / r.doc.units;
  console.log(
    `${r.kind.padEnd(13)} ${`${r.right}/${r.questions.length}`.padStart(5)} ${`(${((r.right / r.questions.length) * 100).toFixed(0)}%)`.padStart(7)}   ${`${(r.indexedMs / 1000).toFixed(2)} s, ${perUnit.toFixed(0)} ms per ${r.doc.unit}`.padEnd(30)} ${`${(r.hwmKb / 1024).toFixed(0)} MB`.padEnd(29)} ${(r.aboveIdleKb / 1024).toFixed(0)} MB`,
  );
  for (const m of r.misses) console.log(`    missed (${m.fact}): ${m.q}\n      -> ${m.answer.replace(/\n/g, ' ⏎ ')}`);
}
const all = results.reduce((n, r) => n + r.questions.length, 0);
const right = results.reduce((n, r) => n + r.right, 0);
console.log(`\nall kinds: ${right}/${all} right (${((right / all) * 100).toFixed(0)}%)`);
