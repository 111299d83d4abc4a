// A PDF's running headers, footers and page numbers: lines the typesetter
// repeats on every page, which are no part of the text. Left in, each page's
// header lands in the middle of whatever paragraph crosses the page, and
// every chunk holds a page number that matches questions about numbers.
//
// A line is running when it stands at a page's top or bottom edge (among the
// three outermost lines there, with only running lines between it and the
// edge) and recurs at about the same height on other pages: as the same
// text on at least two pages and 30% of the pages with text (a title page or
// a chapter's first page often has none), or as a page number, the same text
// but for a number that goes up with the page ("Page 3 of 17", "- iv -",
// "12"), on half the pages and at least three (or both of two): a table row
// of figures at the top of each page only looks alike. (A heading with a
// number standing first on every page, one "Chapter 3" a page, goes too.)
// Where a line is in the content stream does not matter: some writers draw
// headers last.
import type { PdfLine } from './pdf-line.js';

/** How many lines from each edge of a page may be running ones. */
const EDGE_LINES = 3;
/** Share of a document's pages with text a running line must recur on. */
const MIN_SHARE = 0.3;

const ROMAN_PAGE = /^[-–—(\s]*([ivxlcdm]{1,7})[-–—)\s]*$/;
const ROMAN_DIGITS: Record<string, number> = { i: 1, v: 5, x: 10, l: 50, c: 100, d: 500, m: 1000 };

/** The text of a line with its numbers (arabic, or a roman page number) as `#`, and those numbers. */
function numberedForm(text: string): { form: string; numbers: number[] } {
  const flat = text.toLowerCase().replace(/\s+/g, ' ').trim();
  const roman = ROMAN_PAGE.exec(flat)?.[1];
  if (roman) return { form: '#', numbers: [romanValue(roman)] };
  return { form: flat.replace(/\d+/g, '#'), numbers: (flat.match(/\d+/g) ?? []).map(Number) };
}

function romanValue(roman: string): number {
  const digits = [...roman].map((c) => ROMAN_DIGITS[c]!);
  return digits.reduce((sum, d, i) => sum + (d < (digits[i + 1] ?? 0) ? -d : d), 0);
}

/** Whether two lines stand at the same height on their pages (within a quarter line and 2 pt). */
function sameHeight(a: PdfLine, b: PdfLine): boolean {
  return Math.abs(a.y - b.y) <= 2 + 0.25 * Math.max(a.height, b.height);
}

/** The pages' lines without their running headers, footers and page numbers. */
export function withoutRunningLines(pages: PdfLine[][]): PdfLine[][] {
  const pagesWithText = pages.filter((lines) => lines.length > 0).length;
  if (pagesWithText < 2) return pages;
  const needed = Math.max(2, Math.ceil(pagesWithText * MIN_SHARE));
  const neededNumbered = pagesWithText === 2 ? 2 : Math.max(3, Math.ceil(pagesWithText / 2));
  // Each page's outermost lines, top first and bottom first.
  const edges = pages.map((lines) => {
    const byHeight = [...lines].sort((a, b) => b.y - a.y);
    return { top: byHeight.slice(0, EDGE_LINES), bottom: byHeight.reverse().slice(0, EDGE_LINES) };
  });
  type Candidate = { page: number; line: PdfLine; numbers: number[] };
  const byForm = new Map<string, Candidate[]>();
  const formOf = new Map<PdfLine, string>();
  edges.forEach(({ top, bottom }, page) => {
    for (const line of new Set([...top, ...bottom])) {
      const { form, numbers } = numberedForm(line.text);
      formOf.set(line, form);
      byForm.set(form, [...(byForm.get(form) ?? []), { page, line, numbers }]);
    }
  });
  const recurs = (line: PdfLine, page: number): boolean => {
    const alike = (byForm.get(formOf.get(line)!) ?? []).filter((c) => sameHeight(line, c.line));
    const samePages = new Set(alike.filter((c) => c.line.text === line.text).map((c) => c.page));
    if (samePages.size >= needed) return true;
    // A page number: one of the line's numbers is the page's index plus the same offset on each page.
    const own = alike.find((c) => c.line === line)!;
    return own.numbers.some((n, i) => new Set(alike.filter((c) => c.numbers[i]! - c.page === n - page).map((c) => c.page)).size >= neededNumbered);
  };
  return pages.map((lines, page) => {
    const running = new Set<PdfLine>();
    for (const side of [edges[page]!.top, edges[page]!.bottom]) {
      for (const line of side) {
        // Only from the edge inwards: a body line between two running ones stays.
        if (!recurs(line, page)) break;
        running.add(line);
      }
    }
    return running.size ? lines.filter((line) => !running.has(line)) : lines;
  });
}
