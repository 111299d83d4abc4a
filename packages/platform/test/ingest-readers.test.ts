import { describe, expect, it } from 'vitest';
import { detectFormat, htmlToMarkdown, parseCsv, readDocument } from '../src/ingest/index.js';
import { buildDocx, buildPdf, docx, rejection } from './ingest-fixtures.js';

describe('text files', () => {
  it('decodes UTF-8 and strips the BOM and CRLF', async () => {
    const data = Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from('héllo\r\nwörld', 'utf8')]);
    const r = await readDocument({ data, filename: 'a.txt' });
    expect(r).toEqual({ format: 'txt', text: 'héllo\nwörld' });
  });

  it('decodes UTF-16 LE and BE with a BOM, and LE without one', async () => {
    const text = 'Grüße, 世界\nline two';
    const le = Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from(text, 'utf16le')]);
    const be = Buffer.from(le);
    be.swap16();
    expect((await readDocument({ data: le, filename: 'le.txt' })).text).toBe(text);
    expect((await readDocument({ data: be, filename: 'be.txt' })).text).toBe(text);
    expect((await readDocument({ data: Buffer.from('plain ascii text', 'utf16le'), filename: 'x.txt' })).text).toBe('plain ascii text');
  });

  it('honours a declared charset and falls back to GB18030 for invalid UTF-8', async () => {
    const gbk = Buffer.from([0xc4, 0xe3, 0xba, 0xc3]); // 你好 in GBK
    expect((await readDocument({ data: gbk, filename: 'a.txt', mimeType: 'text/plain; charset=gbk' })).text).toBe('你好');
    expect((await readDocument({ data: gbk, filename: 'a.txt' })).text).toBe('你好');
  });

  it('keeps markdown as it is', async () => {
    const md = '# Title\n\n```js\nconst a = 1;\n```\n';
    expect(await readDocument({ data: Buffer.from(md), filename: 'README.MD' })).toEqual({ format: 'md', text: md.trim() });
  });

  it('refuses binary data named .txt', async () => {
    const err = await rejection(readDocument({ data: Buffer.from([0x89, 0x50, 0x4e, 0x47, 0, 0, 0, 13, 1, 2, 3, 0, 0]), filename: 'photo.txt' }));
    expect(err.code).toBe('corrupt_file');
    expect(err.message).toContain('photo.txt');
  });
});

