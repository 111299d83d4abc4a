// What indexing a new import would take: the rate of the dataset's model
// (rate-store.ts: what the workers measured lately), or, when nothing was
// measured yet for a vector model, one timed embeddings call of a sample of
// the file's chunks (a probe, saved as that model's rate until a worker
// measures its own), and what is queued before it.
import type { PlatformDb } from '../store/database.js';
import { errorText } from './errors.js';
import type { IndexingMode } from './queue-store.js';
import { loadRates, openItems, PROBE_WORKER, rateKey, saveRate, type IndexingRate } from './rate-store.js';

export interface IndexingEstimate {
  rate: IndexingRate | null;
  /** Why there is no rate: the probe's failure (the model did not answer), or null. */
  rateError: string | null;
  /** Open items of the mode already queued: a new import is indexed after them. */
  queuedAhead: number;
  /** The rate is the probe this call just made on `sample` (else one measured before, or none). */
  probed: boolean;
}

export class IndexingEstimates {
  constructor(
    private readonly db: PlatformDb,
    /** An embeddings call (marked bulk); absent: no vector model configured, nothing to probe. */
    private readonly embed?: (model: string, texts: string[]) => Promise<unknown>,
  ) {}

  /** `sample`: texts to probe with when no rate is known (chunk mode only); empty: do not probe. */
  async estimate(mode: IndexingMode, model: string | null, sample: string[]): Promise<IndexingEstimate> {
    const queuedAhead = await openItems(this.db, mode);
    if (!model) return { rate: null, rateError: null, queuedAhead, probed: false };
    const known = (await loadRates(this.db, [{ mode, model }])).get(rateKey(mode, model));
    if (known || mode !== 'chunk' || !sample.length || !this.embed) return { rate: known ?? null, rateError: null, queuedAhead, probed: false };
    try {
      const t0 = performance.now();
      await this.embed(model, sample);
      const busyMs = Math.max(1, performance.now() - t0);
      const itemsPerSecond = sample.length / (busyMs / 1000);
      await saveRate(this.db, { model, mode, workerId: PROBE_WORKER, itemsPerSecond, items: sample.length, busyMs: Math.round(busyMs) });
      return { rate: { itemsPerSecond, source: 'probe', measuredAt: Date.now() }, rateError: null, queuedAhead, probed: true };
    } catch (err) {
      return { rate: null, rateError: errorText(err), queuedAhead, probed: false };
    }
  }
}
