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
//            error, "no vector model configured", a rate-limit wait), or why
//            the collection's file could not be read (a scan: read_error), or null
//   rateLimited     queued items held back by a rate limit, and
//   rateLimitedUntil the earliest of their next attempts (ISO), or null
//   timeLeftSeconds about how long until the collection's last open item is
//            done: the open items of its mode queued up to it (any dataset's:
//            the queue is worked in order) over the measured rate of its
//            model (rate-store.ts); null when nothing is open or no rate was
//            measured for that model and mode yet
//   job      a large import or delete going on in steps (datasets/jobs.ts):
//            its kind and how many of its chunks are written or removed
// A collection being deleted has nothing waiting: its items go with it and
// are never indexed, so they count neither in its own state nor in anyone's
// time left, nor in its dataset's sums (which count it in `deleting`).
import type { CollectionProgress, DatasetProgress } from '@kbchat/contracts';
import { sql, type Selectable } from 'kysely';
import type { CollectionJobsTable } from '../datasets/tables.js';
import type { IndexingMode, QueueDb } from './queue-store.js';
import { DELETING, loadRates, rateKey } from './rate-store.js';

export type { CollectionProgress, DatasetProgress };

export async function progress(db: QueueDb, o: { datasetId: string; collectionIds?: readonly string[]; now?: number }): Promise<CollectionProgress[]> {
  const now = o.now ?? Date.now();
  if (o.collectionIds && o.collectionIds.length === 0) return [];
  const RATE_LIMITED = sql`status = 'queued' and reason = 'rate_limited' and next_attempt_at > ${now}`;
  const only = o.collectionIds ? sql`and collection_id in (${sql.join(o.collectionIds.map((id) => sql`${id}`))})` : sql``;
  // count(*) is int8 and min() of a bigint column int8: numbers on both stores, Number() all the same.
  const queue = await sql<{
    collection_id: string;
    queued: number;
    indexing: number;
    failed: number;
    open_data: number;
    last_error: string | null;
    rate_limited: number;
    rate_limited_until: number | null;
  }>`
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
  const data = await sql<{ collection_id: string; total: number }>`select collection_id, count(*) as total from data
    where dataset_id = ${o.datasetId} ${only} group by collection_id`.execute(db);
  type JobProgressRow = Pick<Selectable<CollectionJobsTable>, 'collection_id' | 'kind' | 'done' | 'total'>;
  const jobs = await sql<JobProgressRow>`select collection_id, kind, done, total from collection_jobs where dataset_id = ${o.datasetId} ${only}`.execute(db);
  const onlyIds = o.collectionIds ? sql`and id in (${sql.join(o.collectionIds.map((id) => sql`${id}`))})` : sql``;
  const unread = await sql<{ collection_id: string; read_error: string }>`select id as collection_id, read_error from collections
    where dataset_id = ${o.datasetId} and read_error is not null ${onlyIds}`.execute(db);

  const byId = new Map<string, CollectionProgress & { open: number }>();
  const entry = (id: string) => {
    let e = byId.get(id);
    if (!e)
      byId.set(
        id,
        (e = {
          collectionId: id,
          queued: 0,
          indexing: 0,
          failed: 0,
          done: 0,
          total: 0,
          lastError: null,
          rateLimited: 0,
          rateLimitedUntil: null,
          timeLeftSeconds: null,
          job: null,
          open: 0,
        }),
      );
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
  for (const r of unread.rows) entry(r.collection_id).lastError = r.read_error;
  for (const r of jobs.rows) {
    const e = entry(r.collection_id);
    e.job = { kind: r.kind, done: Number(r.done), total: Number(r.total) };
    if (r.kind === 'delete') Object.assign(e, { queued: 0, indexing: 0, failed: 0, open: 0, lastError: null, rateLimited: 0, rateLimitedUntil: null });
  }
  if (queue.rows.some((r) => Number(r.queued) + Number(r.indexing) > 0)) {
    for (const [id, seconds] of await timesLeft(db, o.datasetId, only)) entry(id).timeLeftSeconds = seconds;
  }
  return [...byId.values()].map(({ open, ...e }) => ({ ...e, done: Math.max(0, e.total - open) }));
}

/**
 * Per collection with open items: the open items of each of its modes up to
 * its last one, over the whole queue (it is worked in id order), divided by
 * the rate of the dataset's model for that mode; the longest of its modes,
 * or none when a mode has no rate yet. Items of collections being deleted
 * are left out (DELETING).
 */
async function timesLeft(db: QueueDb, datasetId: string, only: ReturnType<typeof sql>): Promise<Map<string, number>> {
  const ahead = await sql<{ collection_id: string; mode: IndexingMode; ahead: number }>`
    with last as (select collection_id, mode, max(id) as last_id from training_queue
                   where dataset_id = ${datasetId} and status <> 'failed' ${only} and collection_id not in (${DELETING}) group by collection_id, mode)
    select l.collection_id, l.mode,
      (select count(*) from training_queue q where q.mode = l.mode and q.status <> 'failed' and q.id <= l.last_id and q.collection_id not in (${DELETING}))::int as ahead
    from last l`.execute(db);
  const models = await sql<{
    vector_model: string;
    agent_model: string | null;
  }>`select vector_model, agent_model from datasets where id = ${datasetId}`.execute(db);
  const m = models.rows[0];
  const out = new Map<string, number>();
  if (!m) return out;
  const modelOf = (mode: IndexingMode) => (mode === 'chunk' ? m.vector_model : m.agent_model);
  const rates = await loadRates(
    db,
    (['chunk', 'qa'] as const).filter((mode) => modelOf(mode)).map((mode) => ({ mode, model: modelOf(mode)! })),
  );
  const unknown = new Set<string>();
  for (const r of ahead.rows) {
    const model = modelOf(r.mode);
    const rate = model ? rates.get(rateKey(r.mode, model)) : undefined;
    if (!rate) {
      unknown.add(r.collection_id);
      continue;
    }
    out.set(r.collection_id, Math.max(out.get(r.collection_id) ?? 0, Math.ceil(Number(r.ahead) / rate.itemsPerSecond)));
  }
  for (const id of unknown) out.delete(id);
  return out;
}

/**
 * The sum over a dataset's collections (lastError: the first collection's that
 * has one; rateLimitedUntil: the earliest; timeLeftSeconds: the longest),
 * leaving out those being deleted, which are counted in `deleting`.
 */
export function sumProgress(list: readonly CollectionProgress[]): DatasetProgress {
  const sum: DatasetProgress = {
    queued: 0,
    indexing: 0,
    failed: 0,
    done: 0,
    total: 0,
    lastError: null,
    rateLimited: 0,
    rateLimitedUntil: null,
    timeLeftSeconds: null,
    deleting: 0,
  };
  for (const p of list) {
    if (p.job?.kind === 'delete') {
      sum.deleting++;
      continue;
    }
    sum.queued += p.queued;
    sum.indexing += p.indexing;
    sum.failed += p.failed;
    sum.done += p.done;
    sum.total += p.total;
    sum.lastError ??= p.lastError;
    sum.rateLimited += p.rateLimited;
    // ISO times of one format compare as strings.
    if (p.rateLimitedUntil && (!sum.rateLimitedUntil || p.rateLimitedUntil < sum.rateLimitedUntil)) sum.rateLimitedUntil = p.rateLimitedUntil;
    // The dataset is done when its last collection is.
    if (p.timeLeftSeconds !== null) sum.timeLeftSeconds = Math.max(sum.timeLeftSeconds ?? 0, p.timeLeftSeconds);
  }
  return sum;
}
