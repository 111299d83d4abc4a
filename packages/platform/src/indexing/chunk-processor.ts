// Chunk mode: embed every index text of each data item through the gateway,
// then write its vectors and its full-text postings in the transaction that
// completes the queue item. The writers are injected (retrieval owns the
// vector and search tables) and must REPLACE what a data item had, so that an
// item processed twice (a lease that ran out, a re-index) ends with exactly
// its vectors.
import type { PlatformTx } from '../store/database.js';
import { loadIndexTexts } from './data-store.js';
import { NO_VECTOR_MODEL, NotConfiguredError, ParseFailureError } from './errors.js';
import type { QueueItem } from './queue-store.js';
import type { BatchProcessor } from './worker.js';

export interface VectorRow {
  dataId: string;
  indexId: number;
  datasetId: string;
  collectionId: string;
  teamId: string;
  model: string;
  vector: Float32Array;
}

export interface PostingItem {
  dataId: string;
  datasetId: string;
  collectionId: string;
  teamId: string;
  q: string;
  a: string;
  /** The index texts (what full-text search matches besides q and a). */
  texts: string[];
}

export interface ChunkIndexingDeps {
  /** Absent: no vector model is configured; waiting items say so and stay queued. */
  embed?: (model: string, texts: string[]) => Promise<{ vectors: Float32Array[] }>;
  /** The dataset's vector model, or undefined when it is not configured. */
  vectorModelOf(datasetId: string): string | undefined | Promise<string | undefined>;
  /** Replaces the vectors of `dataIds` with `rows` (a data id with no rows loses its vectors). */
  writeVectors(tx: PlatformTx, rows: VectorRow[], dataIds: string[]): Promise<void>;
  /** Replaces the full-text postings of these data items. */
  writePostings(tx: PlatformTx, items: PostingItem[]): Promise<void>;
  /** Inputs per embeddings call (default EMBED_INPUTS_PER_CALL). */
  maxInputsPerCall?: number;
  /** A batch of `items` was indexed with `model` from startedAt to now (its speed: rates.ts). */
  indexed?(model: string, items: number, startedAt: number): void;
}

/** Inputs per embeddings call unless the deps say otherwise. */
export const EMBED_INPUTS_PER_CALL = 64;

interface Prepared {
  model: string;
  vectors: VectorRow[];
  postings: PostingItem[];
}

export function indexChunks(deps: ChunkIndexingDeps): BatchProcessor<Prepared> {
  const perCall = deps.maxInputsPerCall ?? EMBED_INPUTS_PER_CALL;
  return {
    unavailable: deps.embed ? undefined : NO_VECTOR_MODEL,
    async prepare(items: QueueItem[], db) {
      const datasetId = items[0]!.datasetId; // the worker batches per dataset
      const model = await deps.vectorModelOf(datasetId);
      if (!model || !deps.embed) throw new NotConfiguredError(NO_VECTOR_MODEL, datasetId);
      const rows = await loadIndexTexts(db, [...new Set(items.map((i) => i.dataId).filter((d): d is string => !!d))]);
      const postings = new Map<string, PostingItem>();
      // Empty texts are skipped: some models silently drop them from a batch, shifting every later vector.
      const inputs: { row: (typeof rows)[number]; text: string }[] = [];
      for (const r of rows) {
        let p = postings.get(r.dataId);
        if (!p)
          postings.set(r.dataId, (p = { dataId: r.dataId, datasetId: r.datasetId, collectionId: r.collectionId, teamId: r.teamId, q: r.q, a: r.a, texts: [] }));
        if (r.indexId === null || r.text === null) continue;
        p.texts.push(r.text);
        if (r.text.trim()) inputs.push({ row: r, text: r.text });
      }
      const vectors: VectorRow[] = [];
      let dims = 0;
      for (let i = 0; i < inputs.length; i += perCall) {
        const slice = inputs.slice(i, i + perCall);
        const out = await deps.embed(
          model,
          slice.map((s) => s.text),
        );
        out.vectors.forEach((vector, k) => {
          dims ||= vector.length;
          if (vector.length !== dims)
            throw new ParseFailureError(`the model ${model} returned vectors of ${dims} and ${vector.length} dimensions in one batch`);
          const r = slice[k]!.row;
          vectors.push({ dataId: r.dataId, indexId: r.indexId!, datasetId: r.datasetId, collectionId: r.collectionId, teamId: r.teamId, model, vector });
        });
      }
      return { model, vectors, postings: [...postings.values()] };
    },
    async commit(tx, items, prepared) {
      // Only the items this worker still owned: the others' data is someone else's to write.
      const owned = new Set(items.map((i) => i.dataId));
      const dataIds = prepared.postings.map((p) => p.dataId).filter((id) => owned.has(id));
      if (!dataIds.length) return; // the data rows were deleted meanwhile
      await deps.writeVectors(
        tx,
        prepared.vectors.filter((v) => owned.has(v.dataId)),
        dataIds,
      );
      await deps.writePostings(
        tx,
        prepared.postings.filter((p) => owned.has(p.dataId)),
      );
    },
    settled(items, prepared, startedAt) {
      deps.indexed?.(prepared.model, items.length, startedAt);
    },
  };
}
