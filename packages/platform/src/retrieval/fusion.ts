// Fusing ranked lists. Weighted reciprocal-rank fusion is FastGPT's. Linear
// fusion adds scores on fixed scales instead: BM25 over the best BM25 of the
// query (0..1) and the raw cosine, each item with its exact cosine (the full-text
// list's items too). Measured on SciFact train with a small local model: RRF,
// and min-max within each top-100 list (which stretches a weak model's tiny
// cosine differences over 0..1), lost to BM25 alone; this gained (bench/README.md).
import type { FusionMethod } from '@kbchat/contracts';
import type { ScoredId } from './search-store.js';

export type { FusionMethod };

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

/**
 * (1 - weight) * bm25 / best bm25 + weight * cosine, over the items of both
 * lists. `cosines` holds every item's best cosine to the query (an item with no
 * vector has none and counts 0 there); an item missing from the full-text list
 * has BM25 0 (it has few of the query's terms, or none).
 */
export function linearFuse(full: ScoredId[], dense: ScoredId[], weight: number, cosines: Map<string, number>): ScoredId[] {
  const best = full.reduce((m, r) => Math.max(m, r.score), 0);
  const scores = new Map<string, number>();
  for (const r of full) scores.set(r.dataId, best > 0 ? (1 - weight) * (r.score / best) : 0);
  for (const r of dense) if (!scores.has(r.dataId)) scores.set(r.dataId, 0);
  for (const [id, s] of scores) scores.set(id, s + weight * (cosines.get(id) ?? 0));
  return sortScores(scores);
}

function sortScores(scores: Map<string, number>): ScoredId[] {
  return [...scores]
    .map(([dataId, score]) => ({ dataId, score }))
    .sort((a, b) => b.score - a.score || (a.dataId < b.dataId ? -1 : a.dataId > b.dataId ? 1 : 0));
}
