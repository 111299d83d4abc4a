// Tesseract (tesseract.js: the engine compiled to WebAssembly, run in its own
// worker thread) with the language data the npm packages @tesseract.js-data/*
// ship: nothing is downloaded, nothing cached on disk.
import { mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { createWorker, OEM, type Worker } from 'tesseract.js';

const require = createRequire(import.meta.url);

/** Where a language's data is: the package's LSTM model (the one tesseract.js itself uses by default). */
function languageFile(code: string): string {
  let root: string;
  try {
    root = dirname(require.resolve(`@tesseract.js-data/${code}/package.json`));
  } catch {
    throw new Error(`no OCR data for "${code}": install the npm package @tesseract.js-data/${code}`);
  }
  return join(root, '4.0.0_best_int', `${code}.traineddata.gz`);
}

export interface OcrText {
  text: string;
  /** Tesseract's mean word confidence, 0–100. */
  confidence: number;
}

/**
 * One Tesseract worker for the given languages. tesseract.js reads every
 * language from one folder, and each language package has its own: the
 * folder is a temporary one of links to them, removed on close.
 */
export class OcrEngine {
  private constructor(
    private readonly worker: Worker,
    private readonly folder: string,
  ) {}

  static async open(languages: readonly string[]): Promise<OcrEngine> {
    const files = languages.map((code) => ({ code, file: languageFile(code) }));
    const folder = mkdtempSync(join(tmpdir(), 'kbchat-ocr-'));
    try {
      for (const { code, file } of files) symlinkSync(file, join(folder, `${code}.traineddata.gz`));
      const worker = await createWorker(languages.join('+'), OEM.LSTM_ONLY, { langPath: folder, gzip: true, cacheMethod: 'none' });
      return new OcrEngine(worker, folder);
    } catch (err) {
      rmSync(folder, { recursive: true, force: true });
      throw err;
    }
  }

  async read(image: Buffer): Promise<OcrText> {
    const { data } = await this.worker.recognize(image);
    return { text: tidyOcrText(data.text), confidence: Math.round(data.confidence) };
  }

  async close(): Promise<void> {
    await this.worker.terminate().catch(() => undefined);
    rmSync(this.folder, { recursive: true, force: true });
  }
}

const CJK = '\\p{Script=Han}\\p{Script=Hiragana}\\p{Script=Katakana}\\p{Script=Hangul}\\u3000-\\u303f\\uff00-\\uffef';
const spaceBetweenCjk = new RegExp(`(?<=[${CJK}]) +(?=[${CJK}])`, 'gu');

/**
 * Tesseract's text as the chunker reads text: its blocks are paragraphs
 * (blank lines apart) and the lines inside one are wrapped lines, joined; the
 * spaces it puts between Chinese or Japanese characters go.
 */
export function tidyOcrText(raw: string): string {
  return raw
    .split(/\n\s*\n/)
    .map((block) =>
      block
        .split('\n')
        .map((line) => line.trim())
        .filter(Boolean)
        .reduce((text, line) => (!text ? line : text.endsWith('-') && /^\p{Ll}/u.test(line) ? text.slice(0, -1) + line : `${text} ${line}`), '')
        .replace(spaceBetweenCjk, ''),
    )
    .filter(Boolean)
    .join('\n\n');
}
