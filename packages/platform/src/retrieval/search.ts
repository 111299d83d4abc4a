// searchDataset: the one retrieval path behind searchTest and chat, so both
// rank alike. Per query: full-text (BM25) and/or embedding recall, fused;
// several queries (query extension) fused by RRF; then optional rerank, the
// similarity filter, and the token budget.
import type { SearchMode, ScoreType, SearchScore, SearchResultItem, DropReason, DroppedItem, SearchResult } from '@kbchat/contracts';
import { countTextTokens } from '@kbchat/shared';
import type { PlatformDb } from '../store/database.js';
import { analyze } from './analyzer.js';
import { RetrievalError } from './errors.js';
import { fullTextCacheOf } from './fulltext-cache.js';
import { linearFuse, rrfFuse, type FusionMethod } from './fusion.js';
import { bestCosines, bm25Search, loadDataRows, vectorSearch, type DataRow, type ScoredId } from './search-store.js';
import { checkUnitVectors } from './store.js';
import { dataTokens } from './token-counts.js';
import { vectorCacheOf } from './vector-cache.js';

export type { SearchMode, ScoreType, SearchScore, SearchResultItem, DropReason, DroppedItem, SearchResult };

/** Chosen on SciFact train (see bench/README.md); test was not looked at to choose. */
export const SEARCH_DEFAULTS = {
  k1: 1.5,
  b: 0.4,
  fusion: 'linear' as FusionMethod,
  embeddingWeight: 0.5,
  /** candidates each recall list brings */
  candidates: 100,
  efSearch: 100,
  tokenBudget: 5000,
  /** most candidates sent to the reranker */
  rerankCandidates: 50,
  /** most of the found-but-dropped results a search reports (the first, in rank order) */
  droppedReported: 20,
  /** characters of q and of a a dropped result keeps (they are stored with each chat answer) */
  droppedTextChars: 300,
};

export interface SearchParams {
  datasetIds: string[];
  text: string;
  /** Alternative queries from query extension; searched too and fused with the question by RRF. */
  extensionQueries?: string[];
  mode: SearchMode;
  /** 0..1, the embedding list's share in mixed recall (the rest is full text's). */
  embeddingWeight?: number;
  fusion?: FusionMethod;
  /** 0..1; see similarityOf for what it is compared with. */
  similarity?: number;
  /** Token budget for q + a of the results (o200k tokens). */
  limit?: number;
  /** At most this many results, whatever the budget. */
  topK?: number;
  usingReRank?: boolean;
  rerankModel?: string;
  k1?: number;
  b?: number;
  candidates?: number;
  /** HNSW ef_search (config.json systemEnv.hnswEfSearch). */
  efSearch?: number;
}

export interface SearchDeps {
  /** Unit-length vectors of the dataset's model, one per text. */
  embed(texts: string[]): Promise<Float32Array[] | number[][]>;
  /** Relevance of each doc to the query, higher is better (0..1 for the similarity filter). */
  rerank?(query: string, docs: string[]): Promise<{ index: number; score: number }[]>;
}

interface Candidate {
  dataId: string;
  scores: Map<ScoreType, SearchScore>;
}

function keepBest(c: Candidate, s: SearchScore): void {
  const old = c.scores.get(s.type);
  if (!old || s.value > old.value) c.scores.set(s.type, s);
}

