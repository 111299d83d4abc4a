// One dataset's BM25 postings in memory: what bm25Search computes in SQL, at a
// fraction of the cost (no per-posting rows to read and aggregate). The store
// stays the source of truth; fulltext-cache.ts keeps this in step with it.
import type { ScoredId } from './search-store.js';

/** Typed arrays (6 bytes a posting, ~3x less than number arrays), grown by doubling. */
interface Postings {
  /** document slots, in insertion order */
  slots: Int32Array;
  /** term frequency per entry of slots (capped at 65,535: BM25 has long saturated there) */
  tfs: Uint16Array;
  n: number;
}

function append(p: Postings, slot: number, tf: number): void {
  if (p.n === p.slots.length) {
    const slots = new Int32Array(p.n * 2),
      tfs = new Uint16Array(p.n * 2);
    (slots.set(p.slots), tfs.set(p.tfs));
    ((p.slots = slots), (p.tfs = tfs));
  }
  p.slots[p.n] = slot;
  p.tfs[p.n] = Math.min(tf, 65535);
  p.n++;
}

function newPostings(capacity = 2): Postings {
  return { slots: new Int32Array(capacity), tfs: new Uint16Array(capacity), n: 0 };
}

export interface Bm25Params {
  k1: number;
  b: number;
}

/** Corpus-wide figures: BM25 over several datasets treats them as one corpus. */
export interface CorpusStats {
  docCount: number;
  avgdl: number;
}

export class FullTextIndex {
  private readonly postings = new Map<string, Postings>();
  /** per slot: its data id, or null once removed (postings keep dead slots until compaction) */
  private ids: (string | null)[] = [];
  private lengths: number[] = [];
  private readonly slotOf = new Map<string, number>();
  private totalLen = 0;
  /** scratch per slot, reused by every query (reset after use), and the slots a query touched */
  private scores = new Float64Array(0);
  private touched = new Int32Array(0);

  get size(): number {
    return this.slotOf.size;
  }

  get totalLength(): number {
    return this.totalLen;
  }

  dataIds(): IterableIterator<string> {
    return this.slotOf.keys();
  }

  has(dataId: string): boolean {
    return this.slotOf.has(dataId);
  }

  /** Adds a document (replacing one with the same id): its postings (term -> frequency) and BM25 length. */
  add(dataId: string, terms: Map<string, number>, len: number): void {
    this.remove(dataId);
    const slot = this.ids.length;
    this.ids.push(dataId);
    this.lengths.push(len);
    this.slotOf.set(dataId, slot);
    this.totalLen += len;
    for (const [term, tf] of terms) {
      let p = this.postings.get(term);
      if (!p) this.postings.set(term, (p = newPostings()));
      append(p, slot, tf);
    }
  }

  remove(dataId: string): boolean {
    const slot = this.slotOf.get(dataId);
    if (slot === undefined) return false;
    this.slotOf.delete(dataId);
    this.ids[slot] = null;
    this.totalLen -= this.lengths[slot]!;
    // Dead slots cost memory and scan time; past a quarter of all, rebuild without them.
    if (this.ids.length > 64 && this.ids.length - this.slotOf.size > this.ids.length / 4) this.compact();
    return true;
  }

  /** Live documents holding the term. */
  docFrequency(term: string): number {
    const p = this.postings.get(term);
    if (!p) return 0;
    if (this.ids.length === this.slotOf.size) return p.n; // no dead slots: every posting is live
    let n = 0;
    for (let i = 0; i < p.n; i++) if (this.ids[p.slots[i]!] !== null) n++;
    return n;
  }

