// Which pages of a PDF a chunk comes from, for citations ("page 3"). The
// chunker works on the document's joined text (a paragraph a page break cut
// is one paragraph there), so a chunk's pages are found afterwards: the start
// and the end of its text are looked for in the pages' own texts, in order,
// with shorter probes where a longer one crosses a page break or a joined
// hyphen. A chunk whose text is found nowhere (rare) has no pages.
import type { Chunk } from './chunker.js';

const norm = (s: string) =>
  s
    .replace(/\u00ad/g, '')
    .replace(/\s+/g, ' ')
    .trim();
/** Probe lengths, longest first: long enough to be unique, short enough to sit on one page. */
const PROBES = [80, 40, 20];

/** A locator for the chunks of one document, asked in document order. */
export function pageLocator(pages: string[]): (chunk: Chunk) => [number, number] | undefined {
  const texts = pages.map(norm);
  let cursor = 0;
  const find = (probes: string[], from: number): number => {
    for (const probe of probes) {
      for (let p = from; p < texts.length; p++) if (texts[p]!.includes(probe)) return p;
    }
    return -1;
  };
  return (chunk) => {
    // The chunk's own text: without the title path written at its top and the overlap from the chunk before.
    let body = chunk.text;
    if (chunk.overlap) {
      const at = body.indexOf(chunk.overlap);
      if (at >= 0) body = body.slice(at + chunk.overlap.length);
    }
    const text = norm(body);
    if (!text) return undefined;
    const first = find(
      PROBES.map((n) => text.slice(0, n).trim()),
      cursor,
    );
    if (first < 0) return undefined;
    cursor = first;
    const last = find(
      PROBES.map((n) => text.slice(-n).trim()),
      first,
    );
    return [first + 1, Math.max(first, last) + 1];
  };
}
