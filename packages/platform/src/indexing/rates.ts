// How fast this worker indexes with each model, measured on its own batches:
// items settled over the time at least one batch of that model was in flight
// (batches running side by side count once), saved every WINDOW_MS of such
// time (rate-store.ts), and when the queue goes quiet. What an import's
// estimate and a collection's time left are computed from.
import type { IndexingMode } from './queue-store.js';
import { rateKey } from './rate-store.js';

/** Busy time a measurement covers before it is saved. */
export const WINDOW_MS = 20_000;
/** At a quiet queue, a shorter stretch is saved too, if it was at least this long... */
const MIN_WINDOW_MS = 2_000;
/** ...and settled at least this many items. */
const MIN_ITEMS = 8;

export interface RateSample {
  mode: IndexingMode;
  model: string;
  itemsPerSecond: number;
  items: number;
  busyMs: number;
}

interface Window {
  items: number;
  busyMs: number;
  /** The end of the busy time counted so far. */
  busyUntil: number;
}

export class RateRecorder {
  private readonly windows = new Map<string, Window & { mode: IndexingMode; model: string }>();

  constructor(private readonly save: (sample: RateSample) => void) {}

  /** A batch of `items` of `model` settled; it ran from startedAt to endedAt (epoch ms). */
  record(mode: IndexingMode, model: string, items: number, startedAt: number, endedAt: number): void {
    const key = rateKey(mode, model);
    let w = this.windows.get(key);
    if (!w) this.windows.set(key, (w = { mode, model, items: 0, busyMs: 0, busyUntil: 0 }));
    w.items += items;
    // The union of the batches' intervals: overlapping batches count once.
    if (endedAt > w.busyUntil) {
      w.busyMs += endedAt - Math.max(startedAt, w.busyUntil);
      w.busyUntil = endedAt;
    }
    if (w.busyMs >= WINDOW_MS) this.emit(key, w);
  }

  /** The queue went quiet: what was measured since the last save, if it says anything. */
  flush(): void {
    for (const [key, w] of this.windows) if (w.busyMs >= MIN_WINDOW_MS && w.items >= MIN_ITEMS) this.emit(key, w);
  }

  private emit(key: string, w: Window & { mode: IndexingMode; model: string }): void {
    this.windows.delete(key);
    this.save({ mode: w.mode, model: w.model, itemsPerSecond: w.items / (w.busyMs / 1000), items: w.items, busyMs: w.busyMs });
  }
}
