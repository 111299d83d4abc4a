// A small HNSW graph (Malkov & Yashunin) over unit vectors, ranked by inner
// product (= cosine), for the per-process vector copies (vector-cache.ts).
// pgvector's HNSW runs inside PGlite's WASM at ~10-20 ms a query; this one
// answers in about a millisecond. Same parameters as pgvector's defaults
// (m 16, 2m links on the ground layer, ef_construction 64), neighbours chosen by
// the paper's heuristic. Nodes are never unlinked: a removed one is marked and
// still routes searches, but is never returned (the cache rebuilds a copy once
// too many are dead). Small graphs are searched exactly (every vector scanned).

export interface HnswOptions {
  m?: number;
  efConstruction?: number;
  /** at most this many live nodes: exact scan instead of the graph (as fast, and exact) */
  exactBelow?: number;
  seed?: number;
}

export interface HnswHit {
  node: number;
  score: number;
}

/** Binary min-heap of (key, node) in typed arrays. */
class Heap {
  keys = new Float64Array(64);
  vals = new Int32Array(64);
  n = 0;

  push(key: number, val: number): void {
    if (this.n === this.keys.length) {
      const keys = new Float64Array(this.n * 2),
        vals = new Int32Array(this.n * 2);
      (keys.set(this.keys), vals.set(this.vals));
      ((this.keys = keys), (this.vals = vals));
    }
    const { keys, vals } = this;
    let i = this.n++;
    while (i > 0) {
      const p = (i - 1) >> 1;
      if (keys[p]! <= key) break;
      ((keys[i] = keys[p]!), (vals[i] = vals[p]!));
      i = p;
    }
    ((keys[i] = key), (vals[i] = val));
  }

  /** Removes the smallest; its node. */
  pop(): number {
    const { keys, vals } = this;
    const top = vals[0]!;
    const n = --this.n;
    const key = keys[n]!,
      val = vals[n]!;
    let i = 0;
    for (;;) {
      let c = 2 * i + 1;
      if (c >= n) break;
      if (c + 1 < n && keys[c + 1]! < keys[c]!) c++;
      if (keys[c]! >= key) break;
      ((keys[i] = keys[c]!), (vals[i] = vals[c]!));
      i = c;
    }
    ((keys[i] = key), (vals[i] = val));
    return top;
  }
}

function dot(a: Float32Array, ao: number, b: Float32Array, bo: number, d: number): number {
  let s0 = 0,
    s1 = 0,
    s2 = 0,
    s3 = 0,
    i = 0;
  for (; i + 3 < d; i += 4) {
    s0 += a[ao + i]! * b[bo + i]!;
    s1 += a[ao + i + 1]! * b[bo + i + 1]!;
    s2 += a[ao + i + 2]! * b[bo + i + 2]!;
    s3 += a[ao + i + 3]! * b[bo + i + 3]!;
  }
  for (; i < d; i++) s0 += a[ao + i]! * b[bo + i]!;
  return s0 + s1 + s2 + s3;
}

export class Hnsw {
  private readonly m: number;
  private readonly m0: number;
  private readonly efc: number;
  private readonly ml: number;
  private readonly exactBelow: number;
  private vectors: Float32Array;
  /** ground-layer links per node: [count, up to m0 nodes] */
  private links0: Int32Array;
  /** each ground-layer link's score (inner product with its node), so a full list takes a new link without recomputing */
  private scores0: Float32Array;
  /** links on layers 1.. per node (most nodes have none) */
  private upper: Int32Array[][] = [];
  private upperScores: Float32Array[][] = [];
  private dead: Uint8Array;
  private visited: Uint32Array;
  private epoch = 0;
  private nodes = 0;
  private liveNodes = 0;
  private entry = -1;
  private top = -1;
  private rng: number;
  private readonly cand = new Heap();
  private readonly res = new Heap();

  constructor(
    readonly dims: number,
    o: HnswOptions = {},
  ) {
    this.m = o.m ?? 16;
    this.m0 = this.m * 2;
    this.efc = o.efConstruction ?? 64;
    this.ml = 1 / Math.log(this.m);
    this.exactBelow = o.exactBelow ?? 2000;
    this.rng = (o.seed ?? 0x9e3779b9) >>> 0 || 1;
    this.vectors = new Float32Array(0);
    this.links0 = new Int32Array(0);
    this.scores0 = new Float32Array(0);
    this.dead = new Uint8Array(0);
    this.visited = new Uint32Array(0);
  }