export async function searchDataset(db: PlatformDb, params: SearchParams, deps: SearchDeps): Promise<SearchResult> {
  const started = Date.now();
  const mode = params.mode;
  const embeddingWeight = clamp01(params.embeddingWeight ?? SEARCH_DEFAULTS.embeddingWeight);
  const fusion = params.fusion ?? SEARCH_DEFAULTS.fusion;
  const similarity = clamp01(params.similarity ?? 0);
  const budget = params.limit && params.limit > 0 ? params.limit : SEARCH_DEFAULTS.tokenBudget;
  const candidates = params.candidates ?? SEARCH_DEFAULTS.candidates;
  const usingReRank = !!params.usingReRank && !!deps.rerank;
  const queries = [params.text, ...(params.extensionQueries ?? [])].map((q) => q.trim()).filter((q, i, all) => q && all.indexOf(q) === i);
  if (queries.length === 0) throw new RetrievalError('invalid_search', 'text is empty: give a question to search for');
  const result = (list: SearchResultItem[], dropped: DroppedItem[] = [], found = 0): SearchResult => ({
    list,
    dropped,
    found,
    duration: `${((Date.now() - started) / 1000).toFixed(3)}s`,
    searchMode: mode,
    limit: budget,
    similarity,
    usingReRank,
    fusion,
    embeddingWeight,
    queries,
  });
  // No dataset to search: nothing found, and no model call for it.
  if (params.datasetIds.length === 0) return result([]);

  const needVectors = mode !== 'fullTextRecall';
  const vectors = needVectors ? await embedQueries(deps, queries) : [];
  const dims = vectors[0]?.length ?? 0;

  const all = new Map<string, Candidate>();
  const candidate = (dataId: string) => {
    let c = all.get(dataId);
    if (!c) all.set(dataId, (c = { dataId, scores: new Map() }));
    return c;
  };
  const perQuery: ScoredId[][] = [];
  let firstFromCache = false;
  for (let qi = 0; qi < queries.length; qi++) {
    let full: ScoredId[] = [],
      dense: ScoredId[] = [],
      denseFromCopy = false;
    if (mode !== 'embedding') {
      const terms = new Map<string, number>();
      for (const t of analyze(queries[qi]!)) terms.set(t, (terms.get(t) ?? 0) + 1);
      const bm25 = { k1: params.k1 ?? SEARCH_DEFAULTS.k1, b: params.b ?? SEARCH_DEFAULTS.b };
      // From the in-memory copy when it is current, else in SQL (same ranking).
      full =
        (await fullTextCacheOf(db).search(params.datasetIds, terms, bm25, candidates)) ??
        (await bm25Search(db, { datasetIds: params.datasetIds, terms, ...bm25, limit: candidates }));
      full.forEach((r, i) => keepBest(candidate(r.dataId), { type: 'fullText', value: r.score, index: i }));
    }
    if (needVectors) {
      const efSearch = params.efSearch ?? SEARCH_DEFAULTS.efSearch;
      // From the in-memory copy when it is current, else pgvector's HNSW in SQL.
      const cached = await vectorCacheOf(db).search(params.datasetIds, dims, vectors[qi]!, candidates, efSearch);
      denseFromCopy = cached !== null;
      if (qi === 0) firstFromCache = denseFromCopy;
      dense = cached ?? (await vectorSearch(db, { datasetIds: params.datasetIds, dims, vector: vectors[qi]!, limit: candidates, efSearch }));
      dense.forEach((r, i) => keepBest(candidate(r.dataId), { type: 'embedding', value: r.score, index: i }));
    }
    if (mode !== 'mixedRecall') perQuery.push(mode === 'embedding' ? dense : full);
    else if (fusion === 'rrf')
      perQuery.push(
        rrfFuse([
          { list: dense, weight: embeddingWeight },
          { list: full, weight: 1 - embeddingWeight },
        ]),
      );
    else {
      // Full-text results the vector search did not bring get their exact cosine too.
      const cosines = new Map(dense.map((r) => [r.dataId, r.score]));
      const missing = full.map((r) => r.dataId).filter((id) => !cosines.has(id));
      if (denseFromCopy) {
        const q = Float32Array.from(vectors[qi]!);
        for (const id of missing) {
          const c = vectorCacheOf(db).cosine(params.datasetIds, dims, q, id);
          if (c !== null) cosines.set(id, c);
        }
      } else for (const [id, c] of await bestCosines(db, missing, { dims, values: vectors[qi]! })) cosines.set(id, c);
      perQuery.push(linearFuse(full, dense, embeddingWeight, cosines));
    }
  }
  // Several queries: reciprocal ranks, equal weights (their scores are not comparable).
  const fused = perQuery.length === 1 ? perQuery[0]! : rrfFuse(perQuery.map((list) => ({ list, weight: 1 })));
  if (mode === 'mixedRecall' || perQuery.length > 1) fused.forEach((r, i) => keepBest(candidate(r.dataId), { type: 'rrf', value: r.score, index: i }));

  const shortlist = fused.slice(0, Math.max(candidates, params.topK ?? 0));
  const tokensOf = (r: DataRow) => dataTokens(r.id, r.q, r.a);
  // Mixed recall: every result gets its exact cosine to the question (full-text-only ones too) as its embedding score:
  // from the vector copies when the search used them, else read with the rows.
  const withCosines = mode === 'mixedRecall' && !!vectors[0];
  const fromCopies = withCosines && firstFromCache ? Float32Array.from(vectors[0]!) : null;
  const cosineOf = withCosines && !fromCopies ? { dims, values: vectors[0]! } : undefined;
  const withCosine = (r: DataRow) => {
    if (fromCopies) r.cosine = vectorCacheOf(db).cosine(params.datasetIds, dims, fromCopies, r.id);
    if (withCosines && r.cosine !== null) candidate(r.id).scores.set('embedding', { type: 'embedding', value: r.cosine, index: -1 });
  };
  let ordered: DataRow[];
  if (!usingReRank) {
    // No rerank: the order is known, so rows are read only as far as the
    // similarity filter and the budget reach (often a tenth of the shortlist),
    // and a few past it, to report what the budget dropped.
    const bestFull = shortlist.length ? scoreOf(candidate(shortlist[0]!.dataId), 'fullText') : 0;
    const keep = (r: DataRow) => (withCosine(r), similarity === 0 || similarityOf(candidate(r.id), mode, false, bestFull) >= similarity);
    ordered = await rowsWithinBudget(
      db,
      shortlist.map((r) => r.dataId),
      { budget, topK: params.topK, tokensOf, keep, cosineOf, beyond: SEARCH_DEFAULTS.droppedReported },
    );
  } else {
    const rows = new Map(
      (
        await loadDataRows(
          db,
          shortlist.map((r) => r.dataId),
          cosineOf,
        )
      ).map((r) => [r.id, r]),
    );
    ordered = shortlist.map((r) => rows.get(r.dataId)).filter((r): r is DataRow => !!r);
    ordered.forEach(withCosine);
  }
  if (withCosines) {
    // The embedding score's rank: among the rows read, by cosine.
    const byCos = ordered.filter((r) => r.cosine !== null).sort((x, y) => y.cosine! - x.cosine!);
    byCos.forEach((r, i) => (candidate(r.id).scores.get('embedding')!.index = i));
  }

  if (usingReRank) {
    ordered = ordered.slice(0, SEARCH_DEFAULTS.rerankCandidates);
    const ranked = await deps.rerank!(
      params.text,
      ordered.map((r) => (r.a ? `${r.q}\n${r.a}` : r.q)),
    );
    const scored = ranked.filter((r) => r.index >= 0 && r.index < ordered.length).sort((x, y) => y.score - x.score);
    ordered = scored.map((r, i) => {
      const row = ordered[r.index]!;
      candidate(row.id).scores.set('reRank', { type: 'reRank', value: r.score, index: i });
      return row;
    });
  }

  const best = ordered.length ? scoreOf(candidate(ordered[0]!.id), 'fullText') : 0;
  const similarityValue = (r: DataRow) => similarityOf(candidate(r.id), mode, usingReRank, best);
  const passes = (r: DataRow) => similarity === 0 || similarityValue(r) >= similarity;
  const kept = withinBudget(ordered.filter(passes), budget, params.topK, tokensOf);
  const keptIds = new Set(kept.map((r) => r.id));
  const dropped = ordered
    .filter((r) => !keptIds.has(r.id))
    .slice(0, SEARCH_DEFAULTS.droppedReported)
    .map((r): DroppedItem => ({
      ...toItem(r, candidate(r.id)),
      q: cut(r.q),
      a: cut(r.a),
      reason: passes(r) ? 'limit' : 'similarity',
      similarityValue: similarityValue(r),
      tokens: tokensOf(r),
    }));
  return result(
    kept.map((r) => toItem(r, candidate(r.id))),
    dropped,
    shortlist.length,
  );
}

