// In-memory copies of datasets' BM25 postings (FullTextIndex), kept in step
// with the store, so that a full-text search costs one small statement (the
// datasets' stats row) instead of reading every posting of every query term.
//
// How a copy knows it is current: every indexed document has a sequence number
// and the stats row says the highest so far (last_seq) and how many documents
// were ever removed. A copy reads what came after its last seq; when removals
// or counts disagree (a deletion) it compares its ids with the store's and
// mends the difference. (A dataset's seqs commit in order: every insert
// updates its stats row, whose lock holds the next writer until commit.)
// Several platform processes on one PostgreSQL each keep their own copies.
// Until a copy is current, searches take the SQL path (bm25Search): same ranking.
import type { PlatformDb } from '../store/database.js';
import { evictLeastRecent, startCatchUp, type CachedCopy } from './copies.js';
import { FullTextIndex, topScored, type Bm25Params } from './fulltext-index.js';
import { fullTextStats, indexedDataIds, loadFullTextDocs, type FullTextStats, type ScoredId } from './search-store.js';
import { dbKey } from '../store/session.js';

/** Documents read per statement while loading: on PGlite each page holds the event loop (~80 ms for 200 documents of ~100 terms). */
const LOAD_PAGE = 200;
export interface FullTextCacheOptions {
  /**
   * A copy more documents behind than this catches up in the background
   * (searches use SQL meanwhile); nearer, the search waits for it. Reading a
   * document's postings costs ~0.35 ms on PGlite, a SQL BM25 search 10-60 ms
   * at 10,000-30,000 documents: past ~100 documents, waiting would cost more.
   */
  inlineCatchUp?: number;
  /** Documents held over all copies (~1 KB each for 100-term chunks); past it the least recently searched copies go. */
  maxDocs?: number;
}

export const FULLTEXT_CACHE_DEFAULTS: Required<FullTextCacheOptions> = { inlineCatchUp: 100, maxDocs: 500_000 };

interface Copy extends CachedCopy {
  index: FullTextIndex;
  lastSeq: number;
  /** removals accounted for (stats.removed once current) */
  removed: number;
}

export class FullTextCache {
  private readonly copies = new Map<string, Copy>();

  private readonly options: Required<FullTextCacheOptions>;

  constructor(
    private readonly db: PlatformDb,
    options: FullTextCacheOptions = {},
  ) {
    this.options = { ...FULLTEXT_CACHE_DEFAULTS, ...options };
  }

  /**
   * BM25 over the datasets as one corpus (bm25Search's formula and order), from
   * memory; null when some dataset's copy is not current yet (the caller asks
   * the store instead, and the copy catches up meanwhile).
   */
  async search(datasetIds: string[], terms: Map<string, number>, params: Bm25Params, limit: number): Promise<ScoredId[] | null> {
    const stats = await fullTextStats(this.db, datasetIds);
    const copies: Copy[] = [];
    for (const st of stats) {
      if (st.docCount === 0) {
        if (!this.copies.get(st.datasetId)?.catchingUp) this.copies.delete(st.datasetId); // emptied: nothing to keep
        continue;
      }
      if (st.docCount > this.options.maxDocs) return null;
      const copy = this.copyOf(st.datasetId);
      copy.lastUsed = Date.now();
      if (!isCurrent(copy, st)) {
        const work = copy.catchingUp ?? this.startCatchUp(copy, st);
        if (st.lastSeq - copy.lastSeq > this.options.inlineCatchUp) return null;
        await work;
        if (!isCurrent(copy, st)) return null;
      }
      copies.push(copy);
    }
    if (copies.length === 0) return [];
    const docCount = copies.reduce((n, c) => n + c.index.size, 0);
    const totalLength = copies.reduce((n, c) => n + c.index.totalLength, 0);
    const df = new Map<string, number>();
    for (const term of terms.keys())
      df.set(
        term,
        copies.reduce((n, c) => n + c.index.docFrequency(term), 0),
      );
    const corpus = { docCount, avgdl: totalLength / Math.max(docCount, 1) };
    const lists = copies.map((c) => c.index.score(terms, df, corpus, params, limit));
    return lists.length === 1 ? lists[0]! : topScored(lists.flat(), limit);
  }

  /** Documents held now, over all copies. */
  get cachedDocs(): number {
    let n = 0;
    for (const c of this.copies.values()) n += c.index.size;
    return n;
  }

  private copyOf(datasetId: string): Copy {
    let copy = this.copies.get(datasetId);
    if (!copy) this.copies.set(datasetId, (copy = { index: new FullTextIndex(), lastSeq: 0, removed: 0, catchingUp: null, lastUsed: Date.now() }));
    return copy;
  }

  private startCatchUp(copy: Copy, st: FullTextStats): Promise<void> {
    return startCatchUp(this.copies, st.datasetId, copy, this.catchUp(copy, st), () => this.evict());
  }

  private async catchUp(copy: Copy, st: FullTextStats): Promise<void> {
    // Documents indexed since the copy's last seq (a re-indexed one replaces its old copy).
    while (copy.lastSeq < st.lastSeq) {
      const docs = await loadFullTextDocs(this.db, st.datasetId, { afterSeq: copy.lastSeq, limit: LOAD_PAGE });
      for (const d of docs) {
        if (copy.index.has(d.dataId)) copy.removed++;
        copy.index.add(d.dataId, d.terms, d.length);
        copy.lastSeq = Math.max(copy.lastSeq, d.seq);
      }
      if (docs.length < LOAD_PAGE) {
        // The newest rows can be gone already (deleted); removals are mended below.
        copy.lastSeq = Math.max(copy.lastSeq, st.lastSeq);
        break;
      }
      await new Promise((resolve) => setImmediate(resolve));
    }
    if (copy.removed === st.removed && copy.index.size === st.docCount) return;
    // Removals (or anything else amiss): compare ids with the store.
    const live = await indexedDataIds(this.db, st.datasetId);
    const liveSet = new Set(live);
    for (const id of [...copy.index.dataIds()]) if (!liveSet.has(id)) copy.index.remove(id);
    const missing = live.filter((id) => !copy.index.has(id));
    for (let i = 0; i < missing.length; i += LOAD_PAGE) {
      for (const d of await loadFullTextDocs(this.db, st.datasetId, { dataIds: missing.slice(i, i + LOAD_PAGE) })) {
        copy.index.add(d.dataId, d.terms, d.length);
        copy.lastSeq = Math.max(copy.lastSeq, d.seq);
      }
    }
    copy.removed = st.removed;
  }

  private evict(): void {
    evictLeastRecent(this.copies, (c) => c.index.size, this.options.maxDocs);
  }
}

function isCurrent(copy: Copy, st: FullTextStats): boolean {
  return copy.lastSeq >= st.lastSeq && copy.removed === st.removed && copy.index.size === st.docCount && copy.index.totalLength === st.totalLength;
}

const caches = new WeakMap<object, FullTextCache>();

/** The process's full-text cache for this database (one per store, whatever Kysely object reaches it). */
export function fullTextCacheOf(db: PlatformDb): FullTextCache {
  let cache = caches.get(dbKey(db));
  if (!cache) caches.set(dbKey(db), (cache = new FullTextCache(db)));
  return cache;
}
