// OCR of scanned pages and images (issue 29): a worker thread (worker.ts)
// draws each page and reads it with Tesseract (engine.ts), posting a page at
// a time; stopping the reader (a cancel, the collection deleted) ends the
// thread at once, mid-page.
import { Worker } from 'node:worker_threads';
import { builtWorkerUrl, workerExecArgv, workerMessages } from '../worker-files.js';

/** The languages OCR reads unless OCR_LANGUAGES says otherwise (their data ships with the platform). */
export const DEFAULT_OCR_LANGUAGES = ['eng', 'chi_sim'];

export interface OcrJob {
  kind: 'pdf' | 'image';
  data: Uint8Array;
  filename: string;
  /** A PDF of more pages is refused (readers/pdf.ts). */
  maxPages?: number;
  languages: string[];
}

export interface OcrPage {
  page: number;
  text: string;
  /** Tesseract's mean confidence (0–100); null when the page could not be read. */
  confidence: number | null;
  /** Why the page could not be read. */
  error?: string;
}

/** First the document's text layer (a page each; an image is one page without text), then each page without text as it is read. */
export type OcrEvent = { type: 'layer'; pages: string[] } | ({ type: 'page' } & OcrPage);

export type OcrMessage = OcrEvent | { type: 'end' } | { type: 'failed'; message: string };

/** A scan's text as it is read; ends the worker (mid-page) when the caller stops reading or `signal` aborts. */
export async function* ocrPages({ signal, ...job }: OcrJob & { signal?: AbortSignal }): AsyncGenerator<OcrEvent> {
  const worker = new Worker(builtWorkerUrl(new URL('./worker.js', import.meta.url)), {
    execArgv: workerExecArgv(),
    workerData: job,
    resourceLimits: { maxOldGenerationSizeMb: 256, maxYoungGenerationSizeMb: 16 },
  });
  const stop = () => void worker.terminate();
  signal?.addEventListener('abort', stop, { once: true });
  try {
    for await (const m of workerMessages<OcrMessage>(worker, 'OCR')) {
      if (m.type === 'page' || m.type === 'layer') yield m;
      else if (m.type === 'end') return;
      else throw new Error(m.message);
    }
  } finally {
    signal?.removeEventListener('abort', stop);
  }
}
