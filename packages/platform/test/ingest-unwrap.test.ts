// The readers' rules for line breaks inside paragraphs, one at a time, through
// readDocument on real bytes (.md, .txt) and pdf.ts's line assembly.
import { describe, expect, it } from 'vitest';
import { readDocument } from '../src/ingest/index.js';
import { pageItemsToText, type PdfTextItem } from '../src/ingest/readers/pdf.js';

const read = async (text: string, filename: string) => (await readDocument({ data: Buffer.from(text), filename })).text;
const md = (text: string) => read(text, 'notes.md');
const txt = (text: string) => read(text, 'notes.txt');

describe('markdown', () => {
  it('joins a paragraph wrapped at 80 columns into one line; blank lines still separate paragraphs', async () => {
    const text = [
      'kbchat is a self-hosted platform for chat applications over knowledge bases,',
      'with its own model gateway in front of the models it uses. This file is the',
      'picture of the whole.',
      '',
      'A second paragraph',
      '   with an indented continuation line.',
    ].join('\n');
    expect(await md(text)).toBe(
      'kbchat is a self-hosted platform for chat applications over knowledge bases, with its own model gateway in front of the models it uses. This file is the picture of the whole.\n\n' +
        'A second paragraph with an indented continuation line.',
    );
  });

  it('keeps hard breaks (two trailing spaces, a backslash) as line breaks, without their markers', async () => {
    expect(await md('Ops team  \nBuilding 4\\\nRoom 210\nsecond floor')).toBe('Ops team\nBuilding 4\nRoom 210 second floor');
    expect(await md('A path ends in a backslash C:\\')).toBe('A path ends in a backslash C:\\'); // the last line: no break to keep
  });

  it('keeps ATX headings and turns setext headings into ATX ones', async () => {
    expect(await md('# Title\n\nBody\ntext.\n\nSection two\nwrapped\n-----------\n\nMore.')).toBe('# Title\n\nBody text.\n\n## Section two wrapped\n\nMore.');
  });

  it('joins a list item with its wrapped lines, keeping markers, numbers, nesting and tasks', async () => {
    const text = [
      'Steps:',
      '- **Upstream keys** are sealed with AES-256-GCM under `GATEWAY_SECRET_KEY` (or a',
      '  random key kept in the data dir); passwords with scrypt.',
      '  - a nested item',
      '    that wraps too',
      '- [ ] a task that',
      '  wraps',
      '- lazy item',
      'continuation',
      '',
      '3. third',
      '   step',
      '4. fourth',
    ].join('\n');
    expect(await md(text)).toBe(
      [
        'Steps:',
        '- **Upstream keys** are sealed with AES-256-GCM under `GATEWAY_SECRET_KEY` (or a random key kept in the data dir); passwords with scrypt.',
        '  - a nested item that wraps too',
        '- [ ] a task that wraps',
        '- lazy item continuation',
        '',
        '3. third step',
        '4. fourth',
      ].join('\n'),
    );
  });

  it('keeps a loose list loose and code inside an item as code', async () => {
    const text = '1. first item\n   wrapped\n\n   ```sh\n   npm ci\n   npm test\n   ```\n\n2. second';
    expect(await md(text)).toBe('1. first item wrapped\n\n   ```sh\n   npm ci\n   npm test\n   ```\n\n2. second');
  });

  it('joins a block quote inside the quote, lazy lines included', async () => {
    expect(await md('> The indexing worker stalled\n> for ten minutes\nwhile the upstream answered 429.\n>\n> It resumed.')).toBe(
      '> The indexing worker stalled for ten minutes while the upstream answered 429.\n>\n> It resumed.',
    );
  });

  it('leaves fenced and indented code, tables and HTML blocks exactly as written', async () => {
    const code = '```js\nconst a =\n  1;\n```';
    const indented = '    npm run\n    bench';
    const table = '| a | b |\n|---|---|\n| one\n| two |';
    const html = '<div>\nkept\nas is\n</div>';
    const text = ['Intro\nline.', code, indented, table, html].join('\n\n');
    expect(await md(text)).toBe(['Intro line.', code, indented, table, html].join('\n\n'));
  });

  it('reads Windows and old Mac line ends as line breaks', async () => {
    const unix = '# T\n\nwrapped\nparagraph\n\n- item\n  more';
    expect(await md(unix.replace(/\n/g, '\r\n'))).toBe('# T\n\nwrapped paragraph\n\n- item more');
    expect(await md(unix.replace(/\n/g, '\r'))).toBe('# T\n\nwrapped paragraph\n\n- item more');
  });
});

