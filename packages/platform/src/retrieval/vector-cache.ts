// In-memory copies of datasets' vectors, each with its own HNSW graph
// (hnsw.ts), kept in step with the store the way fulltext-cache.ts keeps the
// postings: pgvector's HNSW inside PGlite costs 10-20 ms a query, the copy
// about 1 ms.
//
// How a copy knows it is current: every stored vector has a seq and
// vector_stats says per dataset and dimension the count, the highest seq and
// the removals. A copy is first loaded whole (by index id), then reads what
// came after its last seq (a first load is the same, from seq 0, through the
// (dataset_id, seq) index); when removals or the count disagree it compares
// (index id, seq) pairs with the store and mends the difference (which also
// brings in vectors stored before seqs existed). Until a copy
// is current, searches take the SQL path (vectorSearch): the store stays the
// truth, and several processes each keep their own copies.
import type { PlatformDb } from '../store/database.js';
import { evictLeastRecent, startCatchUp, type CachedCopy } from './copies.js';
import { Hnsw } from './hnsw.js';
import { loadVectors, vectorSeqs, vectorStats, type ScoredId, type StoredVector, type VectorStats } from './search-store.js';
import { dbKey } from '../store/session.js';

/** Vectors read per statement: on PGlite each page holds the event loop (~0.2 ms a 384-dim vector). */
const LOAD_PAGE = 200;
/** Graph work between two turns of the event loop while loading (an insert costs ~0.5-1.5 ms). */
const SLICE_MS = 10;

export interface VectorCacheOptions {
  /**
   * A copy more vectors behind than this catches up in the background while
   * SQL answers; nearer, the search waits. Reading and inserting a vector
   * costs ~1-1.5 ms at 100,000, an SQL search 10-20 ms.
   */
  inlineCatchUp?: number;
  /** Bytes of vectors held over all copies; past it the least recently searched copies go, and a larger dataset is searched in SQL. */
  maxBytes?: number;
  /** HNSW build parameters (pgvector's defaults). */
  m?: number;
  efConstruction?: number;
}

export const VECTOR_CACHE_DEFAULTS: Required<VectorCacheOptions> = { inlineCatchUp: 10, maxBytes: 512 * 1024 * 1024, m: 16, efConstruction: 64 };

interface Copy extends CachedCopy {
  graph: Hnsw;
  /** per node: its index id, data id and seq */
  indexIds: number[];
  dataIds: string[];
  seqs: number[];
  /** index id -> live node */
  nodeOf: Map<number, number>;
  /** data id -> its live nodes (an item's cosine is its best vector's) */
  byData: Map<string, number[]>;
  loaded: boolean;
  lastSeq: number;
  removed: number;
}

export class VectorCache {
  private readonly copies = new Map<string, Copy>();

  private readonly options: Required<VectorCacheOptions>;

  constructor(
    private readonly db: PlatformDb,
    options: VectorCacheOptions = {},
  ) {
    this.options = { ...VECTOR_CACHE_DEFAULTS, ...options };
  }

  /**
   * vectorSearch from memory: the `limit` items nearest to `vector` (an item's
   * score is its best vector's) over the datasets, best first, data id asc on
   * ties; null when some dataset's copy is not current yet (the caller asks
   * the store instead, and the copy catches up meanwhile).
   */
  async search(datasetIds: string[], dims: number, vector: ArrayLike<number>, limit: number, efSearch: number): Promise<ScoredId[] | null> {
    const stats = await vectorStats(this.db, dims, datasetIds);
    const copies: Copy[] = [];
    for (const st of stats) {
      const key = `${st.datasetId}:${dims}`;
      if (st.count === 0) {
        if (!this.copies.get(key)?.catchingUp) this.copies.delete(key);
        continue;
      }
      if (st.count * dims * 4 > this.options.maxBytes) return null;
      let copy = this.copies.get(key);
      if (copy && !copy.catchingUp && copy.graph.size - copy.graph.live > Math.max(1000, copy.graph.size / 4)) {
        this.copies.delete(key); // too many dead nodes: a fresh graph
        copy = undefined;
      }
      if (!copy) this.copies.set(key, (copy = this.newCopy(dims)));
      copy.lastUsed = Date.now();
      if (!isCurrent(copy, st)) {
        const work = copy.catchingUp ?? this.startCatchUp(key, copy, st, dims);
        const behind = copy.loaded ? st.lastSeq - copy.lastSeq : st.count;
        if (behind > this.options.inlineCatchUp) return null;
        await work;
        if (!isCurrent(copy, st)) return null;
      }
      copies.push(copy);
    }
    const q = Float32Array.from(vector);
    const ef = Math.min(Math.max(efSearch, limit), 1000);
    const best = new Map<string, number>();
    for (const copy of copies) {
      // Most items have one vector: `limit` nodes first, three times as many when one item's several crowded others out.
      let hits = copy.graph.search(q, limit, ef);
      const items = new Set(hits.map((h) => copy.dataIds[h.node]!));
      if (items.size < limit && hits.length >= limit) hits = copy.graph.search(q, limit * 3, Math.max(ef, limit * 3));
      for (const h of hits) {
        const id = copy.dataIds[h.node]!;
        if (!(best.get(id)! >= h.score)) best.set(id, h.score);
      }
    }
    return [...best]
      .map(([dataId, score]) => ({ dataId, score }))
      .sort((x, y) => y.score - x.score || (x.dataId < y.dataId ? -1 : x.dataId > y.dataId ? 1 : 0))
      .slice(0, limit);
  }

