// Which texts the embedding worker gets next. Two lanes: interactive requests
// (a chat question, the extractive answerer's sentences) go ahead of bulk ones
// (indexing). A batch cannot be stopped once the worker has it, so bulk batches
// are cut to a time budget: short while someone is chatting, so that the next
// question waits behind a short batch only, and longer otherwise, where
// batching pays. Bulk still gets a batch after every FAIR_SHARE_MS of
// interactive work, so a stream of questions cannot starve indexing.
// No timers: it is asked for a batch whenever a worker is free.

export type EmbedPriority = 'interactive' | 'bulk';

export interface LaneOptions {
  /** false: one lane, every batch maxBatch texts round-robin across requests (the behaviour before lanes). */
  enabled: boolean;
  /** Most texts in one batch (both lanes). */
  maxBatch: number;
  /** Estimated longest bulk batch while nobody chats (ms). */
  bulkBatchMs: number;
  /** Estimated longest bulk batch while someone chats (ms): about the most a question waits behind indexing. */
  busyBatchMs: number;
}

export const DEFAULT_LANE_OPTIONS: Omit<LaneOptions, 'maxBatch'> = { enabled: true, bulkBatchMs: 1000, busyBatchMs: 150 };

/** After an interactive request, bulk batches stay short this long: a chat turn embeds twice (the question, then the answer's sentences) with a search between. */
export const CHAT_HOLD_MS = 2000;
/** Interactive work after which one bulk batch goes first when both lanes wait. */
export const FAIR_SHARE_MS = 1000;
/** The cost estimate before any bulk batch was timed (ms per character; measured 0.13-0.25 on 2 busy cores). */
const INITIAL_MS_PER_CHAR = 0.25;

export interface LaneJob {
  texts: string[];
  priority: EmbedPriority;
  next: number; // first text not yet handed to a worker
}

export interface LaneBatch<J extends LaneJob> {
  items: { job: J; index: number }[];
  priority: EmbedPriority;
  chars: number;
}

export class EmbedLanes<J extends LaneJob> {
  private readonly interactive: J[] = [];
  private readonly bulk: J[] = [];
  private interactiveRunning = 0;
  private lastInteractiveAt = -Infinity;
  private interactiveMsSinceBulk = 0;
  private msPerChar = INITIAL_MS_PER_CHAR;

  constructor(private readonly options: LaneOptions) {}

  get waiting(): boolean {
    return this.interactive.length + this.bulk.length > 0;
  }

  add(job: J): void {
    (this.options.enabled && job.priority === 'interactive' ? this.interactive : this.bulk).push(job);
  }

  /** Drops a job that failed; texts of it already in a worker are ignored by the caller. */
  remove(job: J): void {
    for (const lane of [this.interactive, this.bulk]) {
      const at = lane.indexOf(job);
      if (at >= 0) lane.splice(at, 1);
    }
  }

  /** Every waiting job, the lanes emptied. */
  drain(): J[] {
    return [...this.interactive.splice(0), ...this.bulk.splice(0)];
  }

  /** The next batch for a free worker, or undefined when nothing waits. */
  take(now: number): LaneBatch<J> | undefined {
    if (!this.options.enabled) return this.bulk.length ? this.batchOf(this.bulk, 'bulk', Infinity) : undefined;
    const bulkOwed = this.bulk.length > 0 && this.interactiveMsSinceBulk >= FAIR_SHARE_MS;
    if (this.interactive.length > 0 && !bulkOwed) {
      this.interactiveRunning++;
      return this.batchOf(this.interactive, 'interactive', Infinity);
    }
    if (this.bulk.length === 0) return undefined;
    this.interactiveMsSinceBulk = 0;
    const chatting = this.interactive.length > 0 || this.interactiveRunning > 0 || now - this.lastInteractiveAt < CHAT_HOLD_MS;
    const budgetMs = chatting ? this.options.busyBatchMs : this.options.bulkBatchMs;
    return this.batchOf(this.bulk, 'bulk', budgetMs / this.msPerChar);
  }

  /**
   * A batch is over after `ms` (undefined: it failed). The cost estimate learns
   * from bulk batches only: theirs is the budget, and their texts are chunks.
   */
  finished(batch: LaneBatch<J>, ms: number | undefined, now: number): void {
    if (!this.options.enabled) return;
    if (batch.priority === 'interactive') {
      this.interactiveRunning--;
      this.lastInteractiveAt = now;
      if (this.bulk.length > 0) this.interactiveMsSinceBulk += ms ?? 0;
    } else if (ms !== undefined && batch.chars > 0) {
      this.msPerChar = 0.7 * this.msPerChar + 0.3 * (ms / batch.chars);
    }
  }

  /** Round-robin over the lane's jobs, one text each per turn, up to maxBatch texts and maxChars (never fewer than one text). */
  private batchOf(lane: J[], priority: EmbedPriority, maxChars: number): LaneBatch<J> {
    const items: { job: J; index: number }[] = [];
    let chars = 0;
    while (items.length < this.options.maxBatch && lane.length > 0) {
      for (let j = 0; j < lane.length && items.length < this.options.maxBatch;) {
        const job = lane[j]!;
        const length = job.texts[job.next]!.length;
        if (items.length > 0 && chars + length > maxChars) return { items, priority, chars };
        items.push({ job, index: job.next++ });
        chars += length;
        if (job.next === job.texts.length) lane.splice(j, 1);
        else j++;
      }
    }
    return { items, priority, chars };
  }
}