describe('hyphens at a line end', () => {
  it('keeps a real hyphen and joins with no space: the next line continues the word', async () => {
    expect(await md('sealed with AES-256-\nGCM under a key')).toBe('sealed with AES-256-GCM under a key');
    expect(await md('Made by Jean-\nPaul')).toBe('Made by Jean-Paul');
    // No evidence either way and the document does not hyphenate: the hyphen stays.
    expect(await md('the local-\nembed model')).toBe('the local-embed model');
  });

  it('follows the document: a word it writes whole loses the hyphen, a hyphenated one keeps it', async () => {
    expect(await md('An exam-\nple.\n\nThis example is whole.')).toBe('An example.\n\nThis example is whole.');
    expect(await txt('The re-\nsolver and the re-solver differ.')).toBe('The re-solver and the re-solver differ.');
  });

  it('drops the hyphens of a text out of a typesetter: two splits whose second parts are no words', async () => {
    const pasted =
      "Text copied out of a PDF keeps the typesetter's hyphen-\nation, as in this exam-\nple, and a com-\npound such as read-\nonly is only read once.";
    expect(await txt(pasted)).toBe(
      "Text copied out of a PDF keeps the typesetter's hyphenation, as in this example, and a compound such as read-only is only read once.",
    );
  });

  it("drops typesetters' hyphens in a document that hyphenates (second parts that are no words)", async () => {
    const items = (lines: string[]) => lines.map((str, i) => ({ str, transform: [1, 0, 0, 1, 72, 700 - 14 * i], width: 480, height: 12 }));
    expect(pageItemsToText(items(['The quick brown fox is an exam-', 'ple of a sentence; hyphen-', 'ation is common in such docu-', 'ments.']))).toBe(
      'The quick brown fox is an example of a sentence; hyphenation is common in such documents.',
    );
    // Word and browsers break only at hyphens that are there: the second parts are words of the document.
    expect(pageItemsToText(items(['A read-', 'only copy of the local-', 'embed model; only embed text.']))).toBe(
      'A read-only copy of the local-embed model; only embed text.',
    );
  });

  it('does not take a dash or a list marker for a broken word', async () => {
    expect(await md('pre- and\npost-processing -\nboth')).toBe('pre- and post-processing - both');
    expect(await md('Steps-\n- one')).toBe('Steps-\n- one');
    expect(await md('a soft hy\u00ad\nphen')).toBe('a soft hyphen');
  });
});

describe('CJK', () => {
  it('joins lines between CJK characters with no space, and with a space next to Latin or Hangul', async () => {
    expect(await md('本文是一个中文段落，它被编辑器\n按照固定宽度折行。第二句话\n也一样。')).toBe(
      '本文是一个中文段落，它被编辑器按照固定宽度折行。第二句话也一样。',
    );
    expect(await md('これは日本語の文章で、\n途中で改行されています。')).toBe('これは日本語の文章で、途中で改行されています。');
    expect(await md('密钥使用\nAES-256-GCM 加密')).toBe('密钥使用 AES-256-GCM 加密');
    expect(await md('한국어 문장은\n띄어쓰기를 합니다.')).toBe('한국어 문장은 띄어쓰기를 합니다.');
  });

  it('unwraps CJK plain text wrapped at 30 characters (60 columns) and keeps short lines', async () => {
    const para = '知识库中的文档经常按照固定的宽度折行，这样在终端里阅读比较方便。但是对于检索和回答问题来说，每一个换行都不是句子的结束，应该合并成一个段落。';
    const lines = para.match(/.{1,30}/gu)!;
    expect(lines.length).toBeGreaterThan(2);
    expect(await txt(`${lines.join('\n')}\n\n联系人：\n运维组\n四号楼`)).toBe(`${para}\n\n联系人：\n运维组\n四号楼`);
  });

  it('joins CJK PDF lines with no space', () => {
    const items: PdfTextItem[] = ['知识库中的文档经常按照固定的宽度折行，', '这样在终端里阅读比较方便。'].map((str, i) => ({
      str,
      transform: [1, 0, 0, 1, 72, 700 - 16 * i],
      width: i === 0 ? 456 : 312,
      height: 12,
    }));
    expect(pageItemsToText(items)).toBe('知识库中的文档经常按照固定的宽度折行，这样在终端里阅读比较方便。');
  });
});

