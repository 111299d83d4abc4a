// How to fuse BM25 with local-embed on SciFact, fast: `node packages/platform/bench/fusion-grid.mjs [--split test]`.
// Scores every query against every abstract in memory (BM25 with the
// platform's analyzer and formula, k1 1.5 b 0.4; an abstract's cosine is its
// best chunk's) from the vectors retrieval-bench.mjs cached, then ranks the
// top 100 of each list by each fusion under a grid of embedding weights.
// Choices are made on TRAIN (the default split); --split test reports.
// retrieval-bench.mjs checks the chosen default through the platform itself.
//   BENCH_CHUNKS_PER_DOC=n   only each abstract's first n chunks (as there)
import { scifactPresent, collapseSpace } from './scifact-corpus.mjs';
import { SCIFACT_DIR, prepareScifactVectors } from './scifact-vectors.mjs';
import { ndcgAt, recallAt } from './metrics.mjs';

const args = process.argv.slice(2);
const split = args.includes('--split') ? args[args.indexOf('--split') + 1] : 'train';
if (!scifactPresent(SCIFACT_DIR)) {
  console.log(`SciFact not found at ${SCIFACT_DIR}: skipped`);
  process.exit(0);
}
const { analyze } = await import('../dist/retrieval/analyzer.js');
process.env.BENCH_CACHED_ONLY = '1';
const chunksPerDoc = Number(process.env.BENCH_CHUNKS_PER_DOC ?? Infinity);
const data = await prepareScifactVectors({ log: console.log, chunksPerDoc });
const docs = data.docs;
const vectorsOf = docs.map((d) => d.chunks.map((t) => data.vec(t)).filter(Boolean));

// BM25 as the platform computes it (retrieval/fulltext-index.ts): Lucene idf, terms counted once per query.
const K1 = 1.5,
  B = 0.4;
const termFreqs = docs.map((d) => {
  const m = new Map();
  for (const t of analyze(`${d.title}\n${d.text}`)) m.set(t, (m.get(t) ?? 0) + 1);
  return m;
});
const lengths = termFreqs.map((m) => [...m.values()].reduce((a, x) => a + x, 0));
const avgdl = lengths.reduce((a, x) => a + x, 0) / lengths.length;
const df = new Map();
for (const m of termFreqs) for (const t of m.keys()) df.set(t, (df.get(t) ?? 0) + 1);
const idf = (t) => Math.log(1 + (docs.length - df.get(t) + 0.5) / (df.get(t) + 0.5));
const bm25 = (text) => {
  const terms = [...new Set(analyze(text))].filter((t) => df.has(t));
  return termFreqs.map((m, i) =>
    terms.reduce((s, t) => {
      const f = m.get(t);
      return f ? s + (idf(t) * f * (K1 + 1)) / (f + K1 * (1 - B + (B * lengths[i]) / avgdl)) : s;
    }, 0),
  );
};
const dot = (a, b) => {
  let s = 0;
  for (let i = 0; i < a.length; i++) s += a[i] * b[i];
  return s;
};

const K = 100;
const top = (scores) =>
  scores
    .map((s, i) => [i, s])
    .sort((a, b) => b[1] - a[1])
    .slice(0, K);
const queries = [...data.qrels[split]]
  .filter(([qid]) => data.queries.has(qid) && data.vec(data.queries.get(qid)))
  .map(([qid, rel]) => {
    const text = collapseSpace(data.queries.get(qid));
    const qv = data.vec(text);
    const full = bm25(text);
    const cos = vectorsOf.map((vs) => (vs.length ? Math.max(...vs.map((v) => dot(qv, v))) : 0));
    return { rel, full, cos, fullTop: top(full), denseTop: top(cos) };
  });

const minMax = (list) => {
  const lo = Math.min(...list.map((p) => p[1])),
    hi = Math.max(...list.map((p) => p[1]));
  return new Map(list.map(([i, s]) => [i, hi > lo ? (s - lo) / (hi - lo) : 1]));
};
const union = (q) => [...new Set([...q.fullTop, ...q.denseTop].map((p) => p[0]))];
const zScores = (values) => {
  const mean = values.reduce((a, x) => a + x, 0) / values.length;
  const sd = Math.sqrt(values.reduce((a, x) => a + (x - mean) ** 2, 0) / values.length) || 1;
  return values.map((x) => (x - mean) / sd);
};
/** Each fusion: (query, weight) -> [abstract index, fused score][] */
const FUSIONS = {
  // the default before: min-max within each top-100 list, an item missing from a list gets 0 there
  'min-max per list': (q, w) => {
    const f = minMax(q.fullTop),
      d = minMax(q.denseTop),
      out = new Map();
    for (const [i, v] of f) out.set(i, (1 - w) * v);
    for (const [i, v] of d) out.set(i, (out.get(i) ?? 0) + w * v);
    return [...out];
  },
  'min-max over both, exact scores': (q, w) => {
    const ids = union(q),
      f = minMax(ids.map((i) => [i, q.full[i]])),
      d = minMax(ids.map((i) => [i, q.cos[i]]));
    return ids.map((i) => [i, (1 - w) * f.get(i) + w * d.get(i)]);
  },
  'z-scores over both': (q, w) => {
    const ids = union(q),
      f = zScores(ids.map((i) => q.full[i])),
      d = zScores(ids.map((i) => q.cos[i]));
    return ids.map((i, j) => [i, (1 - w) * f[j] + w * d[j]]);
  },
  // the default now (retrieval/fusion.ts linearFuse): BM25 over the query's best, the raw cosine
  'fixed scales (default)': (q, w) => {
    const best = q.fullTop[0]?.[1] || 1;
    return union(q).map((i) => [i, (1 - w) * (q.full[i] / best) + w * q.cos[i]]);
  },
  'rrf (k 60)': (q, w) => {
    const out = new Map();
    q.fullTop.forEach(([i], r) => out.set(i, (1 - w) / (61 + r)));
    q.denseTop.forEach(([i], r) => out.set(i, (out.get(i) ?? 0) + w / (61 + r)));
    return [...out];
  },
};

function evaluate(rank) {
  let ndcg = 0,
    recall = 0;
  for (const q of queries) {
    const ranked = rank(q)
      .sort((a, b) => b[1] - a[1])
      .map(([i]) => docs[i].id);
    ndcg += ndcgAt(ranked, q.rel, 10);
    recall += recallAt(ranked, q.rel, 100);
  }
  return `${(ndcg / queries.length).toFixed(4)} / ${(recall / queries.length).toFixed(3)}`;
}

const vectors = vectorsOf.reduce((n, vs) => n + vs.length, 0);
console.log(`\n${split.toUpperCase()}, ${queries.length} queries, ${vectors} chunk vectors; nDCG@10 / Recall@100`);
console.log(`full text alone: ${evaluate((q) => q.fullTop)}    embedding alone: ${evaluate((q) => q.denseTop)}`);
const WEIGHTS = [0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7];
console.log(`| fusion | ${WEIGHTS.map((w) => `w ${w}`).join(' | ')} |`);
console.log(`|---|${WEIGHTS.map(() => '---').join('|')}|`);
for (const [name, fuse] of Object.entries(FUSIONS)) console.log(`| ${name} | ${WEIGHTS.map((w) => evaluate((q) => fuse(q, w))).join(' | ')} |`);
