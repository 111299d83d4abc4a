// Scans as a scanner makes them: text drawn on a white canvas (@napi-rs/canvas,
// with the machine's fonts), saved as PNG, and placed on PDF pages as images
// by pdfkit, so that the PDF has no text layer at all.
import { createCanvas, GlobalFonts } from '@napi-rs/canvas';
import PDFDocument from 'pdfkit';

/** Why the OCR tests cannot run here: no font to print their scans in (Debian's fonts-dejavu-core). */
export const noScanFont = GlobalFonts.families.some((f) => f.family === 'DejaVu Sans')
  ? undefined
  : 'no DejaVu Sans font to print the scans in (install fonts-dejavu-core)';
if (noScanFont) console.warn(`[skip] OCR tests: ${noScanFont}`);

/** A Chinese font the machine has (Debian's fonts-wqy-microhei), if any. */
export const CHINESE_FONT = GlobalFonts.families.some((f) => f.family === 'WenQuanYi Micro Hei') ? 'WenQuanYi Micro Hei' : undefined;

/** A letter-size page at 150 dpi with the lines printed on it. */
export function scannedPagePng(lines: string[], font = 'DejaVu Sans'): Buffer {
  const canvas = createCanvas(1275, 1650);
  const g = canvas.getContext('2d');
  g.fillStyle = '#fff';
  g.fillRect(0, 0, canvas.width, canvas.height);
  g.fillStyle = '#111';
  g.font = `30px "${font}"`;
  lines.forEach((line, i) => g.fillText(line, 120, 180 + i * 52));
  return canvas.toBuffer('image/png');
}

/**
 * A PDF whose pages are the given images, or text where a page is a string
 * (a document with some pages scanned). `repeat` places the same image on
 * that many pages (one image object: a long scan that stays small).
 */
export async function scannedPdf(pages: (Buffer | string)[], repeat = 1): Promise<Buffer> {
  const doc = new PDFDocument({ autoFirstPage: false });
  const parts: Buffer[] = [];
  doc.on('data', (b: Buffer) => parts.push(b));
  const ended = new Promise((done) => doc.on('end', done));
  // An opened image is one object in the PDF, however many pages show it.
  const opened = new Map<Buffer, unknown>();
  const image = (png: Buffer) => opened.get(png) ?? opened.set(png, (doc as unknown as { openImage(b: Buffer): unknown }).openImage(png)).get(png)!;
  for (let r = 0; r < repeat; r++) {
    for (const page of pages) {
      doc.addPage({ size: 'LETTER', margin: 72 });
      if (typeof page === 'string') doc.font('Helvetica').fontSize(12).text(page);
      else doc.image(image(page) as Buffer, 0, 0, { width: 612, height: 792 });
    }
  }
  doc.end();
  await ended;
  return Buffer.concat(parts);
}
