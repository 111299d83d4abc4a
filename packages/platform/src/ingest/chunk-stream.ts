// A collection's chunks as they are made, from a text in hand or a file, in
// batches: never the whole document's chunks at once (issue 34: a 30 MB text
// took a process from 475 MB to 2 GB).
//
// A small input (up to IN_THREAD_MAX_BYTES) is read and chunked here, the
// event loop given a turn between sections. A larger one is read and chunked
// in a worker thread (chunk-worker.ts): its passes over a 30 MB text take
// seconds that chat must not wait for, and the garbage they make grew this
// process's heap by 500 MB before V8 collected it; a worker's heap is bounded
// (workerHeapMb) and given back when it ends. Batches cross one at a time,
// the worker waiting until the last one was taken.
import { Worker } from 'node:worker_threads';
import { loadTokenizer } from '@kbchat/shared';
import { SectionChunker, type Chunk } from './chunker.js';
import { pageLocator } from './page-locator.js';
import { rowLocator, type RowText } from './row-locator.js';
import { IngestError, isIngestError, type IngestErrorCode } from './errors.js';
import { detectFormat, NeedsOcr, readDocumentText, type DocumentFormat, type ReadDocumentInput } from './readers/index.js';
import { textSections, type TextSection } from './sections.js';
import { builtWorkerUrl, workerExecArgv, workerMessages } from './worker-files.js';

/**
 * What chunks are made from: a text as it is (a text collection, a fetched
 * page; with `pages`, a document's pages' texts, which say where its chunks
 * come from: a scan read with OCR), or a file to read (`ocr`: a scan is
 * refused with NeedsOcr, for the caller to read with ocr/).
 */
export type ChunkInput = { text: string; pages?: string[] } | { file: ReadDocumentInput; ocr?: boolean };

export interface ChunkingSettings {
  chunkSize: number;
  chunkSplitter: string | undefined;
}

/** Inputs up to this size are read and chunked in this thread; larger ones in a worker. */
export const IN_THREAD_MAX_BYTES = 1024 * 1024;
/**
 * A worker's old-generation heap (MB), for an input read a section at a time
 * (a text, a plain text or Markdown file): the tokenizer's tables (about
 * 40 MB), the words the text uses (line-joins.ts), a text given whole (twice
 * its length at most, in UTF-16), and room for what reading the largest
 * section makes (up to 16 MB of text, sections.ts: its lines, the text read,
 * about five times its size). V8 collects as the heap nears it, so it bounds
 * what the worker holds (without it, 300 MB over a 30 MB file); no reading
 * step makes a string larger than a section, so an input that needs more
 * makes the worker stop, never the process (then it is read again without
 * the bound: inWorker). A file of another format is read whole by its
 * reader, and its worker has no bound.
 */
export function workerHeapMb(input: ChunkInput): number | undefined {
  const mb = ('text' in input ? 2 * input.text.length : input.file.data.byteLength) / 1048576;
  if ('file' in input && !['txt', 'md'].includes(detectFormat(input.file))) return undefined;
  return Math.ceil(64 + mb + 5 * Math.min(mb, 16));
}

/** The sections of the input as the chunker takes them (read by its reader, for a file), with the file's format and a PDF's pages. */
async function inputSections(
  input: ChunkInput,
  splitter: string | undefined,
): Promise<{ sections: Iterable<TextSection>; format?: DocumentFormat; pages?: string[]; rows?: RowText[] }> {
  if ('text' in input) return { sections: textSections(input.text.replace(/\r\n?/g, '\n'), { splitter }), pages: input.pages };
  const doc = await readDocumentText(input.file, { ocr: input.ocr });
  return { sections: doc.sections({ splitter }), format: doc.format, pages: doc.pages, rows: doc.rows };
}

/**
 * Formats read as one block per table row (csv.ts): a chunk never starts with
 * the end of the row before it, and holds a few rows at most, so that a row's
 * vector is not drowned by dozens of others when the model's chunks are long.
 */
const ROW_FORMATS = new Set<DocumentFormat | undefined>(['csv', 'xlsx']);
export const ROWS_PER_CHUNK = 5;

