// A small table read whole into memory and re-read every CHANNEL_REFRESH_MS
// (prices, fallbacks, groups): the relay never queries the store for it, and
// another process's change is in force here within that time. This process's
// own edits are in force at once, and a re-read that began before one of them
// is dropped, so that it cannot undo the edit (the next re-read has it).
export abstract class RefreshedBook<Snapshot> {
  private timer: NodeJS.Timeout | undefined;
  /** Counts this process's own edits, so that a refresh that read the store before one does not undo it. */
  private edits = 0;

  /** Reads the whole table. */
  protected abstract read(): Promise<Snapshot>;
  /** Replaces what is in memory with a snapshot `read` gave. */
  protected abstract take(snapshot: Snapshot): void;

  async load(): Promise<void> {
    const edits = this.edits;
    const snapshot = await this.read();
    // Edited here while the store was read: that read may predate the edit, the next one will not.
    if (edits !== this.edits) return;
    this.take(snapshot);
  }

  /** Re-reads the table every `everyMs`, so that a change made by another process is in force here too. */
  startRefresh(everyMs: number, onError: (err: Error) => void): void {
    this.timer = setInterval(() => this.load().catch(onError), everyMs);
    this.timer.unref();
  }

  stopRefresh(): void {
    if (this.timer) clearInterval(this.timer);
  }

  /** Writes an edit to the store (then the caller changes memory): a refresh already under way is dropped. */
  protected async edit<T>(write: Promise<T>): Promise<T> {
    const result = await write;
    this.edits++;
    return result;
  }
}
