// nDCG@k and Recall@k over documents, binary or graded qrels (BEIR's definitions).
export function ndcgAt(ranked, rel, k) {
  let dcg = 0;
  for (let i = 0; i < Math.min(k, ranked.length); i++) {
    const g = rel.get(ranked[i]) ?? 0;
    if (g > 0) dcg += (2 ** g - 1) / Math.log2(i + 2);
  }
  const ideal = [...rel.values()].sort((a, b) => b - a).slice(0, k);
  let idcg = 0;
  ideal.forEach((g, i) => (idcg += (2 ** g - 1) / Math.log2(i + 2)));
  return idcg > 0 ? dcg / idcg : 0;
}

export function recallAt(ranked, rel, k) {
  if (rel.size === 0) return 0;
  let hit = 0;
  for (const id of ranked.slice(0, k)) if (rel.has(id)) hit++;
  return hit / rel.size;
}

/** Documents in order of their best chunk, each once. */
export function dedupeToDocs(dataIds, docOf) {
  const seen = new Set();
  const out = [];
  for (const id of dataIds) {
    const doc = docOf(id);
    if (!seen.has(doc)) (seen.add(doc), out.push(doc));
  }
  return out;
}
