// Indexing progress per collection, for trainingDetail and the list endpoints.
// Two statements whatever the number of collections.
//
// Semantics:
//   queued   items waiting (including leases that ran out: their worker died)
//   indexing items leased by a live worker right now
//   failed   items that used up their attempts (retryFailed puts them back)
//   done     data rows of the collection with no open chunk item: every
//            index of theirs has its vectors (done items are deleted, so
//            this is counted from the data, not from the queue)
//   total    data rows of the collection
//   lastError the most recent error of any open item (a failed item's exact
//            error, "no vector model configured", a rate-limit wait), or null
//   rateLimited     queued items held back by a rate limit, and
//   rateLimitedUntil the earliest of their next attempts (ISO), or null
import { sql } from 'kysely';
import type { QueueDb } from './queue-store.js';

export interface CollectionProgress {
  collectionId: string;
  queued: number;
  indexing: number;
  failed: number;
  done: number;
  total: number;
  lastError: string | null;
  rateLimited: number;
  rateLimitedUntil: string | null;
}

export type DatasetProgress = Omit<CollectionProgress, 'collectionId'>;

export async function progress(
  db: QueueDb,
  o: { datasetId: string; collectionIds?: readonly string[]; now?: number },
): Promise<CollectionProgress[]> {
  const now = o.now ?? Date.now();
  if (o.collectionIds && o.collectionIds.length === 0) return [];
  const RATE_LIMITED = sql`status = 'queued' and reason = 'rate_limited' and next_attempt_at > ${now}`;
  const only = o.collectionIds ? sql`and collection_id in (${sql.join(o.collectionIds.map((id) => sql`${id}`))})` : sql``;
  const queue = await sql<any>`
    select collection_id,
      count(*) filter (where status = 'queued' or (status = 'leased' and lease_until < ${now})) as queued,
      count(*) filter (where status = 'leased' and lease_until >= ${now}) as indexing,
      count(*) filter (where status = 'failed') as failed,
      count(distinct data_id) filter (where mode = 'chunk') as open_data,
      (array_agg(error order by updated_at desc, id desc) filter (where error is not null))[1] as last_error,
      count(*) filter (where ${RATE_LIMITED}) as rate_limited,
      min(next_attempt_at) filter (where ${RATE_LIMITED}) as rate_limited_until
    from training_queue where dataset_id = ${o.datasetId} ${only}
    group by collection_id`.execute(db);
  const data = await sql<any>`select collection_id, count(*) as total from data
    where dataset_id = ${o.datasetId} ${only} group by collection_id`.execute(db);

  const byId = new Map<string, CollectionProgress & { open: number }>();
  const entry = (id: string) => {
    let e = byId.get(id);
    if (!e) byId.set(id, (e = { collectionId: id, queued: 0, indexing: 0, failed: 0, done: 0, total: 0, lastError: null, rateLimited: 0, rateLimitedUntil: null, open: 0 }));
    return e;
  };
  for (const id of o.collectionIds ?? []) entry(id);
  for (const r of queue.rows) {
    const e = entry(r.collection_id);
    e.queued = Number(r.queued);
    e.indexing = Number(r.indexing);
    e.failed = Number(r.failed);
    e.open = Number(r.open_data);
    e.lastError = r.last_error ?? null;
    e.rateLimited = Number(r.rate_limited);
    e.rateLimitedUntil = r.rate_limited_until === null ? null : new Date(Number(r.rate_limited_until)).toISOString();
  }
  for (const r of data.rows) entry(r.collection_id).total = Number(r.total);
  return [...byId.values()].map(({ open, ...e }) => ({ ...e, done: Math.max(0, e.total - open) }));
}

/** The sum over a dataset's collections (lastError: the first collection's that has one; rateLimitedUntil: the earliest). */
export function sumProgress(list: readonly CollectionProgress[]): DatasetProgress {
  const sum: DatasetProgress = { queued: 0, indexing: 0, failed: 0, done: 0, total: 0, lastError: null, rateLimited: 0, rateLimitedUntil: null };
  for (const p of list) {
    sum.queued += p.queued;
    sum.indexing += p.indexing;
    sum.failed += p.failed;
    sum.done += p.done;
    sum.total += p.total;
    sum.lastError ??= p.lastError;
    sum.rateLimited += p.rateLimited;
    // ISO times of one format compare as strings.
    if (p.rateLimitedUntil && (!sum.rateLimitedUntil || p.rateLimitedUntil < sum.rateLimitedUntil)) sum.rateLimitedUntil = p.rateLimitedUntil;
  }
  return sum;
}
