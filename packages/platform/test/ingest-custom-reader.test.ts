// A team's own file parser (CUSTOM_READ_FILE_URL, FastGPT's contract): files
// of the types it names go to it as multipart and its Markdown is chunked;
// other types are read by kbchat; a parser that fails fails the upload with
// a 502 naming the parser (never its key), and nothing is stored. The parser
// here is a real HTTP server that checks what it is sent.
import { mkdtempSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CustomFileReader } from '../src/ingest/index.js';
import { loadPlatformConfig, startPlatform, type RunningPlatform } from '../src/index.js';

const KEY = 'kbchat-test-custom-reader-key-0123';
const PARSER_KEY = 'parser-secret-key-42';

/** What the parser was sent, and what it answers next. */
const seen: { extension: string; ocr: string; filename: string; bytes: number; auth: string }[] = [];
let answer: { status: number; body: unknown } = { status: 200, body: {} };

async function multipart(req: IncomingMessage): Promise<FormData> {
  const chunks: Buffer[] = [];
  for await (const c of req) chunks.push(c as Buffer);
  return new Response(Buffer.concat(chunks), { headers: { 'content-type': req.headers['content-type']! } }).formData();
}

describe('a custom file parser', () => {
  let parser: Server;
  let parserUrl = '';
  let p: RunningPlatform;
  let datasetId = '';

  beforeAll(async () => {
    parser = createServer(async (req, res) => {
      const form = await multipart(req);
      const file = form.get('file') as File;
      seen.push({
        extension: String(form.get('extension')),
        ocr: String(form.get('ocr')),
        filename: file.name,
        bytes: file.size,
        auth: req.headers.authorization ?? '',
      });
      res.writeHead(answer.status, { 'content-type': 'application/json' });
      res.end(JSON.stringify(answer.body));
    });
    await new Promise<void>((r) => parser.listen(0, '127.0.0.1', r));
    parserUrl = `http://127.0.0.1:${(parser.address() as { port: number }).port}/v1/parse/file`;
    const dataDir = mkdtempSync(join(tmpdir(), 'kbchat-custom-reader-'));
    p = await startPlatform(
      loadPlatformConfig(
        { INITIAL_API_KEY: KEY, CUSTOM_READ_FILE_URL: `${parserUrl}?tenant=a`, CUSTOM_READ_FILE_EXTENSION: 'pdf, .DOCX', CUSTOM_READ_FILE_KEY: PARSER_KEY },
        { host: '127.0.0.1', port: 0, dataDir, databaseUrl: 'pglite:memory' },
      ),
    );
    datasetId = (await post('/api/core/dataset/create', { name: 'parsed' })).body.data;
  }, 60_000);
  afterAll(async () => {
    await p?.close();
    parser?.close();
  });

  async function post(path: string, body: unknown) {
    const res = await fetch(`${p.url}${path}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    return { status: res.status, body: (await res.json()) as any };
  }

  async function upload(name: string, bytes: Uint8Array) {
    const form = new FormData();
    form.append('file', new Blob([bytes]), name);
    form.append('data', JSON.stringify({ datasetId, trainingType: 'chunk' }));
    const res = await fetch(`${p.url}/api/core/dataset/collection/create/localFile`, {
      method: 'POST',
      headers: { authorization: `Bearer ${KEY}` },
      body: form,
    });
    return { status: res.status, body: (await res.json()) as any };
  }

  const collections = async () => (await post('/api/core/dataset/collection/listV2', { datasetId })).body.data.total as number;

  it("chunks the parser's Markdown for the types it names, and reads the others itself", async () => {
    answer = {
      status: 200,
      body: { success: true, message: '', data: { page: 3, markdown: '# Scanned report\r\n\r\nThe parser read the tide table on page 3.' } },
    };
    const pdfBytes = new Uint8Array([0x25, 0x50, 0x44, 0x46, 1, 2, 3, 4]); // a scan kbchat could not read itself
    const parsed = await upload('tides.pdf', pdfBytes);
    expect(parsed.status, JSON.stringify(parsed.body)).toBe(200);
    expect(seen).toEqual([{ extension: 'pdf', ocr: 'false', filename: 'file.pdf', bytes: pdfBytes.byteLength, auth: `Bearer ${PARSER_KEY}` }]);
    const items = (await post('/api/core/dataset/data/v2/list', { collectionId: parsed.body.data.collectionId })).body.data.list;
    expect(items.map((d: any) => [d.titlePath, d.q])).toEqual([[['# Scanned report'], '# Scanned report\nThe parser read the tide table on page 3.']]);

    const own = await upload('notes.md', new TextEncoder().encode('# Notes\n\nRead by kbchat.'));
    expect(own.status).toBe(200);
    expect(seen).toHaveLength(1);
  });

  it('fails the upload with a 502 that names the parser and its reason, and stores nothing', async () => {
    const before = await collections();
    for (const [reply, reason] of [
      [{ status: 500, body: { success: false, message: 'model busy' } }, 'answered 500: model busy'],
      [{ status: 200, body: { success: false, message: 'encrypted file' } }, 'refused it: encrypted file'],
      [{ status: 200, body: { success: true, data: { page: 1 } } }, 'answered without data.markdown'],
    ] as const) {
      answer = reply;
      const r = await upload('board.docx', new Uint8Array([0x50, 0x4b, 3, 4]));
      expect(r.status).toBe(502);
      expect(r.body.message).toBe(`board.docx: the file parser at ${parserUrl} ${reason}.`);
      expect(JSON.stringify(r.body)).not.toContain(PARSER_KEY);
    }
    expect(await collections()).toBe(before);
  });

  it('asks once for the same bytes (an estimate, then the import), and says when the parser cannot be reached', async () => {
    answer = { status: 200, body: { success: true, data: { markdown: 'Once.' } } };
    const reader = new CustomFileReader({ url: parserUrl, extensions: ['pdf'] });
    const file = { data: new Uint8Array([1, 2, 3]), filename: 'a.pdf' };
    const asked = seen.length;
    expect(await reader.inputOf(file)).toEqual({ text: 'Once.' });
    expect(await reader.inputOf(file)).toEqual({ text: 'Once.' });
    expect(seen.length - asked).toBe(1);
    const down = new CustomFileReader({ url: 'http://127.0.0.1:9/parse', extensions: ['pdf'] });
    await expect(down.inputOf(file)).rejects.toMatchObject({
      code: 'parser_failed',
      status: 502,
      message: expect.stringMatching(/^a\.pdf: the file parser at http:\/\/127\.0\.0\.1:9\/parse could not be reached/),
    });
  });

  it('refuses a half-set configuration at start, naming the variable', () => {
    expect(() => loadPlatformConfig({ CUSTOM_READ_FILE_URL: 'http://parser/v1/parse/file' })).toThrow('CUSTOM_READ_FILE_EXTENSION');
    expect(() => loadPlatformConfig({ CUSTOM_READ_FILE_EXTENSION: 'pdf' })).toThrow('CUSTOM_READ_FILE_URL');
    expect(() => loadPlatformConfig({ CUSTOM_READ_FILE_URL: 'parser:7231', CUSTOM_READ_FILE_EXTENSION: 'pdf' })).toThrow(
      'CUSTOM_READ_FILE_URL must be an http(s) URL',
    );
  });
});