function cut(text: string): string {
  const max = SEARCH_DEFAULTS.droppedTextChars;
  return text.length > max ? `${text.slice(0, max)}…` : text;
}

async function embedQueries(deps: SearchDeps, queries: string[]): Promise<ArrayLike<number>[]> {
  const vectors = await deps.embed(queries);
  if (vectors.length !== queries.length) throw new Error(`the embedding model returned ${vectors.length} vectors for ${queries.length} queries`);
  checkUnitVectors(vectors);
  return vectors;
}

function scoreOf(c: Candidate, type: ScoreType): number {
  return c.scores.get(type)?.value ?? 0;
}

/**
 * What the similarity filter compares: the rerank score when reranked; else
 * the cosine to the question (embedding and mixed recall: every mixed result
 * has one); for full text alone, BM25 relative to the best result's (1 = as
 * good as the best), since raw BM25 has no fixed scale.
 */
function similarityOf(c: Candidate, mode: SearchMode, reranked: boolean, bestFullText: number): number {
  if (reranked) return scoreOf(c, 'reRank');
  if (mode === 'fullTextRecall') return bestFullText > 0 ? scoreOf(c, 'fullText') / bestFullText : 0;
  return c.scores.has('embedding') ? scoreOf(c, 'embedding') : 1;
}