  /** Nodes ever added (dead ones too). */
  get size(): number {
    return this.nodes;
  }

  /** Nodes the arrays have room for. */
  get capacity(): number {
    return this.dead.length;
  }

  get live(): number {
    return this.liveNodes;
  }

  isDead(node: number): boolean {
    return this.dead[node] === 1;
  }

  /** The node's vector (a view, valid until the next add). */
  vector(node: number): Float32Array {
    return this.vectors.subarray(node * this.dims, (node + 1) * this.dims);
  }

  /** Inner product of the node's vector with q. */
  score(node: number, q: Float32Array): number {
    return dot(this.vectors, node * this.dims, q, 0, this.dims);
  }

  remove(node: number): void {
    if (node < this.nodes && !this.dead[node]) ((this.dead[node] = 1), this.liveNodes--);
  }

  /** Adds a vector (copied); its node number. */
  add(v: ArrayLike<number>): number {
    const d = this.dims,
      id = this.nodes;
    if (v.length !== d) throw new RangeError(`a ${v.length}-dimension vector in a ${d}-dimension graph`);
    this.grow(id + 1);
    this.vectors.set(v, id * d);
    (this.nodes++, this.liveNodes++);
    const level = Math.min(30, Math.floor(-Math.log(this.random()) * this.ml));
    this.upper[id] = Array.from({ length: level }, () => new Int32Array(this.m + 1));
    this.upperScores[id] = Array.from({ length: level }, () => new Float32Array(this.m + 1));
    if (this.entry < 0) {
      ((this.entry = id), (this.top = level));
      return id;
    }
    const q = this.vectors.subarray(id * d, (id + 1) * d);
    let ep = this.entry;
    for (let l = this.top; l > level; l--) ep = this.greedy(q, ep, l);
    for (let l = Math.min(level, this.top); l >= 0; l--) {
      const found = this.searchLayer(q, ep, this.efc, l, false);
      const chosen = this.select(found, this.m);
      const mine = this.linksOf(id, l),
        mineScores = this.scoresOf(id, l);
      mine[0] = chosen.length;
      chosen.forEach((h, i) => ((mine[i + 1] = h.node), (mineScores[i + 1] = h.score)));
      for (const h of chosen) this.link(h.node, id, h.score, l);
      ep = found[0]!.node;
    }
    if (level > this.top) ((this.entry = id), (this.top = level));
    return id;
  }

  /**
   * The k best live nodes for q, best first; ef is the search's candidate
   * list (at least k). Exact while the graph is small.
   */
  search(query: ArrayLike<number>, k: number, ef: number): HnswHit[] {
    if (this.liveNodes === 0 || k <= 0) return [];
    const q = query instanceof Float32Array ? query : Float32Array.from(query);
    if (this.liveNodes <= this.exactBelow) return this.scan(q, k);
    let ep = this.entry;
    for (let l = this.top; l > 0; l--) ep = this.greedy(q, ep, l);
    return this.searchLayer(q, ep, Math.max(ef, k), 0, true).slice(0, k);
  }

  /** Every live node's score: exact. */
  private scan(q: Float32Array, k: number): HnswHit[] {
    const hits: HnswHit[] = [];
    for (let n = 0; n < this.nodes; n++) if (!this.dead[n]) hits.push({ node: n, score: dot(this.vectors, n * this.dims, q, 0, this.dims) });
    return hits.sort((x, y) => y.score - x.score).slice(0, k);
  }

  private random(): number {
    // xorshift32: reproducible graphs (tests), no need for more.
    let x = this.rng;
    ((x ^= x << 13), (x ^= x >>> 17), (x ^= x << 5));
    this.rng = x >>> 0 || 1;
    return (this.rng + 1) / 4294967297;
  }

  /**
   * Room for n nodes at once: a copy's first load knows its count, and
   * doubling to it would hold the old arrays beside the new (at 10,000
   * 512-dim vectors, 16 MB beside 32) and leave up to half unused.
   */
  reserve(n: number): void {
    this.grow(n, n);
  }