describe('plain text', () => {
  const wrap = (text: string, width: number) => {
    const lines: string[] = [];
    let line = '';
    for (const word of text.split(' ')) {
      if (line && line.length + 1 + word.length > width) {
        lines.push(line);
        line = word;
      } else line = line ? `${line} ${word}` : word;
    }
    return [...lines, line].join('\n');
  };
  const prose =
    'The indexing worker takes leased batches from the training queue, embeds them through the gateway and writes the vectors with the chunks. ' +
    'A batch the gateway refuses with 429 pauses the worker for the time the answer asks, and every item keeps its reason when it fails.';

  it('joins prose wrapped at 72 columns, with Windows line ends', async () => {
    const wrapped = `${wrap(prose, 72)}\n\n${wrap(prose, 72)}`;
    expect(wrapped.split('\n').length).toBeGreaterThan(6);
    expect(await txt(wrapped.replace(/\n/g, '\r\n'))).toBe(`${prose}\n\n${prose}`);
  });

  it('joins a list item with its hanging-indented lines and keeps items apart', async () => {
    const text = `Before an upgrade:\n${wrap(`- ${prose}`, 72).replace(/\n/g, '\n  ')}\n- Start both services again.`;
    expect(await txt(text)).toBe(`Before an upgrade:\n- ${prose}\n- Start both services again.`);
  });

  it('keeps a log, an address, aligned columns and short lines as lines', async () => {
    const log = Array.from(
      { length: 40 },
      (_, i) => `2024-05-01T12:${String(i).padStart(2, '0')}:00Z INFO ${'request served '.repeat(1 + (i % 9)).trim()}`,
    ).join('\n');
    expect(await txt(log)).toBe(log);
    const rest =
      'Ops team\nBuilding 4, Room 210\nops@example.test\n\nService      Port    Store\nplatform     3000    PGlite in ./data\ngateway      3001    PGlite in ./data/gateway';
    expect(await txt(`${wrap(prose, 72)}\n\n${rest}`)).toBe(`${prose}\n\n${rest}`);
  });

  it('joins quoted mail lines inside the quote and never across quote depths', async () => {
    const quoted = wrap(prose, 70)
      .split('\n')
      .map((l) => `> ${l}`)
      .join('\n');
    expect(await txt(`${quoted}\n>> ${prose.slice(0, 60)}`)).toBe(`> ${prose}\n>> ${prose.slice(0, 60)}`);
  });
});

describe('big and hostile files', () => {
  const timed = async (text: string, filename: string) => {
    const t0 = performance.now();
    const out = await read(text, filename);
    return { out, ms: performance.now() - t0 };
  };

  it('leaves Markdown that would make the lexer quadratic as written, quickly', async () => {
    // marked reads a list item's lines again for each line: this one item alone would take about an hour.
    const oneItem = `- item${'\n  lorem ipsum dolor sit amet'.repeat(100_000)}`;
    const deep = Array.from({ length: 3000 }, (_, i) => `${' '.repeat(i * 2)}- item`).join('\n');
    const deepQuotes = `${'> '.repeat(200)}lorem ipsum dolor sit amet\n`.repeat(20_000); // 15 s, level by level
    for (const text of [oneItem, deep, deepQuotes]) {
      const { out, ms } = await timed(text, 'hostile.md');
      expect(out).toBe(text.trim());
      expect(ms).toBeLessThan(5000);
    }
  });

  it('joins a paragraph of 100,000 lines in linear time, in Markdown and plain text', async () => {
    const line = 'lorem ipsum dolor sit amet consectetur adipiscing elit sed do eiusmod tempor';
    const text = `- a list before it\n\n${`${line}\n`.repeat(100_000)}`;
    for (const filename of ['big.md', 'big.txt']) {
      const { out, ms } = await timed(text, filename);
      expect(out).toBe(`- a list before it\n\n${Array(100_000).fill(line).join(' ')}`);
      // Quadratic joins took minutes; linear ones take about a second, several on a loaded CI machine.
      expect(ms).toBeLessThan(20_000);
    }
  }, 60_000);
});