/** The input's chunks, in batches of at most `batchSize`; `between` runs after each section. */
export async function* batchesOf(input: ChunkInput, settings: ChunkingSettings, batchSize: number, between: () => Promise<void>): AsyncGenerator<Chunk[]> {
  const { sections, format, pages, rows: rowTexts } = await inputSections(input, settings.chunkSplitter);
  const locate = pages && pageLocator(pages);
  const locateRows = rowTexts?.length ? rowLocator(rowTexts) : undefined;
  await loadTokenizer();
  const rows = ROW_FORMATS.has(format);
  const chunker = new SectionChunker({ chunkSize: settings.chunkSize, ...(rows ? { overlap: 0, maxBlocks: ROWS_PER_CHUNK } : {}) });
  let batch: Chunk[] = [];
  for (const section of sections) {
    for (const chunk of chunker.push(section)) {
      const pagesOf = locate?.(chunk);
      if (pagesOf) chunk.pages = pagesOf;
      const rowsOf = locateRows?.(chunk);
      if (rowsOf) chunk.rows = rowsOf;
      batch.push(chunk);
      if (batch.length >= batchSize) {
        yield batch;
        batch = [];
      }
    }
    await between();
  }
  if (batch.length) yield batch;
}

/**
 * A count of chunks, and up to `size` of their texts spread evenly through
 * them (what a speed probe embeds): every `stride`th is kept, and when twice
 * the sample is kept every other one goes and the stride doubles.
 */
export class ChunkTally {
  chunks = 0;
  private kept: string[] = [];
  private stride = 1;

  constructor(private readonly size: number) {}

  add(chunk: Chunk): void {
    if (this.chunks++ % this.stride !== 0) return;
    this.kept.push(chunk.text);
    if (this.kept.length > this.size * 2) {
      this.kept = this.kept.filter((_, i) => i % 2 === 0);
      this.stride *= 2;
    }
  }

  result(): { chunks: number; sample: string[] } {
    const step = Math.max(1, Math.floor(this.kept.length / this.size));
    return { chunks: this.chunks, sample: this.kept.filter((_, i) => i % step === 0).slice(0, this.size) };
  }
}

const letOthersIn = () => new Promise<void>((resolve) => setImmediate(resolve));

const sizeOf = (input: ChunkInput) => ('text' in input ? input.text.length : input.file.data.byteLength);

/** The input's chunks, in order, in batches of at most `batchSize`. Refusals are IngestErrors, as the readers' own. */
export async function* chunkBatches(input: ChunkInput, settings: ChunkingSettings, batchSize: number): AsyncGenerator<Chunk[]> {
  if (sizeOf(input) <= IN_THREAD_MAX_BYTES) return yield* batchesOf(input, settings, batchSize, letOthersIn);
  for await (const m of inWorker(input, settings, { mode: 'chunks', batchSize })) if (m.type === 'batch') yield m.chunks;
}

/** How many chunks the input makes, and a sample of their texts (ChunkTally). */
export async function countChunks(input: ChunkInput, settings: ChunkingSettings, sampleSize: number): Promise<{ chunks: number; sample: string[] }> {
  if (sizeOf(input) > IN_THREAD_MAX_BYTES) {
    for await (const m of inWorker(input, settings, { mode: 'count', sampleSize })) if (m.type === 'counted') return { chunks: m.chunks, sample: m.sample };
  }
  const tally = new ChunkTally(sampleSize);
  for await (const batch of chunkBatches(input, settings, 1000)) for (const chunk of batch) tally.add(chunk);
  return tally.result();
}

/** All of the input's chunks when there are at most `limit`, else undefined (as soon as there are more). */
export async function chunksUpTo(input: ChunkInput, settings: ChunkingSettings, limit: number): Promise<Chunk[] | undefined> {
  const all: Chunk[] = [];
  for await (const batch of chunkBatches(input, settings, limit + 1)) {
    all.push(...batch);
    if (all.length > limit) return undefined;
  }
  return all;
}