  private grow(n: number, exact?: number): void {
    if (n <= this.dead.length) return;
    const cap = exact ?? Math.max(1024, this.dead.length * 2, n);
    const vectors = new Float32Array(cap * this.dims);
    vectors.set(this.vectors);
    const links0 = new Int32Array(cap * (this.m0 + 1));
    links0.set(this.links0);
    const scores0 = new Float32Array(cap * (this.m0 + 1));
    scores0.set(this.scores0);
    this.scores0 = scores0;
    const dead = new Uint8Array(cap);
    dead.set(this.dead);
    ((this.vectors = vectors), (this.links0 = links0), (this.dead = dead));
    this.visited = new Uint32Array(cap);
    this.epoch = 0;
  }

  /** The node's links on layer l: [count, nodes...] (a view for layer 0). */
  private linksOf(node: number, l: number): Int32Array {
    if (l === 0) return this.links0.subarray(node * (this.m0 + 1), (node + 1) * (this.m0 + 1));
    return this.upper[node]![l - 1]!;
  }

  private scoresOf(node: number, l: number): Float32Array {
    if (l === 0) return this.scores0.subarray(node * (this.m0 + 1), (node + 1) * (this.m0 + 1));
    return this.upperScores[node]![l - 1]!;
  }

  private greedy(q: Float32Array, ep: number, l: number): number {
    const d = this.dims;
    let best = dot(this.vectors, ep * d, q, 0, d);
    for (let changed = true; changed;) {
      changed = false;
      const links = this.linksOf(ep, l);
      for (let i = 1; i <= links[0]!; i++) {
        const s = dot(this.vectors, links[i]! * d, q, 0, d);
        if (s > best) ((best = s), (ep = links[i]!), (changed = true));
      }
    }
    return ep;
  }

  /** Best-first search of layer l from ep; up to ef nodes, best first (live ones only when liveOnly). */
  private searchLayer(q: Float32Array, ep: number, ef: number, l: number, liveOnly: boolean): HnswHit[] {
    const d = this.dims,
      vectors = this.vectors,
      visited = this.visited,
      dead = this.dead;
    if (++this.epoch === 0xffffffff) (visited.fill(0), (this.epoch = 1));
    const mark = this.epoch;
    const cand = this.cand,
      res = this.res; // cand: -score (best first); res: score (worst first)
    ((cand.n = 0), (res.n = 0));
    const s0 = dot(vectors, ep * d, q, 0, d);
    visited[ep] = mark;
    cand.push(-s0, ep);
    if (!liveOnly || !dead[ep]) res.push(s0, ep);
    while (cand.n > 0) {
      if (res.n >= ef && -cand.keys[0]! < res.keys[0]!) break;
      const c = cand.pop();
      const links = this.linksOf(c, l);
      for (let i = 1, n = links[0]!; i <= n; i++) {
        const e = links[i]!;
        if (visited[e] === mark) continue;
        visited[e] = mark;
        const s = dot(vectors, e * d, q, 0, d);
        if (res.n < ef || s > res.keys[0]!) {
          cand.push(-s, e);
          if (!liveOnly || !dead[e]) {
            res.push(s, e);
            if (res.n > ef) res.pop();
          }
        }
      }
    }
    const out: HnswHit[] = new Array(res.n);
    for (let i = res.n - 1; i >= 0; i--) {
      const score = res.keys[0]!;
      out[i] = { node: res.pop(), score };
    }
    return out;
  }

  /** The paper's heuristic: a candidate is kept unless an already kept one is nearer to it than the base is. */
  private select(found: HnswHit[], max: number): HnswHit[] {
    if (found.length <= max) return found;
    const d = this.dims,
      kept: HnswHit[] = [];
    for (const c of found) {
      let good = true;
      for (const k of kept) {
        if (dot(this.vectors, c.node * d, this.vectors, k.node * d, d) > c.score) {
          good = false;
          break;
        }
      }
      if (good && kept.push(c) >= max) break;
    }
    return kept;
  }

  /**
   * Adds `to` to node's links on layer l; a full list keeps its best (the
   * paper's simple selection: the heuristic here would cost ~500 inner
   * products a link, most of a build's time).
   */
  private link(node: number, to: number, score: number, l: number): void {
    const links = this.linksOf(node, l),
      scores = this.scoresOf(node, l);
    const max = l === 0 ? this.m0 : this.m;
    const n = links[0]!;
    if (n < max) {
      ((links[n + 1] = to), (scores[n + 1] = score), (links[0] = n + 1));
      return;
    }
    let worst = 1;
    for (let i = 2; i <= n; i++) if (scores[i]! < scores[worst]!) worst = i;
    if (score > scores[worst]!) ((links[worst] = to), (scores[worst] = score));
  }
}