  /**
   * An item's best cosine to q from the copies a search just used (null when
   * it has no vector there): what loadDataRows computes in SQL, without
   * reading the vectors again. Call only after search() answered non-null.
   */
  cosine(datasetIds: string[], dims: number, q: Float32Array, dataId: string): number | null {
    let best: number | null = null;
    for (const datasetId of datasetIds) {
      const copy = this.copies.get(`${datasetId}:${dims}`);
      for (const node of copy?.byData.get(dataId) ?? []) {
        const s = copy!.graph.score(node, q);
        if (best === null || s > best) best = s;
      }
    }
    return best;
  }

  /** Vectors held now, over all copies (dead ones too). */
  get cachedVectors(): number {
    let n = 0;
    for (const c of this.copies.values()) n += c.graph.size;
    return n;
  }

  private newCopy(dims: number): Copy {
    return {
      graph: new Hnsw(dims, { m: this.options.m, efConstruction: this.options.efConstruction }),
      indexIds: [],
      dataIds: [],
      seqs: [],
      nodeOf: new Map(),
      byData: new Map(),
      loaded: false,
      lastSeq: 0,
      removed: 0,
      catchingUp: null,
      lastUsed: Date.now(),
    };
  }

  private startCatchUp(key: string, copy: Copy, st: VectorStats, dims: number): Promise<void> {
    return startCatchUp(this.copies, key, copy, this.catchUp(copy, st, dims), () => this.evict());
  }

  private async catchUp(copy: Copy, st: VectorStats, dims: number): Promise<void> {
    const slice = new Slicer();
    if (!copy.loaded) copy.graph.reserve(st.count);
    while (copy.lastSeq < st.lastSeq) {
      const page = await loadVectors(this.db, dims, st.datasetId, { afterSeq: copy.lastSeq, limit: LOAD_PAGE });
      for (const v of page) {
        if (this.put(copy, v) && copy.loaded) copy.removed++; // a replaced vector: the store counted its removal
        copy.lastSeq = Math.max(copy.lastSeq, v.seq);
        await slice.turn();
      }
      if (page.length < LOAD_PAGE) {
        // The newest rows can be gone already (deleted); removals are mended below.
        copy.lastSeq = Math.max(copy.lastSeq, st.lastSeq);
        break;
      }
    }
    if (!copy.loaded) ((copy.loaded = true), (copy.removed = st.removed));
    if (copy.removed === st.removed && copy.graph.live === st.count) return;
    // Removals (or anything else amiss): compare (index id, seq) with the store.
    const stored = await vectorSeqs(this.db, dims, st.datasetId);
    for (const [indexId, node] of [...copy.nodeOf]) {
      if (stored.get(indexId) !== copy.seqs[node]) this.drop(copy, indexId, node);
    }
    const missing = [...stored.keys()].filter((id) => !copy.nodeOf.has(id));
    for (let i = 0; i < missing.length; i += LOAD_PAGE) {
      for (const v of await loadVectors(this.db, dims, st.datasetId, { indexIds: missing.slice(i, i + LOAD_PAGE) })) {
        this.put(copy, v);
        copy.lastSeq = Math.max(copy.lastSeq, v.seq);
        await slice.turn();
      }
    }
    copy.removed = st.removed;
  }

  /** Adds a stored vector; true when it replaced another version of the same index id (an unchanged one is skipped). */
  private put(copy: Copy, v: StoredVector): boolean {
    const old = copy.nodeOf.get(v.indexId);
    if (old !== undefined) {
      if (copy.seqs[old] === v.seq) return false;
      this.drop(copy, v.indexId, old);
    }
    const node = copy.graph.add(v.vector);
    ((copy.indexIds[node] = v.indexId), (copy.dataIds[node] = v.dataId), (copy.seqs[node] = v.seq));
    copy.nodeOf.set(v.indexId, node);
    const nodes = copy.byData.get(v.dataId);
    if (nodes) nodes.push(node);
    else copy.byData.set(v.dataId, [node]);
    return old !== undefined;
  }

  private drop(copy: Copy, indexId: number, node: number): void {
    copy.graph.remove(node);
    copy.nodeOf.delete(indexId);
    const dataId = copy.dataIds[node]!;
    const rest = (copy.byData.get(dataId) ?? []).filter((n) => n !== node);
    if (rest.length) copy.byData.set(dataId, rest);
    else copy.byData.delete(dataId);
  }

  private evict(): void {
    evictLeastRecent(this.copies, (c) => c.graph.size * c.graph.dims * 4, this.options.maxBytes);
  }
}

function isCurrent(copy: Copy, st: VectorStats): boolean {
  return copy.loaded && copy.lastSeq >= st.lastSeq && copy.removed === st.removed && copy.graph.live === st.count;
}

/** Yields to the event loop every SLICE_MS of work, so that a load does not hold other requests. */
class Slicer {
  private since = performance.now();

  async turn(): Promise<void> {
    if (performance.now() - this.since < SLICE_MS) return;
    await new Promise((resolve) => setImmediate(resolve));
    this.since = performance.now();
  }
}

const caches = new WeakMap<object, VectorCache>();

/** The process's vector cache for this database (one per store, whatever Kysely object reaches it). */
export function vectorCacheOf(db: PlatformDb): VectorCache {
  let cache = caches.get(dbKey(db));
  if (!cache) caches.set(dbKey(db), (cache = new VectorCache(db)));
  return cache;
}