  /**
   * BM25 scores of this index's documents for the query, with idf from `df`
   * (document frequencies over the whole corpus searched) and corpus figures.
   * Same formula and order as bm25Search: Lucene's idf, score desc, data id asc.
   */
  score(terms: Map<string, number>, df: Map<string, number>, corpus: CorpusStats, p: Bm25Params, limit: number): ScoredId[] {
    if (this.scores.length < this.ids.length) {
      this.scores = new Float64Array(Math.max(this.ids.length, this.scores.length * 2));
    }
    const { scores, ids, lengths } = this;
    if (this.touched.length < ids.length) this.touched = new Int32Array(scores.length);
    const touched = this.touched;
    let nt = 0;
    // Dead slots are skipped only when there are any (compact() keeps them under a quarter).
    const anyDead = ids.length !== this.slotOf.size;
    const norm = p.k1 * (1 - p.b),
      perLen = (p.k1 * p.b) / Math.max(corpus.avgdl, 1e-9);
    for (const [term, qtf] of terms) {
      const list = this.postings.get(term);
      const n = df.get(term) ?? 0;
      if (!list || n === 0) continue;
      const idf = qtf * Math.log(1 + (corpus.docCount - n + 0.5) / (n + 0.5)),
        k1p1 = p.k1 + 1;
      const { slots, tfs } = list;
      for (let i = 0, len = list.n; i < len; i++) {
        const s = slots[i]!;
        if (anyDead && ids[s] === null) continue;
        const tf = tfs[i]!;
        // A matched document's score is > 0 (idf > 0, tf >= 1): 0 means first touched.
        if (scores[s] === 0) touched[nt++] = s;
        scores[s] += (idf * tf * k1p1) / (tf + norm + perLen * lengths[s]!);
      }
    }
    // Objects only for the documents that can make the cut (often a few percent of those touched).
    let cut = -Infinity;
    if (nt > limit) {
      const values = new Float64Array(nt);
      for (let i = 0; i < nt; i++) values[i] = scores[touched[i]!]!;
      cut = kthLargest(values, limit);
    }
    const out: ScoredId[] = [];
    for (let i = 0; i < nt; i++) {
      const s = touched[i]!;
      if (scores[s]! >= cut) out.push({ dataId: ids[s]!, score: scores[s]! });
      scores[s] = 0;
    }
    return topScored(out, limit);
  }

  private compact(): void {
    const remap = new Int32Array(this.ids.length).fill(-1);
    const ids: string[] = [],
      lengths: number[] = [];
    this.ids.forEach((id, slot) => {
      if (id === null) return;
      remap[slot] = ids.length;
      this.slotOf.set(id, ids.length);
      ids.push(id);
      lengths.push(this.lengths[slot]!);
    });
    for (const [term, p] of this.postings) {
      const kept = newPostings(Math.max(2, p.n));
      for (let i = 0; i < p.n; i++) {
        const to = remap[p.slots[i]!]!;
        if (to >= 0) append(kept, to, p.tfs[i]!);
      }
      if (kept.n) this.postings.set(term, kept);
      else this.postings.delete(term);
    }
    this.ids = ids;
    this.lengths = lengths;
  }
}

/** Best `limit` by score desc, then data id asc (bm25Search's order). */
export function topScored(list: ScoredId[], limit: number): ScoredId[] {
  const byRank = (x: ScoredId, y: ScoredId) => y.score - x.score || (x.dataId < y.dataId ? -1 : x.dataId > y.dataId ? 1 : 0);
  if (list.length <= limit) return list.sort(byRank);
  // A cut at the limit-th best score first: most documents match a common term only weakly.
  const cut = kthLargest(
    Float64Array.from(list, (r) => r.score),
    limit,
  );
  return list
    .filter((r) => r.score >= cut)
    .sort(byRank)
    .slice(0, limit);
}

/** The k-th largest value (1-based) by quickselect, O(n); reorders `values`. */
export function kthLargest(values: Float64Array, k: number): number {
  let lo = 0,
    hi = values.length - 1;
  const want = k - 1; // index in descending order
  while (lo < hi) {
    const pivot = values[(lo + hi) >>> 1]!;
    let i = lo,
      j = hi;
    while (i <= j) {
      while (values[i]! > pivot) i++;
      while (values[j]! < pivot) j--;
      if (i <= j) {
        const t = values[i]!;
        values[i++] = values[j]!;
        values[j--] = t;
      }
    }
    if (want <= j) hi = j;
    else if (want >= i) lo = i;
    else break;
  }
  return values[want]!;
}
