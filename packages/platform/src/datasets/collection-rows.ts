// The rows a new collection is written as: its own, and its chunks' data
// rows (each with its title path and, for a PDF, its pages).
import { newId } from '../keys/auth.js';
import type { Chunk } from '../ingest/index.js';
import type { CollectionRow, NewDataItem } from './store.js';
import type { TextCollectionInput } from './types.js';

/** A new collection's row (its chunks are written with it: writeChunks). */
export function newCollectionRow(
  teamId: string,
  datasetId: string,
  input: Omit<TextCollectionInput, 'text'>,
  settings: { chunkSize: number },
  rawText: string | null,
): CollectionRow {
  const now = Date.now();
  return {
    id: newId(),
    dataset_id: datasetId,
    team_id: teamId,
    name: input.name,
    type: input.type ?? 'text',
    source: input.source ?? null,
    training_type: input.trainingType,
    chunk_size: settings.chunkSize,
    chunk_splitter: input.chunkSplitter ?? null,
    qa_prompt: input.qaPrompt ?? null,
    metadata: JSON.stringify(input.metadata ?? {}),
    raw_text: rawText,
    read_error: null,
    ocr_pages: null,
    sync_schedule: 'off',
    synced_at: null,
    created_at: now,
    updated_at: now,
  };
}

/** The data items of `chunks`, the first of them the collection's `from`th chunk; each indexes its text. */
export function chunkItems(collection: CollectionRow, chunks: Chunk[], from: number, now = Date.now()): NewDataItem[] {
  return chunks.map((c, k) => ({
    row: {
      id: newId(),
      dataset_id: collection.dataset_id,
      collection_id: collection.id,
      team_id: collection.team_id,
      q: c.text,
      a: '',
      chunk_index: from + k,
      title_path: JSON.stringify(c.titlePath),
      page_start: c.pages?.[0] ?? null,
      page_end: c.pages?.[1] ?? null,
      row_start: c.rows?.[0] ?? null,
      row_end: c.rows?.[1] ?? null,
      created_at: now,
      updated_at: now,
    },
    indexes: [c.text],
  }));
}
