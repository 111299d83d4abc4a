// The only SQL of the indexing queue. Every statement is plain PostgreSQL that
// PGlite runs too. Times are epoch milliseconds from the caller's clock, like
// every other time column of the platform store.
import { sql, type RawBuilder, type Selectable } from 'kysely';
import type { PlatformDb } from '../store/database.js';
import type { IndexingReason } from './errors.js';
import type { IndexingMode, TrainingQueueTable } from './tables.js';

export type { IndexingMode };
type QueueRow = Selectable<TrainingQueueTable>;

/** A claimed (or listed) queue item. */
export interface QueueItem {
  id: number;
  teamId: string;
  datasetId: string;
  collectionId: string;
  /** The data row to embed (chunk mode); null for a qa item. */
  dataId: string | null;
  mode: IndexingMode;
  /** qa items: JSON {"text","chunkIndex"} of the source chunk. */
  payload: string | null;
  attempts: number;
}

export interface EnqueueItem {
  teamId: string;
  datasetId: string;
  collectionId: string;
  dataId?: string | null;
  mode: IndexingMode;
  payload?: string | null;
}

/** The platform store, or a transaction of it (enqueue joins the caller's). */
export type QueueDb = PlatformDb;

const ERROR_MAX = 4000;

const clip = (s: string) => (s.length > ERROR_MAX ? `${s.slice(0, ERROR_MAX)}…` : s);
const inList = (ids: readonly (number | string)[]) => sql.join(ids.map((id) => sql`${id}`));

function toItem(r: QueueRow): QueueItem {
  return {
    id: Number(r.id),
    teamId: r.team_id,
    datasetId: r.dataset_id,
    collectionId: r.collection_id,
    dataId: r.data_id ?? null,
    mode: r.mode,
    payload: r.payload ?? null,
    attempts: Number(r.attempts),
  };
}

/**
 * Adds items to the queue. Pass the transaction that inserts the data rows, so
 * that data and its queue items appear (or vanish) together.
 */
export async function enqueue(db: QueueDb, items: readonly EnqueueItem[], now = Date.now()): Promise<number> {
  if (items.length) await enqueueStatement(items, now).execute(db);
  return items.length;
}

/**
 * The INSERT that enqueues `items`, one statement for any number of them
 * (arrays unnested), for enqueue or to run inside the caller's own statement
 * (a data-modifying WITH), so that its data rows and their items are written
 * by one statement: atomic without a transaction's begin and commit.
 */
export function enqueueStatement(items: readonly EnqueueItem[], now = Date.now()): RawBuilder<unknown> {
  const col = <T>(f: (it: EnqueueItem) => T) => items.map(f);
  return sql`insert into training_queue (team_id, dataset_id, collection_id, data_id, mode, payload, status, next_attempt_at, created_at, updated_at)
    select t, d, c, x, m, p, 'queued', ${now}::int8, ${now}::int8, ${now}::int8
    from unnest(${col((i) => i.teamId)}::varchar[], ${col((i) => i.datasetId)}::varchar[], ${col((i) => i.collectionId)}::varchar[],
                ${col((i) => i.dataId ?? null)}::varchar[], ${col((i) => i.mode)}::varchar[], ${col((i) => i.payload ?? null)}::text[]) as u(t, d, c, x, m, p)`;
}

/**
 * Atomically leases up to `limit` due items of `modes`: queued ones whose time
 * has come, and leased ones whose lease ran out (their worker died). SKIP
 * LOCKED lets many workers on one PostgreSQL claim side by side without ever
 * taking the same row.
 */
