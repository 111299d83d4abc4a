// Settings every connection of the platform store starts with, so that a
// vector search needs no transaction of its own to set them (one round trip
// instead of four on the embedded store). Retrieval reads them; db.ts applies.
import type { PlatformDb } from './database.js';

/**
 * HNSW candidate list and iterative scans (which keep HNSW from returning too
 * few rows when other datasets share a vectors table).
 */
export const SESSION_HNSW = { efSearch: 100, iterativeScan: 'relaxed_order' } as const;

export const SESSION_HNSW_SQL = [`set hnsw.ef_search = ${SESSION_HNSW.efSearch}`, `set hnsw.iterative_scan = ${SESSION_HNSW.iterativeScan}`];

/**
 * One key per database: a transaction is a new Kysely object each time, but
 * shares its database's adapter.
 */
export function dbKey(db: PlatformDb): object {
  return db.getExecutor().adapter;
}

const configured = new WeakSet<object>();

/** Every connection of `db` runs with SESSION_HNSW (openPlatformStore applied them). */
export function markSearchSession(db: PlatformDb): void {
  configured.add(dbKey(db));
}

export function hasSearchSession(db: PlatformDb): boolean {
  return configured.has(dbKey(db));
}