describe('html', () => {
  const page = `<!doctype html><html><head><title>Widget &amp; Co manual</title><style>.x{color:red}</style>
    <script>alert("no")</script></head><body>
    <nav><a href="/">Home</a> | <a href="/about">About</a></nav>
    <h2>Install</h2><p>Run the   <b>installer</b> and then <a href="https://x.test/y">read the guide</a>.<br>Second line.</p>
    <ul><li>first</li><li>second<ul><li>nested</li></ul></li></ul>
    <ol start="3"><li>three</li><li>four</li></ol>
    <pre><code class="language-python">def f(x):
    return x | 1  # &lt;tag&gt;
</code></pre>
    <table><thead><tr><th>Name</th><th>Price</th></tr></thead>
      <tbody><tr><td>Bolt</td><td>1 | 2</td></tr><tr><td colspan="2">Total row</td></tr></tbody></table>
    <blockquote><p>Quoted words</p></blockquote>
    <p hidden>invisible</p><p>Use <code>npm ci</code> first.</p></body></html>`;

  it('turns structure into markdown and drops non-content', () => {
    const { text, title } = htmlToMarkdown(page);
    expect(title).toBe('Widget & Co manual');
    expect(text).toBe(
      [
        '# Widget & Co manual',
        '## Install',
        'Run the **installer** and then read the guide.\nSecond line.',
        '- first\n- second\n  - nested',
        '3. three\n4. four',
        '```python\ndef f(x):\n    return x | 1  # <tag>\n```',
        '| Name | Price |\n| --- | --- |\n| Bolt | 1 \\| 2 |\n| Total row |  |',
        '> Quoted words',
        'Use `npm ci` first.',
      ].join('\n\n'),
    );
    expect(text).not.toMatch(/alert|color:red|About|invisible/);
  });

  it('does not add the title as a heading when the page has its own h1', () => {
    expect(htmlToMarkdown('<title>T</title><h1>Real</h1><p>x</p>').text).toBe('# Real\n\nx');
  });

  it('refuses absurd nesting quickly with a typed error, and converts deep but sane trees', async () => {
    const nested = (n: number) => '<div>'.repeat(n) + 'deep text' + '</div>'.repeat(n);
    const t0 = performance.now();
    const err = await rejection(readDocument({ data: Buffer.from(nested(100_000)), filename: 'deep.html' })); // htmlparser2 alone: ~7 s
    expect(performance.now() - t0).toBeLessThan(2000);
    expect(err.code).toBe('corrupt_file');
    expect(err.message).toMatch(/^deep\.html: elements nest more than 6000 levels deep/);
    expect((await readDocument({ data: Buffer.from(nested(1400)), filename: 'ok.html' })).text).toBe('deep text');
    // Sloppy markup that the parser nests (an unclosed <p> inside each <li>): clear refusal past the limit.
    const sloppy = (n: number) => '<ul>' + '<li><p>item'.repeat(n) + '</ul><script>for (let i=0;i<n;i++) { a<b }</script>';
    expect((await readDocument({ data: Buffer.from(sloppy(300)), filename: 's.html' })).text).toContain('item');
    const tooDeep = await rejection(readDocument({ data: Buffer.from(sloppy(3000)), filename: 'sloppy.html' }));
    expect(tooDeep.message).toMatch(/sloppy\.html: elements nest \d+ levels deep \(the limit is 1500\).*unclosed tags/);
  });

  it('reads .html files in their meta charset', async () => {
    const html = Buffer.concat([
      Buffer.from('<html><head><meta charset="windows-1252"></head><body><p>caf'),
      Buffer.from([0xe9]),
      Buffer.from('</p></body></html>'),
    ]);
    expect((await readDocument({ data: html, filename: 'p.htm' })).text).toBe('café');
  });
});

describe('csv', () => {
  const csv = 'name,notes,"price, EUR"\r\n"Smith, J.","said ""hi""\nthen left",3\nDoe,,4\n\n';

  it('parses quotes, doubled quotes, delimiters and newlines inside fields', () => {
    expect(parseCsv(csv)).toEqual([
      ['name', 'notes', 'price, EUR'],
      ['Smith, J.', 'said "hi"\nthen left', '3'],
      ['Doe', '', '4'],
    ]);
    expect(parseCsv('a;b\n1;2')).toEqual([
      ['a', 'b'],
      ['1', '2'],
    ]);
  });

  it('renders one "header: value" block per row', async () => {
    const r = await readDocument({ data: Buffer.from(csv), filename: 'people.csv' });
    expect(r.format).toBe('csv');
    expect(r.text).toBe('name: Smith, J.\nnotes: said "hi"\n    then left\nprice, EUR: 3\n\nname: Doe\nprice, EUR: 4');
  });

  it('reads .tsv with tabs and escapes a header that looks like a heading', async () => {
    const r = await readDocument({ data: Buffer.from('# of items\tname\n3\tbolts\n'), filename: 'x.tsv' });
    expect(r.text).toBe('\\# of items: 3\nname: bolts');
  });
});

describe('docx', () => {
  it('keeps headings, paragraphs and tables', async () => {
    const data = await buildDocx(
      docx.heading(1, 'Handbook') +
        docx.para('Welcome to the handbook.') +
        docx.heading(2, 'Prices') +
        docx.table([
          ['Item', 'Cost'],
          ['Tea', '2'],
        ]),
    );
    const r = await readDocument({ data, filename: 'handbook.docx' });
    expect(r).toEqual({ format: 'docx', text: '# Handbook\n\nWelcome to the handbook.\n\n## Prices\n\n| Item | Cost |\n| --- | --- |\n| Tea | 2 |' });
  });

  it('refuses a corrupt .docx with a typed error', async () => {
    const err = await rejection(readDocument({ data: Buffer.from('PK\u0003\u0004 this is not a zip'), filename: 'broken.docx' }));
    expect(err.code).toBe('corrupt_file');
    expect(err.status).toBe(422);
    expect(err.message).toContain('broken.docx');
  });
});