export async function claimItems(
  db: QueueDb,
  o: { workerId: string; limit: number; leaseMs: number; modes: readonly IndexingMode[]; now?: number },
): Promise<QueueItem[]> {
  if (o.limit <= 0 || o.modes.length === 0) return [];
  const now = o.now ?? Date.now();
  const { rows } = await sql<QueueRow>`
    update training_queue set status = 'leased', lease_owner = ${o.workerId}, lease_until = ${now + o.leaseMs}, updated_at = ${now}
    where id in (
      select id from training_queue
      where ((status = 'queued' and next_attempt_at <= ${now}) or (status = 'leased' and lease_until < ${now}))
        and mode in (${inList(o.modes)})
      order by id
      limit ${o.limit}
      for update skip locked)
    returning *`.execute(db);
  return rows.map(toItem).sort((a, b) => a.id - b.id);
}

/** Pushes the leases of items this worker still holds. */
export async function renewLeases(db: QueueDb, workerId: string, ids: readonly number[], leaseMs: number, now = Date.now()): Promise<void> {
  if (!ids.length) return;
  await sql`update training_queue set lease_until = ${now + leaseMs}
    where id in (${inList(ids)}) and lease_owner = ${workerId} and status = 'leased'`.execute(db);
}

/**
 * Deletes the items this worker still leases, inside the transaction that
 * writes their results; returns the ids it deleted. An item whose lease went
 * to another worker (or whose data was deleted) is not returned, and its
 * results must not be written.
 */
export async function completeItems(tx: QueueDb, workerId: string, ids: readonly number[]): Promise<Set<number>> {
  if (!ids.length) return new Set();
  const { rows } = await sql<{ id: number }>`delete from training_queue
    where id in (${inList(ids)}) and lease_owner = ${workerId} and status = 'leased' returning id`.execute(tx);
  return new Set(rows.map((r) => Number(r.id)));
}

/**
 * Gives back every leased item, whoever holds it, without counting an attempt;
 * returns how many. Only for a queue no other worker can reach (the embedded
 * store, which one process opens): leases found there at start are a dead
 * process's. On PostgreSQL other workers' leases are live, and lapse by themselves.
 */
export async function releaseAllLeases(db: QueueDb, now = Date.now()): Promise<number> {
  const { numAffectedRows } = await sql`update training_queue
    set status = 'queued', lease_owner = null, lease_until = null, updated_at = ${now}
    where status = 'leased'`.execute(db);
  return Number(numAffectedRows ?? 0);
}

/** Gives items back without counting an attempt (rate limit, model not configured). */
export async function releaseItems(
  db: QueueDb,
  workerId: string,
  ids: readonly number[],
  o: { nextAttemptAt: number; error: string | null; reason?: IndexingReason | null; now?: number },
): Promise<void> {
  if (!ids.length) return;
  const now = o.now ?? Date.now();
  await sql`update training_queue
    set status = 'queued', lease_owner = null, lease_until = null, next_attempt_at = ${o.nextAttemptAt},
        error = ${o.error === null ? null : clip(o.error)}, reason = ${o.error === null ? null : (o.reason ?? 'other')}, updated_at = ${now}
    where id in (${inList(ids)}) and lease_owner = ${workerId} and status = 'leased'`.execute(db);
}

/**
 * Counts a failed attempt: back to the queue after an exponential backoff
 * (base * 2^attempts, capped), or 'failed' once maxAttempts is reached.
 * The error text is kept exactly (clipped at 4000 characters).
 */
export async function failItems(
  db: QueueDb,
  workerId: string,
  ids: readonly number[],
  o: { error: string; reason?: IndexingReason; maxAttempts: number; backoffBaseMs: number; backoffMaxMs: number; now?: number },
): Promise<void> {
  if (!ids.length) return;
  const now = o.now ?? Date.now();
  await sql`update training_queue
    set attempts = attempts + 1,
        status = case when attempts + 1 >= ${o.maxAttempts} then 'failed' else 'queued' end,
        next_attempt_at = ${now} + least(${o.backoffMaxMs}::bigint, (${o.backoffBaseMs}::bigint * power(2, attempts))::bigint),
        lease_owner = null, lease_until = null, error = ${clip(o.error)}, reason = ${o.reason ?? 'other'},
        max_attempts = ${o.maxAttempts}, updated_at = ${now}
    where id in (${inList(ids)}) and lease_owner = ${workerId} and status = 'leased'`.execute(db);
}

