// The SQL of indexing rates: items a second each worker indexed with each
// model over its last measured stretch of work (rates.ts measures), or a probe
// an estimate made before any work was measured.
import { sql } from 'kysely';
import type { PlatformDb } from '../store/database.js';
import type { IndexingMode } from './queue-store.js';

/** The worker id of a rate measured by a probe (one timed call), not by indexing. */
export const PROBE_WORKER = 'probe';

/** Rows older than this are dropped when a new one is written (old workers' ids). */
const KEEP_MS = 30 * 24 * 3_600_000;
/** Workers that measured within this are taken as indexing together: their rates add up. */
const TOGETHER_MS = 120_000;

export interface IndexingRate {
  /** Items (chunks) a second. */
  itemsPerSecond: number;
  /** measured: by the workers' own indexing; probe: one timed call, made for an estimate. */
  source: 'measured' | 'probe';
  measuredAt: number;
}

export async function saveRate(
  db: PlatformDb,
  r: { model: string; mode: IndexingMode; workerId: string; itemsPerSecond: number; items: number; busyMs: number; now?: number },
): Promise<void> {
  const now = r.now ?? Date.now();
  await sql`insert into indexing_rates (model, mode, worker_id, items_per_second, items, busy_ms, measured_at)
    values (${r.model}, ${r.mode}, ${r.workerId}, ${r.itemsPerSecond}, ${r.items}, ${r.busyMs}, ${now})
    on conflict (model, mode, worker_id) do update set items_per_second = excluded.items_per_second, items = excluded.items,
      busy_ms = excluded.busy_ms, measured_at = excluded.measured_at`.execute(db);
  await sql`delete from indexing_rates where measured_at < ${now - KEEP_MS}`.execute(db);
}

/**
 * The rate of each (mode, model): the sum over workers that measured within
 * the last two minutes (they index side by side), else the latest worker's,
 * else a probe's. One statement for any number of keys.
 */
export async function loadRates(db: PlatformDb, keys: readonly { mode: IndexingMode; model: string }[]): Promise<Map<string, IndexingRate>> {
  const out = new Map<string, IndexingRate>();
  const models = [...new Set(keys.map((k) => k.model))];
  if (!models.length) return out;
  const { rows } = await sql<{ model: string; mode: string; worker_id: string; items_per_second: number; measured_at: number }>`
    select model, mode, worker_id, items_per_second, measured_at from indexing_rates where model in (${sql.join(models)})`.execute(db);
  for (const { mode, model } of keys) {
    const mine = rows
      .filter((r) => r.model === model && r.mode === mode)
      .map((r) => ({ ...r, items_per_second: Number(r.items_per_second), measured_at: Number(r.measured_at) }));
    const workers = mine.filter((r) => r.worker_id !== PROBE_WORKER).sort((a, b) => b.measured_at - a.measured_at);
    const probe = mine.find((r) => r.worker_id === PROBE_WORKER);
    const latest = workers[0];
    let rate: IndexingRate | undefined;
    if (latest) {
      const together = workers.filter((r) => r.measured_at >= latest.measured_at - TOGETHER_MS);
      rate = {
        itemsPerSecond: (together.length ? together : [latest]).reduce((n, r) => n + r.items_per_second, 0),
        source: 'measured',
        measuredAt: latest.measured_at,
      };
    } else if (probe) rate = { itemsPerSecond: probe.items_per_second, source: 'probe', measuredAt: probe.measured_at };
    if (rate && rate.itemsPerSecond > 0) out.set(rateKey(mode, model), rate);
  }
  return out;
}

export const rateKey = (mode: IndexingMode, model: string) => `${mode}\u0000${model}`;

/** The collections being deleted (datasets/jobs.ts): their open items go with them, never indexed, so no one waits behind them. */
export const DELETING = sql`select collection_id from collection_jobs where kind = 'delete'`;

/** Open items (queued or being indexed, not failed) of a mode, over the whole queue: what a new import waits behind. */
export async function openItems(db: PlatformDb, mode: IndexingMode): Promise<number> {
  const { rows } = await sql<{ n: number }>`select count(*)::int as n from training_queue
    where mode = ${mode} and status <> 'failed' and collection_id not in (${DELETING})`.execute(db);
  return Number(rows[0]?.n ?? 0);
}
