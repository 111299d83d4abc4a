// Fusing ranked lists. Weighted reciprocal-rank fusion is FastGPT's; min-max
// linear fusion keeps how far ahead a result is, which matters when one list
// (a small local embedding model) is much weaker than the other: measured on
// SciFact, RRF with a weak dense list lost to BM25 alone while linear fusion
// gained (docs in retrieval/README.md and the bench).
import type { ScoredId } from './search-store.js';

export type FusionMethod = 'rrf' | 'linear';

export const RRF_K = 60;

export interface WeightedList {
  list: ScoredId[];
  weight: number;
}

/** sum of weight / (k + rank), ranks from 1. */
export function rrfFuse(lists: WeightedList[], k = RRF_K): ScoredId[] {
  const scores = new Map<string, number>();
  for (const { list, weight } of lists) {
    list.forEach((item, i) => scores.set(item.dataId, (scores.get(item.dataId) ?? 0) + weight / (k + i + 1)));
  }
  return sortScores(scores);
}

/** sum of weight * (score - min) / (max - min) per list; an item absent from a list gets 0 there. */
export function linearFuse(lists: WeightedList[]): ScoredId[] {
  const scores = new Map<string, number>();
  for (const { list, weight } of lists) {
    if (list.length === 0) continue;
    let min = Infinity, max = -Infinity;
    for (const r of list) (min = Math.min(min, r.score)), (max = Math.max(max, r.score));
    const span = max - min;
    for (const r of list) {
      const norm = span > 0 ? (r.score - min) / span : 1;
      scores.set(r.dataId, (scores.get(r.dataId) ?? 0) + weight * norm);
    }
    for (const other of lists) for (const r of other.list) if (!scores.has(r.dataId)) scores.set(r.dataId, 0);
  }
  return sortScores(scores);
}

export function fuse(method: FusionMethod, lists: WeightedList[]): ScoredId[] {
  return method === 'rrf' ? rrfFuse(lists) : linearFuse(lists);
}

function sortScores(scores: Map<string, number>): ScoredId[] {
  return [...scores].map(([dataId, score]) => ({ dataId, score })).sort((a, b) => b.score - a.score || (a.dataId < b.dataId ? -1 : a.dataId > b.dataId ? 1 : 0));
}