/**
 * Shows `error` on every waiting item of `mode` (optionally of one dataset)
 * and holds them until `nextAttemptAt`, so that "no vector model configured"
 * is visible instead of silent no progress. Status stays queued.
 */
export async function markWaiting(
  db: QueueDb,
  o: { mode: IndexingMode; error: string; reason?: IndexingReason; datasetId?: string; nextAttemptAt?: number; now?: number },
): Promise<number> {
  const now = o.now ?? Date.now();
  const { numAffectedRows } = await sql`update training_queue
    set error = ${clip(o.error)}, reason = ${o.reason ?? 'model_missing'}, updated_at = ${now}
        ${o.nextAttemptAt !== undefined ? sql`, next_attempt_at = greatest(next_attempt_at, ${o.nextAttemptAt})` : sql``}
    where status = 'queued' and mode = ${o.mode} and error is distinct from ${clip(o.error)}
      ${o.datasetId ? sql`and dataset_id = ${o.datasetId}` : sql``}`.execute(db);
  return Number(numAffectedRows ?? 0);
}

/** Makes items held back with `error` due now (a worker that can now run them starts at once). */
export async function wakeWaiting(db: QueueDb, o: { mode: IndexingMode; error: string; now?: number }): Promise<number> {
  const now = o.now ?? Date.now();
  const { numAffectedRows } = await sql`update training_queue set next_attempt_at = ${now}, updated_at = ${now}
    where status = 'queued' and mode = ${o.mode} and error = ${clip(o.error)} and next_attempt_at > ${now}`.execute(db);
  return Number(numAffectedRows ?? 0);
}

/** Puts failed items back in the queue with a fresh attempt count (the API's "retry errors"). */
export async function retryFailed(
  db: QueueDb,
  o: { collectionId?: string; datasetId?: string; teamId?: string; ids?: number[] } = {},
  now = Date.now(),
): Promise<number> {
  if (o.ids && !o.ids.length) return 0;
  const { numAffectedRows } = await sql`update training_queue
    set status = 'queued', attempts = 0, error = null, reason = null, next_attempt_at = ${now}, updated_at = ${now}
    where status = 'failed'
      ${o.collectionId ? sql`and collection_id = ${o.collectionId}` : sql``}
      ${o.datasetId ? sql`and dataset_id = ${o.datasetId}` : sql``}
      ${o.teamId ? sql`and team_id = ${o.teamId}` : sql``}
      ${o.ids ? sql`and id in (${inList(o.ids)})` : sql``}`.execute(db);
  return Number(numAffectedRows ?? 0);
}

/** Items of a collection, for an error list in the UI (failed first, then by id). */
export async function listItems(
  db: QueueDb,
  o: { collectionId: string; status?: 'queued' | 'leased' | 'failed'; limit?: number },
): Promise<(QueueItem & { status: string; error: string | null; nextAttemptAt: number })[]> {
  const { rows } = await sql<QueueRow>`select * from training_queue where collection_id = ${o.collectionId}
      ${o.status ? sql`and status = ${o.status}` : sql``}
    order by (status = 'failed') desc, id limit ${o.limit ?? 100}`.execute(db);
  return rows.map((r) => ({ ...toItem(r), status: r.status, error: r.error ?? null, nextAttemptAt: Number(r.next_attempt_at) }));
}

/** Items by mode and status (queued, leased, failed): one grouped count, for /metrics. */
export async function queueDepth(db: QueueDb): Promise<{ mode: string; status: string; items: number }[]> {
  const r = await sql<{
    mode: string;
    status: string;
    items: number | string;
  }>`select mode, status, count(*) as items from training_queue group by mode, status`.execute(db);
  return r.rows.map((row) => ({ mode: row.mode, status: row.status, items: Number(row.items) }));
}
