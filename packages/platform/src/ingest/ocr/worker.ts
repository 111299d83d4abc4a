// The worker thread that reads a scan (ocr/index.ts): it reads a PDF's text
// layer (a scan may have pages of text too), then draws each page without
// text, reads it with Tesseract and posts the page's text, one page at a
// time. Drawing a page (pdf.js decodes a scan's JPEG in JavaScript) takes the
// thread that does it for hundreds of milliseconds: here, never the API's.
import { parentPort, workerData } from 'node:worker_threads';
// Only the PDF reader: every module loaded here is held by this thread.
import { blankPages, readPdf } from '../readers/pdf.js';
import { OcrEngine } from './engine.js';
import { imageFileImage, pdfPageImages } from './page-images.js';
import type { OcrJob, OcrMessage } from './index.js';

const job = workerData as OcrJob;
const post = (m: OcrMessage) => parentPort!.postMessage(m);

async function* images(): AsyncGenerator<{ page: number; png: Buffer }> {
  if (job.kind === 'image') {
    post({ type: 'layer', pages: [''] });
    return yield { page: 1, png: await imageFileImage(job.data) };
  }
  const { pages } = await readPdf(job.data, { filename: job.filename, maxPages: job.maxPages });
  post({ type: 'layer', pages });
  yield* pdfPageImages(job.data, blankPages(pages));
}

const engine = await OcrEngine.open(job.languages).catch((err: Error) => {
  post({ type: 'failed', message: `OCR could not start: ${err.message}` });
});
if (engine) {
  try {
    for await (const { page, png } of images()) {
      try {
        post({ type: 'page', page, ...(await engine.read(png)) });
      } catch (err) {
        post({ type: 'page', page, text: '', confidence: null, error: (err as Error)?.message ?? String(err) });
      }
    }
    post({ type: 'end' });
  } catch (err) {
    post({ type: 'failed', message: (err as Error)?.message ?? String(err) });
  } finally {
    await engine.close();
  }
}
