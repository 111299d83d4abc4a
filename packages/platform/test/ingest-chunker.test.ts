import { countTextTokens, loadTokenizer } from '@kbchat/shared';
import { beforeAll, describe, expect, it } from 'vitest';
import { chunkMarkdown, type Chunk } from '../src/ingest/index.js';

beforeAll(() => loadTokenizer());

const noSpace = (s: string) => s.replace(/\s+/g, '');
/** Content of a chunk without its title prefix and without the repeated overlap. */
const fresh = (c: Chunk, prefixed: boolean) => {
  const body = prefixed && c.titlePath.length ? c.text.slice(c.titlePath.join('\n').length + 1) : c.text;
  expect(body.startsWith(c.overlap)).toBe(true);
  return body.slice(c.overlap.length);
};

function prose(n: number, seed = 1): string {
  const words = ['alpha', 'bravo', 'charlie', 'delta', 'echo', 'foxtrot', 'golf', 'hotel', 'india', 'juliet', 'kilo', 'lima'];
  const out: string[] = [];
  let x = seed;
  for (let s = 0; s < n; s++) {
    const len = 5 + (s % 7);
    const sentence: string[] = [];
    for (let w = 0; w < len; w++) {
      x = (x * 1103515245 + 12345) % 2147483648;
      sentence.push(words[x % words.length] + (w === 0 ? String(s) : ''));
    }
    out.push(sentence.join(' ') + '.');
  }
  return out.join(' ');
}

function assertSizes(chunks: Chunk[], chunkSize: number) {
  chunks.forEach((c, i) => {
    expect(c.index).toBe(i);
    expect(c.tokens).toBe(countTextTokens(c.text));
    expect(c.tokens).toBeLessThanOrEqual(chunkSize);
  });
}

