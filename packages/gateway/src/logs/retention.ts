// Request log retention: rows older than LOG_RETENTION_DAYS are deleted in
// small batches, so that cleanup never locks the table for long. (Rows are
// written by the ledger, accounts/ledger.ts, together with their charges.)
// The dashboard's rollups go with them, bucket by bucket: a chart never shows
// requests the log no longer has, except in the one bucket per grain that
// straddles the cut (rollup-store.ts deleteBefore).
import type { LogsStore } from './store.js';

export class LogRetention {
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly store: LogsStore,
    private readonly onError: (err: Error) => void,
  ) {}

  /** Deletes rows older than `days`, `batch` at a time, pausing between batches. */
  async purge(days: number, batch = 1000, now = Date.now()): Promise<number> {
    if (days <= 0) return 0;
    const before = now - days * 86_400_000;
    let total = 0;
    for (;;) {
      const n = await this.store.deleteOlderThan(before, batch);
      total += n;
      if (n < batch) {
        await this.store.rollups.deleteBefore(before);
        return total;
      }
      await new Promise((r) => setTimeout(r, 10));
    }
  }

  start(days: number, everyMs = 3_600_000): void {
    if (days <= 0) return;
    const run = () => this.purge(days).catch(this.onError);
    this.timer = setInterval(run, everyMs);
    this.timer.unref();
    void run();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
  }
}