/** What the worker is asked (chunk-worker.ts reads it as its workerData). */
export interface ChunkJob {
  input: ChunkInput;
  settings: ChunkingSettings;
  mode: 'chunks' | 'count';
  batchSize?: number;
  sampleSize?: number;
}

/** What the worker says: a batch (it then waits for "next"), the count, the end, or a refusal. */
export type WorkerMessage =
  | { type: 'batch'; chunks: Chunk[] }
  | { type: 'counted'; chunks: number; sample: string[] }
  | { type: 'end' }
  | { type: 'refused'; code: IngestErrorCode; message: string }
  | { type: 'needs-ocr'; filename: string; pages: number }
  | { type: 'failed'; message: string };

type Delivered = Extract<WorkerMessage, { type: 'batch' | 'counted' }>;

/** A worker's heap ran out. */
class WorkerOutOfMemory extends Error {}

/**
 * Runs a job in a worker: yields each batch (or, counting, the count). The
 * bound on its heap (workerHeapMb) is for what reading usually needs; an
 * input that needs more (one paragraph of megabytes without a sentence end:
 * the chunker cuts it word by word) is read again in a worker without one,
 * as it was read before there were workers, the chunks already given
 * skipped (chunking is deterministic). Past the process's own limit it is
 * refused (too_complex).
 */
async function* inWorker(input: ChunkInput, settings: ChunkingSettings, job: Omit<ChunkJob, 'input' | 'settings'>): AsyncGenerator<Delivered> {
  const name = 'file' in input ? input.file.filename : 'The text';
  let given = 0;
  for (const heapMb of [workerHeapMb(input), undefined]) {
    let skip = given;
    try {
      for await (const m of oneWorker(input, settings, job, heapMb)) {
        if (m.type === 'counted') return yield m;
        const fresh = m.chunks.slice(Math.min(skip, m.chunks.length));
        skip -= m.chunks.length - fresh.length;
        given += fresh.length;
        if (fresh.length) yield { type: 'batch', chunks: fresh };
      }
      return;
    } catch (err) {
      if (!(err instanceof WorkerOutOfMemory) || heapMb === undefined) {
        if (err instanceof WorkerOutOfMemory)
          throw new IngestError('too_complex', `${name} needs more memory to be read than this process has; split it into smaller files.`);
        throw err;
      }
    }
  }
}

/** One worker for a job, its heap bounded to `heapMb` when given; it ends with the generator. */
async function* oneWorker(
  input: ChunkInput,
  settings: ChunkingSettings,
  job: Omit<ChunkJob, 'input' | 'settings'>,
  heapMb: number | undefined,
): AsyncGenerator<Delivered> {
  const worker = new Worker(builtWorkerUrl(new URL('./chunk-worker.js', import.meta.url)), {
    execArgv: workerExecArgv(),
    workerData: { input, settings, ...job } satisfies ChunkJob,
    ...(heapMb ? { resourceLimits: { maxOldGenerationSizeMb: heapMb, maxYoungGenerationSizeMb: 8 } } : {}),
  });
  try {
    for await (const m of workerMessages<WorkerMessage>(worker, 'chunking')) {
      if (m.type === 'batch') {
        yield m;
        worker.postMessage('next');
      } else if (m.type === 'counted') return yield m;
      else if (m.type === 'end') return;
      else if (m.type === 'refused') throw new IngestError(m.code, m.message);
      else if (m.type === 'needs-ocr') throw new NeedsOcr(m.filename, m.pages);
      else throw new Error(m.message);
    }
  } catch (err) {
    if ((err as { code?: string }).code === 'ERR_WORKER_OUT_OF_MEMORY') throw new WorkerOutOfMemory((err as Error).message);
    throw err;
  }
}

/** Turns what the worker caught into a message (an IngestError keeps its code). */
export function refusalOf(err: unknown): WorkerMessage {
  if (isIngestError(err)) return { type: 'refused', code: err.code, message: err.message };
  if (err instanceof NeedsOcr) return { type: 'needs-ocr', filename: err.filename, pages: err.pages };
  return { type: 'failed', message: (err as Error)?.message ?? String(err) };
}
