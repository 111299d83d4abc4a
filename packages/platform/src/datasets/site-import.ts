// A website's pages imported from a start address (issue 29): the crawler
// (ingest/site-crawl.ts) reads them, and each page with text becomes a link
// collection, as one imported by its address would (so it can be synced). A
// page the knowledge base has already, by its address, is skipped: syncing it
// is what updates it.
import type { WebsiteImported } from '@kbchat/contracts';
import { crawlSite, isIngestError } from '../ingest/index.js';
import type { TextCollectionInput } from './types.js';

export interface SiteImport {
  datasetId: string;
  url: string;
  maxPages: number;
  maxDepth: number;
  settings: Omit<TextCollectionInput, 'text' | 'name' | 'datasetId'>;
  allowPrivate: boolean;
}

export interface SiteImportSteps {
  /** The link collection of this address in the dataset, if there is one. */
  existing(datasetId: string, url: string): Promise<string | undefined>;
  create(input: TextCollectionInput): Promise<{ collectionId: string; insertLen: number }>;
}

export async function importSite(steps: SiteImportSteps, o: SiteImport): Promise<WebsiteImported> {
  const out: WebsiteImported = { collections: [], skipped: [] };
  for await (const step of crawlSite(o.url, { maxPages: o.maxPages, maxDepth: o.maxDepth, allowPrivate: o.allowPrivate })) {
    if ('skipped' in step) {
      out.skipped.push({ url: step.url, reason: step.skipped });
      continue;
    }
    const { page } = step;
    const already = await steps.existing(o.datasetId, page.url);
    if (already) {
      out.skipped.push({ url: page.url, reason: `already in this knowledge base (collection ${already}); sync it to read it again` });
      continue;
    }
    if (!page.text.trim()) {
      out.skipped.push({ url: page.url, reason: 'the page has no text' });
      continue;
    }
    const name = page.title || page.url;
    try {
      const made = await steps.create({ ...o.settings, datasetId: o.datasetId, name, text: page.text, type: 'link', source: page.url });
      out.collections.push({ collectionId: made.collectionId, url: page.url, name, insertLen: made.insertLen });
    } catch (err) {
      if (!isIngestError(err) && (err as { status?: number }).status !== 400) throw err;
      out.skipped.push({ url: page.url, reason: (err as Error).message });
    }
  }
  return out;
}