/**
 * Results in order while q + a tokens stay within the budget; the first result
 * always comes, even alone past it (an empty answer helps nobody).
 */
export function withinBudget<T extends { q: string; a: string }>(
  rows: T[],
  budget: number,
  topK?: number,
  tokensOf: (r: T) => number = (r) => countTextTokens(r.q) + countTextTokens(r.a),
): T[] {
  const out: T[] = [];
  let used = 0;
  for (const r of rows) {
    if (topK !== undefined && out.length >= topK) break;
    used += tokensOf(r);
    if (used > budget && out.length > 0) break;
    out.push(r);
  }
  return out;
}

interface BudgetReading {
  budget: number;
  topK: number | undefined;
  tokensOf: (r: DataRow) => number;
  /** the similarity filter: rows it drops do not count against the budget */
  keep: (r: DataRow) => boolean;
  /** the question's vector, for each row's cosine (mixed recall) */
  cosineOf?: { dims: number; values: ArrayLike<number> };
  /** kept rows to read past the budget (the ones it drops, for the report) */
  beyond: number;
}

/**
 * The rows of `ids` in order, read a page at a time (16, 32, ...) until
 * withinBudget would stop and `beyond` more kept rows are read; rows the
 * similarity filter drops come along (they do not count against the budget).
 */
async function rowsWithinBudget(db: PlatformDb, ids: string[], o: BudgetReading): Promise<DataRow[]> {
  const out: DataRow[] = [];
  let used = 0,
    kept = 0;
  /** kept rows read once the budget was reached; -1 before */
  let past = -1;
  for (let at = 0, page = 16; at < ids.length; at += page, page *= 2) {
    // Past the budget only the rows still to report are read.
    if (past >= 0) page = o.beyond - past;
    const slice = ids.slice(at, at + page);
    const byId = new Map((await loadDataRows(db, slice, o.cosineOf)).map((r) => [r.id, r]));
    for (const id of slice) {
      const r = byId.get(id);
      if (!r) continue; // deleted meanwhile
      out.push(r);
      if (!o.keep(r)) continue; // below the similarity asked
      if (past >= 0) {
        if (++past >= o.beyond) return out;
        continue;
      }
      kept += 1;
      used += o.tokensOf(r);
      if (used > o.budget || (o.topK !== undefined && kept > o.topK)) {
        past = 0;
        if (o.beyond <= 0) return out;
      }
    }
    if (past >= o.beyond) break;
  }
  return out;
}

function toItem(r: DataRow, c: Candidate): SearchResultItem {
  const order: ScoreType[] = ['embedding', 'fullText', 'rrf', 'reRank'];
  return {
    id: r.id,
    q: r.q,
    a: r.a,
    chunkIndex: r.chunkIndex,
    datasetId: r.datasetId,
    collectionId: r.collectionId,
    sourceName: r.collectionName,
    // FastGPT's sourceId is the file or link a collection came from; a text collection has only its id.
    sourceId: r.collectionSource ?? r.collectionId,
    ...(r.pages ? { pages: r.pages } : {}),
    ...(r.rows ? { rows: r.rows } : {}),
    score: order.flatMap((t) => (c.scores.has(t) ? [c.scores.get(t)!] : [])),
  };
}

function clamp01(x: number): number {
  return Number.isFinite(x) ? Math.min(1, Math.max(0, x)) : 0;
}
