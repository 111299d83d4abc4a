// A large text is read and chunked a section at a time (ingest/sections.ts,
// readers' decodedPieces, chunk-stream.ts): the sections end where blocks
// end, so the chunks are those of the whole text; a text with no block end
// is cut at a line end, a code fence open there closed and opened again; a
// file over IN_THREAD_MAX_BYTES is read and chunked in a worker thread, with
// the same chunks, its refusals as IngestErrors.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadTokenizer } from '@kbchat/shared';
import { beforeAll, describe, expect, it } from 'vitest';
import {
  chunkBatches,
  chunkMarkdownLoaded,
  countChunks,
  IN_THREAD_MAX_BYTES,
  isIngestError,
  readDocument,
  readDocumentText,
  SectionChunker,
  textSections,
  type Chunk,
} from '../src/ingest/index.js';
import { decodedPieces, textEncoding } from '../src/ingest/readers/text.js';
import { MAX_SECTION_FACTOR } from '../src/ingest/sections.js';

/** Markdown with headings, lists, tables and fences holding blank lines: the places a careless cut would break. */
function bigMarkdown(sections: number): string {
  const parts: string[] = [];
  for (let i = 0; i < sections; i++) {
    parts.push(
      `# Part ${i}`,
      `The keeper of part ${i} writes a long paragraph about the harbour, the tide tables and the ships that come in at night. It goes on for a while, so that chunks fill up.`,
      '```sh\n# a comment in a script, not a heading\necho one\n\necho two after a blank line\n```',
      `- item one of ${i}\n- item two of ${i}\n\n- item three after a blank line`,
      `| col | value |\n|---|---|\n| a | ${i} |\n| b | ${i * 2} |`,
      `## Notes ${i}`,
      `Closing words for part ${i}. They end the part.`,
    );
  }
  return parts.join('\n\n') + '\n';
}

const sectionChunks = (text: string, size: number): Chunk[] => {
  const chunker = new SectionChunker({ chunkSize: 64 });
  return [...textSections(text, { size })].flatMap((s) => chunker.push(s));
};

