// A reader's per-file time limit: parsers can crawl on hostile files, so a
// parse that runs past it is refused with `parse_timeout`, naming the file.
import { IngestError } from '../errors.js';

/** `work`, or a parse_timeout after `ms`; `onTimeout` stops what can be stopped, `note` says what it suggests. */
export function withParseTimeout<T>(work: Promise<T>, ms: number, filename: string, o: { onTimeout?: () => void; note?: string } = {}): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      o.onTimeout?.();
      reject(new IngestError('parse_timeout', `Reading ${filename} took longer than ${Math.round(ms / 1000)} s${o.note ? `; ${o.note}` : ''}.`));
    }, ms);
  });
  return Promise.race([work, timeout]).finally(() => clearTimeout(timer));
}
