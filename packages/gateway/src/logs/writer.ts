// Request logs are written in batches (every LOG_FLUSH_MS or 500 rows): one
// INSERT per batch instead of one per request keeps the relay fast on every
// store, most of all the embedded one. Retention deletes old rows in small
// batches so that cleanup never locks the table for long. A batch the store
// refuses is written again one row at a time, so that one bad row (a value too
// long for its column, say) costs only itself; each row still refused is
// reported with its request id, never its body.
import type { NewLog } from '../store/schema.js';
import type { LogsStore } from './store.js';

export class LogWriter {
  private buffer: NewLog[] = [];
  private timer: NodeJS.Timeout | undefined;
  private retentionTimer: NodeJS.Timeout | undefined;
  private writing: Promise<void> = Promise.resolve();

  constructor(
    private readonly store: LogsStore,
    private readonly flushMs: number,
    private readonly onError: (err: Error) => void,
  ) {}

  add(row: NewLog): void {
    this.buffer.push(row);
    if (this.buffer.length >= 500) void this.flush();
    else if (!this.timer) {
      this.timer = setTimeout(() => void this.flush(), this.flushMs);
      this.timer.unref();
    }
  }

  /** Writes everything buffered; resolves when it is in the store. */
  flush(): Promise<void> {
    if (this.timer) {
      clearTimeout(this.timer);
      this.timer = undefined;
    }
    const rows = this.buffer;
    this.buffer = [];
    this.writing = this.writing.then(() => this.write(rows));
    return this.writing;
  }

  /** One statement at a time, so that a failure leaves none of its rows written and a retry writes none twice. */
  private async write(rows: NewLog[]): Promise<void> {
    for (const batch of this.store.statements(rows)) {
      try {
        await this.store.insertMany(batch);
        continue;
      } catch (err) {
        if (batch.length === 1) {
          this.dropped(batch[0]!, err);
          continue;
        }
      }
      for (const row of batch) {
        try {
          await this.store.insertMany([row]);
        } catch (err) {
          this.dropped(row, err);
        }
      }
    }
  }

  /** Reports a row the store refused: its request id and the store's message, never the body. */
  private dropped(row: NewLog, err: unknown): void {
    const message = err instanceof Error ? err.message : String(err);
    const short = message.length > 300 ? `${message.slice(0, 300)}...` : message;
    this.onError(new Error(`request log ${row.request_id} dropped: ${short}`));
  }

  /** Deletes rows older than `days`, `batch` at a time, pausing between batches. */
  async purge(days: number, batch = 1000, now = Date.now()): Promise<number> {
    if (days <= 0) return 0;
    const before = now - days * 86_400_000;
    let total = 0;
    for (;;) {
      const n = await this.store.deleteOlderThan(before, batch);
      total += n;
      if (n < batch) return total;
      await new Promise((r) => setTimeout(r, 10));
    }
  }

  startRetention(days: number, everyMs = 3_600_000): void {
    if (days <= 0) return;
    const run = () => this.purge(days).catch(this.onError);
    this.retentionTimer = setInterval(run, everyMs);
    this.retentionTimer.unref();
    void run();
  }

  async close(): Promise<void> {
    if (this.retentionTimer) clearInterval(this.retentionTimer);
    await this.flush();
  }
}