describe('pdf', () => {
  it('reads pages in order, joins hyphenated words and keeps paragraphs', async () => {
    const data = buildPdf(
      [
        [
          [72, 700, 'The quick brown fox is an exam-'],
          [72, 686, 'ple of a sentence (with parens).'],
          [72, 640, 'A second paragraph.'],
        ],
        [[72, 700, 'Page two text.']],
      ],
      { title: 'Fox Facts' },
    );
    const r = await readDocument({ data, filename: 'fox.pdf' });
    expect(r.format).toBe('pdf');
    expect(r.pages).toEqual(['The quick brown fox is an example of a sentence (with parens).\n\nA second paragraph.', 'Page two text.']);
    expect(r.text).toBe(`${r.pages![0]}\n\n${r.pages![1]}`);
    expect(r.title).toBe('Fox Facts');
  });

  it('keeps the hyphen of a word broken before a capitalised line, with no space', async () => {
    const r = await readDocument({
      data: buildPdf([
        [
          [72, 700, 'Made by Jean-'],
          [72, 686, 'Paul'],
        ],
      ]),
      filename: 'a.pdf',
    });
    expect(r.text).toBe('Made by Jean-Paul');
  });

  it('enforces the page cap', async () => {
    const data = buildPdf([[[72, 700, 'one']], [[72, 700, 'two']], [[72, 700, 'three']]]);
    const err = await rejection(readDocument({ data, filename: 'long.pdf' }, { maxPages: 2 }));
    expect(err.code).toBe('too_many_pages');
    expect(err.status).toBe(413);
    expect(err.message).toMatch(/long\.pdf has 3 pages; the limit is 2/);
  });

  it('refuses corrupt and textless PDFs with typed errors', async () => {
    expect((await rejection(readDocument({ data: Buffer.from('%PDF-1.4\ngarbage'), filename: 'bad.pdf' }))).code).toBe('corrupt_file');
    expect((await rejection(readDocument({ data: Buffer.from('hello'), filename: 'fake.pdf' }))).code).toBe('corrupt_file');
    expect((await rejection(readDocument({ data: buildPdf([[]]), filename: 'scan.pdf' }))).code).toBe('empty_document');
  });
});

describe('type detection and caps', () => {
  it('names the unsupported type in a 400', async () => {
    const err = await rejection(readDocument({ data: Buffer.from('x'), filename: 'sheet.xls' }));
    expect(err).toMatchObject({ code: 'unsupported_file_type', status: 400 });
    expect(err.message).toContain('.xls files are not supported (save it as .xlsx first)');
    const noExt = await rejection(readDocument({ data: Buffer.from([1, 2, 3]), filename: 'blob', mimeType: 'video/mp4' }));
    expect(noExt.message).toContain('files of type video/mp4');
  });

  it('falls back to the mime type, then to the bytes', () => {
    expect(detectFormat({ data: Buffer.from('x'), filename: 'upload', mimeType: 'text/markdown' })).toBe('md');
    expect(detectFormat({ data: buildPdf([[[72, 700, 'x']]]), filename: 'upload', mimeType: 'application/octet-stream' })).toBe('pdf');
  });

  it('enforces the size cap before parsing', async () => {
    const err = await rejection(readDocument({ data: Buffer.alloc(2048, 0x61), filename: 'big.txt' }, { maxBytes: 1024 }));
    expect(err).toMatchObject({ code: 'file_too_large', status: 413 });
    expect(err.message).toContain('big.txt');
  });
});
