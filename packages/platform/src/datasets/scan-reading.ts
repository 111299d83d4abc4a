// A scan's collection filled after its upload was answered (issue 29): its
// pages read with OCR (ingest/ocr/), a page at a time, its job row counting
// them; then its text (the text layer's pages and the pages read) chunked
// into the collection, each chunk with its pages. A scan that cannot be
// read, or has no text, keeps its collection with the reason (read_error).
import {
  blankPages,
  chunksUpTo,
  countChunks,
  detectFormat,
  isIngestError,
  ocrPages,
  type Chunk,
  type OcrPage,
  type ReadDocumentInput,
} from '../ingest/index.js';
import type { CollectionRow, DatasetsStore } from './store.js';

export interface ScanReading {
  store: DatasetsStore;
  /** The job owner (jobs.ts) whose row counts the pages. */
  owner: string;
  /** Chunks at most written in one statement (more: in steps). */
  batchRows: number;
  languages: string[];
}

/** Writes the text's chunks into the collection: `few` when they were all made already, else `total` made as they are written. */
export type WriteScanText = (source: { text: string; pages: string[] }, few: Chunk[] | undefined, total: number) => Promise<void>;

/** The chunk settings the collection was made with. */
export const scanChunking = (c: CollectionRow) => ({ chunkSize: c.chunk_size, chunkSplitter: c.chunk_splitter || undefined });

/** collections.ocr_pages: each page read, its confidence (and why it could not be read). */
const ocrPagesJson = (pages: OcrPage[]) => JSON.stringify(pages.map(({ page, confidence, error }) => ({ page, confidence, ...(error ? { error } : {}) })));

export async function readScan(r: ScanReading, collection: CollectionRow, file: ReadDocumentInput, signal: AbortSignal, write: WriteScanText): Promise<void> {
  let pages: string[] = [];
  const read: OcrPage[] = [];
  const job = { kind: detectFormat(file) === 'image' ? ('image' as const) : ('pdf' as const), data: file.data, filename: file.filename };
  try {
    for await (const e of ocrPages({ ...job, languages: r.languages, signal })) {
      if (e.type === 'layer') {
        pages = [...e.pages];
        const total = blankPages(pages).length;
        await r.store.startJob({
          collectionId: collection.id,
          teamId: collection.team_id,
          datasetId: collection.dataset_id,
          kind: 'ocr',
          total,
          owner: r.owner,
        });
      } else {
        pages[e.page - 1] = e.text;
        read.push({ page: e.page, text: '', confidence: e.confidence, ...(e.error ? { error: e.error } : {}) });
        await r.store.run(r.store.jobProgressStatement(collection.id, 1));
      }
    }
  } catch (err) {
    if (signal.aborted) return;
    const why = isIngestError(err) ? err.message : `${file.filename} could not be read with OCR (${(err as Error)?.message ?? err}).`;
    return r.store.endRead(collection.id, { readError: why, ocrPages: ocrPagesJson(read) });
  }
  if (signal.aborted) return;
  const text = pages.filter((page) => page.trim()).join('\n\n');
  const source = { text, pages };
  // Whatever fails from here ends the job too, saying why: the collection never sits at "reading".
  const failed = (what: string) => (err: unknown) =>
    r.store.endRead(collection.id, { readError: `${file.filename} was read, but ${what} (${(err as Error)?.message ?? err}).`, ocrPages: ocrPagesJson(read) });
  let few: Chunk[] | undefined;
  let total: number;
  try {
    few = text ? await chunksUpTo(source, scanChunking(collection), r.batchRows) : [];
    total = few?.length ?? (await countChunks(source, scanChunking(collection), 0)).chunks;
  } catch (err) {
    return failed('its text could not be chunked')(err);
  }
  const nothing = `OCR found no text in ${file.filename} (${read.length} ${read.length === 1 ? 'page' : 'pages'} read).`;
  await r.store.endRead(collection.id, { ocrPages: ocrPagesJson(read), ...(total === 0 ? { readError: nothing } : {}) });
  if (total > 0 && !signal.aborted) await write(source, few, total).catch(failed('its chunks could not be stored'));
}
