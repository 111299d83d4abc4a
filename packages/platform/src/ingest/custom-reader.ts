// A team's own file parser, for the file types it names: FastGPT's
// CUSTOM_READ_FILE_URL contract. The file goes to the service as multipart
// (`file`, `extension`, `ocr`), and its JSON answer's `data.markdown` is the
// text that is chunked, as if it had been imported as text. A service that
// fails, times out or answers without Markdown fails the import, saying
// which service and why (never its key). An answer is kept for a few
// minutes, so that an upload's estimate and its import ask once.

import { createHash } from 'node:crypto';
import type { ChunkInput } from './chunk-stream.js';
import { IngestError } from './errors.js';
import { extensionOf, type ReadDocumentInput } from './readers/index.js';

export interface CustomReaderConfig {
  /** Where files are posted (CUSTOM_READ_FILE_URL). */
  url: string;
  /** The extensions it reads, lower case without the dot (CUSTOM_READ_FILE_EXTENSION). */
  extensions: string[];
  /** Sent as `Authorization: Bearer <key>` (CUSTOM_READ_FILE_KEY). */
  key?: string;
  /** Give up after this long (default 10 minutes, as FastGPT). */
  timeoutMs?: number;
}

/** Answers kept, and for how long: an estimate, then the import of the same bytes. */
const KEPT = 8;
const KEPT_MS = 10 * 60_000;

export class CustomFileReader {
  private readonly kept = new Map<string, { markdown: string; at: number }>();

  constructor(private readonly config: CustomReaderConfig) {}

  /** What to chunk for this file: the service's Markdown for the types it reads, else the file for kbchat's readers. */
  async inputOf(file: ReadDocumentInput): Promise<ChunkInput> {
    const extension = extensionOf(file.filename);
    if (!this.config.extensions.includes(extension)) return { file };
    const id = createHash('sha256').update(file.data).update(`\0${extension}`).digest('hex');
    const hit = this.kept.get(id);
    if (hit && Date.now() - hit.at < KEPT_MS) return { text: hit.markdown };
    const markdown = await this.read(file, extension);
    this.kept.delete(id);
    this.kept.set(id, { markdown, at: Date.now() });
    if (this.kept.size > KEPT) this.kept.delete(this.kept.keys().next().value!);
    return { text: markdown };
  }

  private async read(file: ReadDocumentInput, extension: string): Promise<string> {
    const service = this.where();
    const form = new FormData();
    form.append('file', new Blob([new Uint8Array(file.data)]), `file.${extension}`);
    form.append('extension', extension);
    form.append('ocr', 'false');
    const fail = (why: string, cause?: unknown) =>
      new IngestError('parser_failed', `${file.filename}: the file parser at ${service} ${why}.`, cause ? { cause } : undefined);
    let res: Response;
    try {
      res = await fetch(this.config.url, {
        method: 'POST',
        body: form,
        headers: this.config.key ? { authorization: `Bearer ${this.config.key}` } : {},
        signal: AbortSignal.timeout(this.config.timeoutMs ?? 600_000),
      });
    } catch (err) {
      const timedOut = (err as Error)?.name === 'TimeoutError';
      throw fail(
        timedOut
          ? `did not answer within ${Math.round((this.config.timeoutMs ?? 600_000) / 1000)} s`
          : `could not be reached (${(err as Error)?.message ?? err})`,
        err,
      );
    }
    const body = await res.text().catch(() => '');
    let answer: { success?: boolean; message?: string; data?: { markdown?: unknown } } | undefined;
    try {
      answer = JSON.parse(body);
    } catch {
      answer = undefined;
    }
    if (!res.ok) throw fail(`answered ${res.status}${answer?.message ? `: ${answer.message}` : body ? `: ${body.slice(0, 200)}` : ''}`);
    if (answer?.success === false) throw fail(`refused it${answer.message ? `: ${answer.message}` : ''}`);
    if (typeof answer?.data?.markdown !== 'string') throw fail('answered without data.markdown');
    return answer.data.markdown.replace(/\r\n?/g, '\n');
  }

  /** The service's address without credentials or query: what a message may name. */
  private where(): string {
    try {
      const u = new URL(this.config.url);
      return `${u.origin}${u.pathname}`;
    } catch {
      return 'CUSTOM_READ_FILE_URL';
    }
  }
}
