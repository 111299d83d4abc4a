// A website read from a start address (issue 29): its own pages only (the
// start's origin), robots.txt honoured for the crawler's user agent, the
// sitemap's addresses (robots.txt's Sitemap lines, else /sitemap.xml) taken
// as well as the links each page has, breadth first, to a depth and a number
// of pages. Every fetch goes through the link rules (fetchRaw: private and
// loopback addresses refused unless allowed, redirects checked, size and time
// capped); a page that redirects off the site is skipped.
import { createRequire } from 'node:module';
import { Parser } from 'htmlparser2';
import { IngestError, isIngestError } from './errors.js';
import { fetchRaw, readRawLink, type FetchLinkOptions, type FetchLinkResult } from './link.js';

/** robots-parser (CommonJS; its types declare an ES default export it does not have). */
interface Robots {
  isAllowed(url: string, ua?: string): boolean | undefined;
  getSitemaps(): string[];
}
const robotsParser = createRequire(import.meta.url)('robots-parser') as (url: string, contents: string) => Robots;

/** The user agent the crawler gives, and that robots.txt rules are matched against. */
export const CRAWLER_AGENT = 'kbchat';

export interface CrawlOptions extends FetchLinkOptions {
  /** Pages read at most (the start page included). */
  maxPages: number;
  /** Links followed at most from the start page (0: the start page and the sitemap's pages only). */
  maxDepth: number;
  /** Sitemap files read at most (an index's sitemaps count). */
  maxSitemaps?: number;
}

/** A page read, or one that could not be (its address and why). */
export type CrawlStep = { page: FetchLinkResult } | { url: string; skipped: string };

/** An address as a visited key: no fragment. */
const keyOf = (url: URL) => `${url.origin}${url.pathname}${url.search}`;

/** The <a href> addresses of an HTML page, resolved against its address. */
export function pageLinks(html: string, base: string): URL[] {
  const out: URL[] = [];
  let baseHref = base;
  const parser = new Parser(
    {
      onopentag(name, attrs) {
        if (name === 'base' && attrs.href) baseHref = safeUrl(attrs.href, base)?.href ?? baseHref;
        if (name !== 'a' || !attrs.href || /^\s*(javascript|mailto|tel):/i.test(attrs.href) || attrs.rel?.includes('nofollow')) return;
        const url = safeUrl(attrs.href, baseHref);
        if (url && (url.protocol === 'http:' || url.protocol === 'https:')) out.push(url);
      },
    },
    { decodeEntities: true },
  );
  parser.end(html);
  return out;
}

/** The <loc> addresses of a sitemap, and whether it is an index of sitemaps. */
export function sitemapEntries(xml: string): { index: boolean; locs: string[] } {
  const locs: string[] = [];
  let index = false;
  let inLoc = false;
  let text = '';
  const parser = new Parser(
    {
      onopentag(name) {
        if (name === 'sitemapindex') index = true;
        if (name === 'loc') ((inLoc = true), (text = ''));
      },
      ontext(t) {
        if (inLoc) text += t;
      },
      onclosetag(name) {
        if (name === 'loc' && inLoc) ((inLoc = false), locs.push(text.trim()));
      },
    },
    { xmlMode: true, decodeEntities: true },
  );
  parser.end(xml);
  return { index, locs: locs.filter(Boolean) };
}

function safeUrl(href: string, base: string): URL | undefined {
  try {
    return new URL(href.trim(), base);
  } catch {
    return undefined;
  }
}

/** The site's robots.txt rules; none (everything allowed) when it has none or it cannot be read. */
async function robotsOf(origin: string, opts: FetchLinkOptions) {
  const address = `${origin}/robots.txt`;
  try {
    const raw = await fetchRaw(address, opts);
    return robotsParser(address, raw.data.toString('utf8'));
  } catch (err) {
    // No robots.txt (404) or none readable: the site sets no rules. A refused address is the caller's error.
    if (isIngestError(err) && err.code === 'link_forbidden_address') throw err;
    return robotsParser(address, '');
  }
}

