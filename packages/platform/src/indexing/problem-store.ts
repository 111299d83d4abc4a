// The items of a collection that need someone to look at them: failed ones,
// and queued ones held back by an error (a rate limit, a missing model, a
// backoff before the next attempt). Paged in SQL; every statement is scoped
// by team, so another team's ids are simply not found.
import { sql, type Selectable } from 'kysely';
import { DEFAULT_MAX_ATTEMPTS, INDEXING_REASONS, type IndexingReason } from './errors.js';
import type { IndexingMode, QueueDb } from './queue-store.js';
import type { TrainingQueueTable } from './tables.js';

/** failed: out of attempts, only a retry brings it back; waiting: queued until nextAttemptAt; indexing: a worker has it now. */
export type ProblemStatus = 'failed' | 'waiting' | 'indexing';

export interface TrainingProblem {
  id: number;
  datasetId: string;
  collectionId: string;
  /** The data row (chunk items); null for a qa item, which has none yet. */
  dataId: string | null;
  mode: IndexingMode;
  chunkIndex: number | null;
  /** The start of the chunk's text, to recognise it by. */
  preview: string;
  status: ProblemStatus;
  /** Exactly what the worker recorded. */
  error: string;
  reason: IndexingReason;
  attempts: number;
  maxAttempts: number;
  /** When the worker tries it again by itself (may be past: due now); null when failed or being indexed. */
  nextAttemptAt: number | null;
  updatedAt: number;
}

export const PREVIEW_CHARS = 160;

const isReason = (r: unknown): r is IndexingReason => INDEXING_REASONS.includes(r as IndexingReason);

/** A qa item's source chunk: its text and index, from the payload the chunker wrote. */
function payloadOf(payload: string | null): { text: string; chunkIndex: number | null } {
  try {
    const p = JSON.parse(payload ?? '{}') as { text?: unknown; chunkIndex?: unknown };
    return { text: typeof p.text === 'string' ? p.text : '', chunkIndex: typeof p.chunkIndex === 'number' ? p.chunkIndex : null };
  } catch {
    return { text: '', chunkIndex: null };
  }
}

/** A problem item as listProblems selects it: the queue row's columns and its data row's chunk (null for a qa item). */
type ProblemRow = Pick<
  Selectable<TrainingQueueTable>,
  | 'id'
  | 'dataset_id'
  | 'collection_id'
  | 'data_id'
  | 'mode'
  | 'payload'
  | 'status'
  | 'lease_until'
  | 'attempts'
  | 'max_attempts'
  | 'next_attempt_at'
  | 'error'
  | 'reason'
  | 'updated_at'
> & { data_chunk_index: number | null; data_q: string | null };

function toProblem(r: ProblemRow, now: number): TrainingProblem {
  const leased = r.status === 'leased' && Number(r.lease_until) >= now;
  const status: ProblemStatus = r.status === 'failed' ? 'failed' : leased ? 'indexing' : 'waiting';
  const source = r.data_id
    ? { text: String(r.data_q ?? ''), chunkIndex: r.data_chunk_index === null ? null : Number(r.data_chunk_index) }
    : payloadOf(r.payload);
  return {
    id: Number(r.id),
    datasetId: r.dataset_id,
    collectionId: r.collection_id,
    dataId: r.data_id ?? null,
    mode: r.mode,
    chunkIndex: source.chunkIndex,
    preview: source.text.slice(0, PREVIEW_CHARS),
    status,
    error: r.error ?? '',
    reason: isReason(r.reason) ? r.reason : 'other',
    attempts: Number(r.attempts),
    maxAttempts: r.max_attempts === null || r.max_attempts === undefined ? DEFAULT_MAX_ATTEMPTS : Number(r.max_attempts),
    nextAttemptAt: status === 'waiting' ? Number(r.next_attempt_at) : null,
    updatedAt: Number(r.updated_at),
  };
}

/** A collection's problem items, failed first, then in queue order. */
export async function listProblems(
  db: QueueDb,
  o: { teamId: string; collectionId: string; offset: number; limit: number; now?: number },
): Promise<{ list: TrainingProblem[]; total: number }> {
  const now = o.now ?? Date.now();
  const where = sql`q.team_id = ${o.teamId} and q.collection_id = ${o.collectionId} and (q.status = 'failed' or q.error is not null)`;
  const { rows } = await sql<ProblemRow>`select q.id, q.dataset_id, q.collection_id, q.data_id, q.mode, q.payload, q.status, q.lease_until, q.attempts,
      q.max_attempts, q.next_attempt_at, q.error, q.reason, q.updated_at, d.chunk_index as data_chunk_index, left(d.q, ${PREVIEW_CHARS}) as data_q
    from training_queue q left join data d on d.id = q.data_id
    where ${where}
    order by (q.status = 'failed') desc, q.id
    limit ${o.limit} offset ${o.offset}`.execute(db);
  const count = await sql<{ n: number }>`select count(*) as n from training_queue q where ${where}`.execute(db);
  return { list: rows.map((r) => toProblem(r, now)), total: Number(count.rows[0]?.n ?? 0) };
}

export type RetryOutcome = 'retried' | 'busy' | 'missing';

/**
 * Queues one item again at once. A failed item starts over (attempts 0, its
 * error cleared); a waiting one keeps its attempts and its error (still true
 * until the next attempt says otherwise) and is simply due now. An item a
 * worker holds is 'busy'; one of another team, or already done, is 'missing'.
 */
export async function retryItem(db: QueueDb, o: { teamId: string; id: number; collectionId?: string; now?: number }): Promise<RetryOutcome> {
  const now = o.now ?? Date.now();
  const scope = sql`id = ${o.id} and team_id = ${o.teamId} ${o.collectionId ? sql`and collection_id = ${o.collectionId}` : sql``}`;
  const { rows } = await sql`update training_queue
    set attempts = case when status = 'failed' then 0 else attempts end,
        error = case when status = 'failed' then null else error end,
        reason = case when status = 'failed' then null else reason end,
        status = 'queued', next_attempt_at = ${now}, updated_at = ${now}
    where ${scope} and status in ('failed', 'queued')
    returning id`.execute(db);
  if (rows.length) return 'retried';
  const { rows: held } = await sql`select id from training_queue where ${scope}`.execute(db);
  return held.length ? 'busy' : 'missing';
}
