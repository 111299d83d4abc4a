// The images OCR reads: a PDF's pages drawn by pdf.js on a canvas
// (@napi-rs/canvas, the canvas pdf.js itself uses in Node), or an image file,
// each no larger than OCR needs, one at a time.
import { createCanvas, loadImage } from '@napi-rs/canvas';
import { openPdf } from '../readers/pdf.js';

/** A page is drawn at this resolution (Tesseract reads best at 200–300 dpi). */
const DPI = 200;
/** No image is read larger than this on its longer side: a 20,000-pixel photo would take gigabytes and minutes. */
export const MAX_SIDE = 4000;

/** PNG images of the given PDF pages (1-based), in order. */
export async function* pdfPageImages(data: Uint8Array, pages: readonly number[]): AsyncGenerator<{ page: number; png: Buffer }> {
  const doc = await openPdf(data);
  try {
    for (const number of pages) {
      const page = await doc.getPage(number);
      const size = page.getViewport({ scale: 1 });
      const scale = Math.min(DPI / 72, MAX_SIDE / Math.max(size.width, size.height));
      const viewport = page.getViewport({ scale });
      const canvas = createCanvas(Math.ceil(viewport.width), Math.ceil(viewport.height));
      const context = canvas.getContext('2d');
      context.fillStyle = '#fff';
      context.fillRect(0, 0, canvas.width, canvas.height);
      // pdf.js draws on @napi-rs/canvas's context: the 2D context it expects, by another type.
      await page.render({ canvasContext: context as unknown as Parameters<typeof page.render>[0]['canvasContext'], viewport }).promise;
      page.cleanup();
      yield { page: number, png: canvas.toBuffer('image/png') };
    }
  } finally {
    await doc.destroy();
  }
}

/** An image file as a PNG OCR can read: scaled down to MAX_SIDE, transparency on white. */
export async function imageFileImage(data: Uint8Array): Promise<Buffer> {
  const image = await loadImage(Buffer.from(data));
  const scale = Math.min(1, MAX_SIDE / Math.max(image.width, image.height));
  const canvas = createCanvas(Math.max(1, Math.round(image.width * scale)), Math.max(1, Math.round(image.height * scale)));
  const context = canvas.getContext('2d');
  context.fillStyle = '#fff';
  context.fillRect(0, 0, canvas.width, canvas.height);
  context.drawImage(image, 0, 0, canvas.width, canvas.height);
  return canvas.toBuffer('image/png');
}
