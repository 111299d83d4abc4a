// The gateway's cost of each stored answer, for the chat log's export and
// figures. The gateway's request log is its books, and it writes them in
// batches, so an answer's cost is read back a little after the answer ends
// (and again later if a row is not there yet), in the background: no answer
// waits for it. A token that may not read the log (not an administrator's)
// leaves costs unknown (null), and the lookups stop. A share link's visitor's
// answer adds its cost to what the link has spent (its usage points).
import { GatewayError, type GatewayClient } from '../gateway-client/index.js';
import type { ChatHistoryStore } from './history-store.js';

/** When to look, after the answer ends: the gateway flushes its log within a second or two. */
const LOOK_AFTER_MS = [1_500, 5_000, 20_000];
/** Lookups waiting at once; past this, answers' costs stay unknown rather than pile up. */
const MAX_WAITING = 5_000;

export class AnswerCosts {
  private readonly timers = new Set<NodeJS.Timeout>();
  private refused = false;

  constructor(
    private readonly gateway: GatewayClient,
    private readonly history: ChatHistoryStore,
    private readonly onError: (err: unknown) => void,
    /** A share link's visitor's answer: its cost counts toward the link's usage points. */
    private readonly onShareCost: (shareId: string, cost: number) => Promise<void> = async () => {},
    private readonly lookAfterMs = LOOK_AFTER_MS,
  ) {}

  /** Reads the answer's cost once the gateway has logged its calls. */
  later(chatPk: number, dataId: string, requestIds: string[], attempt = 0): void {
    if (this.refused || requestIds.length === 0 || this.timers.size >= MAX_WAITING) return;
    const delay = this.lookAfterMs[attempt];
    if (delay === undefined) return;
    const timer = setTimeout(() => {
      this.timers.delete(timer);
      void this.look(chatPk, dataId, requestIds, attempt);
    }, delay);
    timer.unref();
    this.timers.add(timer);
  }

  private async look(chatPk: number, dataId: string, requestIds: string[], attempt: number): Promise<void> {
    try {
      const rows = await Promise.all(requestIds.map((id) => this.gateway.requestLog(id)));
      if (rows.some((r) => !r)) return this.later(chatPk, dataId, requestIds, attempt + 1);
      await this.history.setCost(
        chatPk,
        dataId,
        rows.reduce((n, r) => n + r!.cost, 0),
      );
    } catch (err) {
      if (err instanceof GatewayError && (err.status === 401 || err.status === 403)) this.refused = true;
      else this.onError(err);
    }
  }

  stop(): void {
    for (const t of this.timers) clearTimeout(t);
    this.timers.clear();
  }
}