/** The site's sitemap addresses (same origin), following an index one level at a time, up to maxSitemaps files. */
async function sitemapPages(origin: string, declared: string[], opts: CrawlOptions): Promise<URL[]> {
  const files = declared.length ? declared : [`${origin}/sitemap.xml`];
  const pages: URL[] = [];
  for (let read = 0; files.length && read < (opts.maxSitemaps ?? 5); read++) {
    const file = safeUrl(files.shift()!, origin);
    if (!file || file.origin !== origin) continue;
    try {
      const { index, locs } = sitemapEntries((await fetchRaw(file.href, opts)).data.toString('utf8'));
      for (const loc of locs) {
        const url = safeUrl(loc, origin);
        if (!url || url.origin !== origin) continue;
        if (index) files.push(url.href);
        else pages.push(url);
      }
    } catch {
      // A sitemap that cannot be read adds nothing; the links still lead on.
    }
  }
  return pages;
}

/** The site's pages as they are read, breadth first. The start address's own refusal (a bad or forbidden address) is thrown. */
export async function* crawlSite(start: string, opts: CrawlOptions): AsyncGenerator<CrawlStep> {
  let startUrl: URL;
  try {
    startUrl = new URL(start);
  } catch {
    throw new IngestError('link_invalid_url', `${start} is not a valid URL; give an absolute http:// or https:// address.`);
  }
  if (startUrl.protocol !== 'http:' && startUrl.protocol !== 'https:') {
    throw new IngestError('link_invalid_url', `${start}: only http:// and https:// sites can be read, not ${startUrl.protocol}`);
  }
  const fetchOpts: FetchLinkOptions = { ...opts, userAgent: opts.userAgent ?? `${CRAWLER_AGENT}/1.0 (+knowledge base import)` };
  const origin = startUrl.origin;
  const robots = await robotsOf(origin, fetchOpts);
  const allowed = (url: URL) => robots.isAllowed(url.href, CRAWLER_AGENT) !== false;
  if (!allowed(startUrl)) throw new IngestError('link_disallowed', `${start}: the site's robots.txt does not allow ${CRAWLER_AGENT} to read it.`);

  const queue: { url: URL; depth: number }[] = [{ url: startUrl, depth: 0 }];
  const seen = new Set([keyOf(startUrl)]);
  const enqueue = (url: URL, depth: number) => {
    url.hash = '';
    if (url.origin !== origin || seen.has(keyOf(url)) || !allowed(url)) return;
    seen.add(keyOf(url));
    queue.push({ url, depth });
  };
  let sitemapRead = false;
  let read = 0;
  while (queue.length && read < opts.maxPages) {
    const { url, depth } = queue.shift()!;
    read++;
    let page: FetchLinkResult & { links?: URL[] };
    try {
      const raw = await fetchRaw(url.href, fetchOpts);
      const landed = new URL(raw.url);
      if (landed.origin !== origin) {
        yield { url: url.href, skipped: `it redirects to ${landed.origin}, another site` };
        continue;
      }
      page = await readRawLink(raw);
      if (depth < opts.maxDepth && /html/i.test(raw.contentType)) page.links = pageLinks(raw.data.toString('utf8'), raw.url);
    } catch (err) {
      if (read === 1 && isIngestError(err) && (err.code === 'link_forbidden_address' || err.code === 'link_invalid_url')) throw err;
      yield { url: url.href, skipped: isIngestError(err) ? err.message : String((err as Error)?.message ?? err) };
      continue;
    }
    const { links, ...found } = page;
    yield { page: found };
    for (const link of links ?? []) enqueue(link, depth + 1);
    if (!sitemapRead) {
      sitemapRead = true;
      for (const listed of await sitemapPages(origin, robots.getSitemaps(), { ...opts, ...fetchOpts })) enqueue(listed, 1);
    }
  }
}