describe('chunkMarkdown', () => {
  it('carries the heading path and prefixes it', async () => {
    const md = '# Guide\n\nIntro text.\n\n## Install\n\nRun it.\n\n### Linux\n\nUse apt.\n\n## Use\n\nCall it.';
    const chunks = await chunkMarkdown(md, { chunkSize: 100 });
    expect(chunks.map((c) => [c.titlePath, c.text])).toEqual([
      [['# Guide'], '# Guide\nIntro text.'],
      [['# Guide', '## Install'], '# Guide\n## Install\nRun it.'],
      [['# Guide', '## Install', '### Linux'], '# Guide\n## Install\n### Linux\nUse apt.'],
      [['# Guide', '## Use'], '# Guide\n## Use\nCall it.'],
    ]);
  });

  it('without prefixTitle keeps heading lines in the body and merges heading-only sections', async () => {
    const chunks = await chunkMarkdown('# A\n\n## B\n\nBody of B.\n\n## C\n\nBody of C.', { chunkSize: 100, prefixTitle: false });
    expect(chunks.map((c) => [c.titlePath, c.text])).toEqual([
      [['# A', '## B'], '# A\n\n## B\n\nBody of B.'],
      [['# A', '## C'], '## C\n\nBody of C.'],
    ]);
  });

  it('keeps a code block whole when it fits, even if it moves to the next chunk', async () => {
    const code = '```ts\n' + Array.from({ length: 8 }, (_, i) => `const v${i} = compute(${i}); // step ${i}`).join('\n') + '\n```';
    const md = `${prose(6)}\n\n${code}\n\n${prose(2, 7)}`;
    expect(countTextTokens(code)).toBeLessThan(120);
    const chunks = await chunkMarkdown(md, { chunkSize: 128, overlap: 0 });
    expect(chunks.length).toBeGreaterThan(1);
    expect(chunks.filter((c) => c.text.includes(code))).toHaveLength(1);
    assertSizes(chunks, 128);
  });

  it('splits an oversized code block by lines, re-fencing every piece', async () => {
    const lines = Array.from({ length: 60 }, (_, i) => `print("line ${i}")`);
    const chunks = await chunkMarkdown('```python\n' + lines.join('\n') + '\n```', { chunkSize: 64 });
    expect(chunks.length).toBeGreaterThan(3);
    for (const c of chunks) {
      expect(c.text.startsWith('```python\n') && c.text.endsWith('\n```')).toBe(true);
      expect(c.overlap).toBe(''); // never overlap into code
    }
    const seen = chunks.flatMap((c) => c.text.split('\n').slice(1, -1));
    expect(seen).toEqual(lines);
    assertSizes(chunks, 64);
  });

  it('splits a big table by rows, repeating the header row', async () => {
    const header = '| id | name | comment |\n| --- | --- | --- |';
    const rows = Array.from({ length: 40 }, (_, i) => `| ${i} | item ${i} | note about item ${i} |`);
    const chunks = await chunkMarkdown(`Intro.\n\n${header}\n${rows.join('\n')}`, { chunkSize: 80 });
    const tableChunks = chunks.filter((c) => c.text.includes('| id |'));
    expect(tableChunks.length).toBeGreaterThan(2);
    const tables = tableChunks.map((c) => c.text.replace(/^Intro\.\n\n/, '')); // the intro may share the first chunk
    for (const t of tables) expect(t.startsWith(header + '\n')).toBe(true);
    expect(tables.flatMap((t) => t.split('\n').slice(2))).toEqual(rows);
    assertSizes(chunks, 80);
  });

  it('honours chunkSplitter first, then re-splits pieces over the size', async () => {
    const md = `Short one.\n###\nShort two.\n###\n${prose(40)}`;
    const plain = await chunkMarkdown(md.replace(/###/g, ''), { chunkSize: 64 });
    const split = await chunkMarkdown(md, { chunkSize: 64, chunkSplitter: '###' });
    expect(split[0].text).toBe('Short one.');
    expect(split[1].text).toBe('Short two.');
    expect(split.length).toBeGreaterThan(3);
    expect(plain[0].text.startsWith('Short one.\n\nShort two.')).toBe(true); // without the splitter they share a chunk
    assertSizes(split, 64);
    expect(split.some((c) => c.text.includes('###'))).toBe(false);
  });

  it('overlaps size-cut chunks with whole trailing sentences of the previous chunk', async () => {
    const chunks = await chunkMarkdown(prose(80), { chunkSize: 64, overlap: 20, prefixTitle: false });
    expect(chunks.length).toBeGreaterThan(5);
    expect(chunks[0].overlap).toBe('');
    for (let i = 1; i < chunks.length; i++) {
      const { overlap } = chunks[i];
      expect(overlap).not.toBe('');
      expect(countTextTokens(overlap)).toBeLessThanOrEqual(20);
      expect(overlap).toMatch(/^[a-z]+\d+ .*\.$/); // starts at a sentence (its first word carries the number) and ends with one
      expect(chunks[i - 1].text.endsWith(overlap)).toBe(true);
    }
    assertSizes(chunks, 64);
  });

  it('does not overlap across a heading', async () => {
    const chunks = await chunkMarkdown(`# One\n\n${prose(20)}\n\n# Two\n\n${prose(3, 5)}`, { chunkSize: 64, overlap: 20 });
    const firstOfTwo = chunks.find((c) => c.titlePath[0] === '# Two')!;
    expect(firstOfTwo.overlap).toBe('');
    expect(
      chunks
        .filter((c) => c.titlePath[0] === '# One')
        .slice(1)
        .every((c) => c.overlap !== ''),
    ).toBe(true);
  });

  it('keeps a list marker with its text when a long item is cut at sentences or words', async () => {
    // Unwrapped list items are long lines: "4." is a sentence and "-" a word to the splitters.
    const md = `1. ${prose(12)}\n2. ${prose(9, 2)}\n- ${'word '.repeat(120).trim()}`;
    const chunks = await chunkMarkdown(md, { chunkSize: 32, overlap: 0, prefixTitle: false });
    assertSizes(chunks, 32);
    expect(chunks.filter((c) => /(^|\n)\s*(\d+\.|-)$/.test(c.text))).toEqual([]);
    for (const start of [/(^|\n)1\. [a-z]+0 /, /(^|\n)2\. [a-z]+0 /, /(^|\n)- word word/]) expect(chunks.some((c) => start.test(c.text))).toBe(true);
  });

  it('loses no text: chunk contents without overlap rebuild the input', async () => {
    const longWord = 'QmFzZTY0'.repeat(300); // 2400 chars, no whitespace
    const md = [
      '# Title',
      prose(30),
      '## Section with a list',
      '- one item\n- two items\n  continued',
      '中文句子没有空格。'.repeat(60),
      longWord,
      '### Deep',
      prose(12, 3),
    ].join('\n\n');
    for (const [chunkSize, overlap] of [
      [16, 0],
      [40, 6],
      [128, 15],
      [512, 60],
    ]) {
      const chunks = await chunkMarkdown(md, { chunkSize, overlap, prefixTitle: false });
      assertSizes(chunks, chunkSize);
      expect(noSpace(chunks.map((c) => fresh(c, false)).join(''))).toBe(noSpace(md));
    }
  });

  it('with title prefixes, every word still appears, tables and code included', async () => {
    const md = `# Doc\n\n${prose(25)}\n\n## Data\n\n| a | b |\n| - | - |\n${Array.from({ length: 30 }, (_, i) => `| r${i} | v${i} |`).join('\n')}\n\n\`\`\`\n${Array.from({ length: 30 }, (_, i) => `code${i}();`).join('\n')}\n\`\`\``;
    const chunks = await chunkMarkdown(md, { chunkSize: 48 });
    assertSizes(chunks, 48);
    const all = chunks.map((c) => c.text).join('\n');
    for (const word of md.split(/\s+/)) expect(all).toContain(word);
  });

  it('the indivisible unit is one code point: a long run is cut, never left oversized', async () => {
    const emoji = '😀'.repeat(50);
    const chunks = await chunkMarkdown(`${'x'.repeat(3000)}${emoji}`, { chunkSize: 16, overlap: 0 });
    assertSizes(chunks, 16);
    expect(chunks.map((c) => c.text).join('')).toBe(`${'x'.repeat(3000)}${emoji}`);
    expect(chunks.every((c) => !/[\ud800-\udbff]$/.test(c.text))).toBe(true); // no surrogate pair cut in half
  });

  it('stays linear on a huge run without whitespace or punctuation (the tokenizer alone is quadratic there)', async () => {
    const run = '这是一个测试句子用于检查中文分块'.repeat(10_000); // 160k chars, one pre-token for o200k
    const t0 = performance.now();
    const chunks = await chunkMarkdown(run, { chunkSize: 256 });
    expect(performance.now() - t0).toBeLessThan(5000); // counting it whole would take minutes
    assertSizes(chunks, 256);
    expect(chunks.map((c) => c.text).join('')).toBe(run);
  });

  it('is deterministic and handles empty input', async () => {
    const md = `# X\n\n${prose(50)}`;
    expect(await chunkMarkdown(md, { chunkSize: 50 })).toEqual(await chunkMarkdown(md, { chunkSize: 50 }));
    expect(await chunkMarkdown('  \n\n ')).toEqual([]);
  });

  it('chunks 1 MB of markdown quickly', async () => {
    const sections: string[] = [];
    let i = 0;
    while (sections.join('\n\n').length < 1_000_000) {
      sections.push(`## Section ${i}\n\n${prose(12, i)}\n\n| k | v |\n| - | - |\n| a${i} | b${i} |\n\n\`\`\`js\nrun(${i});\n\`\`\`\n\n${prose(6, i + 1)}`);
      i++;
    }
    const md = `# Big\n\n${sections.join('\n\n')}`;
    const t0 = performance.now();
    const chunks = await chunkMarkdown(md, { chunkSize: 512 });
    const ms = performance.now() - t0;
    console.log(`chunked ${(md.length / 1e6).toFixed(2)} MB into ${chunks.length} chunks in ${ms.toFixed(0)} ms`);
    expect(chunks.length).toBeGreaterThan(100);
    assertSizes(chunks, 512);
    expect(ms).toBeLessThan(15_000);
  });
});