describe('reading and chunking a section at a time', () => {
  beforeAll(() => loadTokenizer());

  it('cuts only where a block ends, so that small sections make the chunks of the whole text', () => {
    const text = bigMarkdown(40);
    const sections = [...textSections(text, { size: 500 })];
    expect(sections.length).toBeGreaterThan(20);
    expect(sections.map((s) => s.text).join('')).toBe(text);
    // Every cut is after a blank line, and never inside the fence (its blank line included).
    for (const s of sections.slice(0, -1)) {
      expect(s.text.endsWith('\n\n')).toBe(true);
      expect((s.text.match(/^```/gm) ?? []).length % 2).toBe(0);
    }
    expect(sectionChunks(text, 500)).toEqual(chunkMarkdownLoaded(text, { chunkSize: 64 }));
    expect(sectionChunks(text, 500).map((c) => c.index)).toEqual(chunkMarkdownLoaded(text, { chunkSize: 64 }).map((_, i) => i));
  });

  it('keeps a chunkSplitter a hard boundary across sections', () => {
    const text = bigMarkdown(10).replace(/## Notes/g, '@@@\n## Notes');
    const chunker = new SectionChunker({ chunkSize: 64 });
    const streamed = [...textSections(text, { size: 300, splitter: '@@@' })].flatMap((s) => chunker.push(s));
    expect(streamed).toEqual(chunkMarkdownLoaded(text, { chunkSize: 64, chunkSplitter: '@@@' }));
  });

  it('cuts a text with no block end at a line end, closing and opening again a code fence open there', () => {
    const log = Array.from({ length: 4000 }, (_, i) => `2026-11-28 10:00:${String(i % 60).padStart(2, '0')} request ${i} served in ${i % 17} ms`).join('\n');
    const sections = [...textSections(log, { size: 50 })];
    expect(sections.length).toBeGreaterThan(10);
    expect(Math.max(...sections.map((s) => s.text.length))).toBeLessThan(50 * MAX_SECTION_FACTOR + 100);
    expect(sections.map((s) => s.text).join('')).toBe(log);
    const code = '```js\n' + Array.from({ length: 3000 }, (_, i) => `const line${i} = ${i};`).join('\n') + '\n```\n';
    const cut = [...textSections(code, { size: 50 })];
    expect(cut.length).toBeGreaterThan(5);
    for (const s of cut) {
      expect(s.text.startsWith('```js\n')).toBe(true);
      expect(s.text.trimEnd().endsWith('```')).toBe(true);
    }
    // Every line of code is in exactly one section.
    expect(
      cut
        .map((s) => s.text)
        .join('')
        .match(/const line\d+/g),
    ).toHaveLength(3000);
  });

  it('reads a text file in decoded pieces, a line ending split between pieces kept one', () => {
    const text = 'first line\r\nsecond line\rthird\r\n'.repeat(50);
    const bytes = Buffer.from(text);
    for (const size of [7, 13, 64]) expect([...decodedPieces(bytes, textEncoding(bytes), size)].join('')).toBe(text.replace(/\r\n?/g, '\n'));
    const gbk = new Uint8Array([0xc4, 0xe3, 0xba, 0xc3, 0x0a]); // 你好 in GB18030
    expect([...decodedPieces(gbk, textEncoding(gbk), 1)].join('')).toBe('你好\n');
  });

  it('reads Markdown and plain text a section at a time as it reads them whole', async () => {
    const md = Buffer.from(bigMarkdown(30).replace(/long paragraph about the harbour,/g, 'long paragraph about the\nharbour,'));
    const txt = Buffer.from(
      Array.from(
        { length: 300 },
        (_, i) =>
          `Paragraph ${i} is hard-wrapped at a narrow width as mail\nis, so that its lines join back into one when it is read,\nand the # sign inside it is no heading.\n# update-mime-database command. DO NOT EDIT!\n`,
      ).join('\n'),
    );
    for (const [data, filename] of [
      [md, 'notes.md'],
      [txt, 'mail.txt'],
    ] as const) {
      const whole = (await readDocument({ data, filename })).text;
      const doc = await readDocumentText({ data, filename });
      expect(
        [...doc.sections({ size: 700 })]
          .map((s) => s.text)
          .join('')
          .trim(),
      ).toBe(whole);
    }
  });

  it('reads and chunks a large file in a worker: the same chunks, counted, and its refusals kept', async () => {
    const text = bigMarkdown(Math.ceil((IN_THREAD_MAX_BYTES * 1.2) / bigMarkdown(1).length));
    const data = Buffer.from(text);
    expect(data.byteLength).toBeGreaterThan(IN_THREAD_MAX_BYTES);
    const settings = { chunkSize: 64, chunkSplitter: undefined };
    const inWorker: Chunk[] = [];
    for await (const batch of chunkBatches({ file: { data, filename: 'big.md' } }, settings, 500)) {
      expect(batch.length).toBeLessThanOrEqual(500);
      inWorker.push(...batch);
    }
    const here = (await readDocumentText({ data, filename: 'big.md' })).sections();
    const chunker = new SectionChunker({ chunkSize: 64 });
    expect(inWorker).toEqual([...here].flatMap((s) => chunker.push(s)));
    const counted = await countChunks({ file: { data, filename: 'big.md' } }, settings, 16);
    expect(counted.chunks).toBe(inWorker.length);
    expect(counted.sample).toHaveLength(16);
    for (const s of counted.sample) expect(inWorker.some((c) => c.text === s)).toBe(true);
    // A text given whole goes the same way.
    const fromText: Chunk[] = [];
    for await (const batch of chunkBatches({ text }, settings, 1000)) fromText.push(...batch);
    expect(fromText).toEqual(chunkMarkdownLoaded(text, { chunkSize: 64 }));

    // Binary data named .txt is refused by the worker as it is here.
    const binary = Buffer.alloc(IN_THREAD_MAX_BYTES + 10, 0);
    const refused = await countChunks({ file: { data: binary, filename: 'photo.txt' } }, settings, 16).catch((e) => e);
    expect(isIngestError(refused)).toBe(true);
    expect(refused.code).toBe('corrupt_file');
    expect(refused.message).toMatch(/photo\.txt is not a text file/);
  }, 60_000);

  it('runs its worker in a process started with options a worker may not be given (--expose-gc)', async () => {
    // The built code, as `kbchat start` runs it.
    const built = new URL('../dist/ingest/index.js', import.meta.url).href;
    const script = join(mkdtempSync(join(tmpdir(), 'kbchat-worker-args-')), 'count.mjs');
    writeFileSync(
      script,
      `const I = await import(${JSON.stringify(built)});
      const r = await I.countChunks({ text: '# T\\n\\n' + 'One short paragraph of a long text.\\n\\n'.repeat(40000) }, { chunkSize: 64 }, 4);
      console.log(r.chunks);`,
    );
    const run = spawnSync(process.execPath, ['--expose-gc', script], { encoding: 'utf8', timeout: 60_000 });
    expect(run.stderr).toBe('');
    expect(Number(run.stdout)).toBeGreaterThan(100);
  }, 60_000);

  it("reads again without the worker's bound an input that needs more (a paragraph of megabytes, cut word by word)", async () => {
    const text = `# T\n\n${'word '.repeat(400_000)}`;
    const settings = { chunkSize: 64, chunkSplitter: undefined };
    const streamed: Chunk[] = [];
    for await (const batch of chunkBatches({ text }, settings, 1000)) streamed.push(...batch);
    expect(streamed).toEqual(chunkMarkdownLoaded(text, { chunkSize: 64 }));
    expect((await countChunks({ text }, settings, 4)).chunks).toBe(streamed.length);
  }, 120_000);
});
