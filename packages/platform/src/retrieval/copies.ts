// What the full-text and vector caches share about their per-dataset copies:
// one catch-up at a time per copy, a copy dropped when the store fails it,
// and the least recently searched copies going first past a size budget.

export interface CachedCopy {
  /** The catch-up running now, if any. */
  catchingUp: Promise<void> | null;
  lastUsed: number;
}

/**
 * Runs `work` as the copy's catch-up. When the store fails it (closing, say)
 * the copy is dropped, to start over at the next search; either way the
 * copies are then held to `budget` (evictLeastRecent).
 */
export function startCatchUp<C extends CachedCopy>(copies: Map<string, C>, key: string, copy: C, work: Promise<void>, budget: () => void): Promise<void> {
  const tracked = work
    .catch(() => {
      if (copies.get(key) === copy) copies.delete(key);
    })
    .finally(() => {
      copy.catchingUp = null;
      budget();
    });
  copy.catchingUp = tracked;
  return tracked;
}

/** Drops the least recently searched idle copies until their total size is within `max`. */
export function evictLeastRecent<C extends CachedCopy>(copies: Map<string, C>, sizeOf: (copy: C) => number, max: number): void {
  let total = 0;
  for (const c of copies.values()) total += sizeOf(c);
  if (total <= max) return;
  const idle = [...copies.entries()].filter(([, c]) => !c.catchingUp).sort(([, x], [, y]) => x.lastUsed - y.lastUsed);
  for (const [key, c] of idle) {
    if (total <= max) break;
    copies.delete(key);
    total -= sizeOf(c);
  }
}
