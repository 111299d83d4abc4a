// The gateway's cost of each answer, for the chat log's export and figures
// and for share links' usage points. The gateway's request log is its books,
// and it writes them in batches, so an answer's cost is read back a little
// after the answer ends (and again later if a row is not there yet), in the
// background: no answer waits for it. A token that may not read the log (not
// an administrator's) leaves costs unknown (null), and the lookups stop.
import { GatewayError, type GatewayClient } from '../gateway-client/index.js';
import type { ChatHistoryStore } from './history-store.js';

/** When to look, after the answer ends: the gateway flushes its log within a second or two. */
const LOOK_AFTER_MS = [1_500, 5_000, 20_000];
/** Lookups waiting at once; past this, answers' costs stay unknown rather than pile up. */
const MAX_WAITING = 5_000;

/** An answer whose cost is wanted: its stored item (a chat with a chatId), its share link (a visitor's), or both. */
export interface CostedAnswer {
  stored?: { chatPk: number; dataId: string };
  shareId?: string;
}

export class AnswerCosts {
  private readonly timers = new Set<NodeJS.Timeout>();
  private refused = false;
  private stopped = false;

  constructor(
    private readonly gateway: GatewayClient,
    private readonly history: ChatHistoryStore,
    private readonly onError: (err: unknown) => void,
    /** A share link's visitor's answer: its cost counts toward the link's usage points. */
    private readonly onShareCost: (shareId: string, cost: number) => Promise<void> = async () => {},
    private readonly lookAfterMs = LOOK_AFTER_MS,
  ) {}

  /** Reads the answer's cost once the gateway has logged its calls. */
  later(answer: CostedAnswer, requestIds: string[], attempt = 0): void {
    if (this.stopped || this.refused || requestIds.length === 0 || this.timers.size >= MAX_WAITING) return;
    if (!answer.stored && !answer.shareId) return;
    const delay = this.lookAfterMs[attempt];
    if (delay === undefined) return;
    const timer = setTimeout(() => {
      this.timers.delete(timer);
      void this.look(answer, requestIds, attempt);
    }, delay);
    timer.unref();
    this.timers.add(timer);
  }

  private async look(answer: CostedAnswer, requestIds: string[], attempt: number): Promise<void> {
    try {
      const rows = await Promise.all(requestIds.map((id) => this.gateway.requestLog(id)));
      if (rows.some((r) => !r)) return this.later(answer, requestIds, attempt + 1);
      const cost = rows.reduce((n, r) => n + r!.cost, 0);
      if (answer.stored) await this.history.setCost(answer.stored.chatPk, answer.stored.dataId, cost);
      if (answer.shareId && cost > 0) await this.onShareCost(answer.shareId, cost);
    } catch (err) {
      if (err instanceof GatewayError && (err.status === 401 || err.status === 403)) {
        // Said once: from now on costs stay unknown, and share links' usage points do not grow.
        if (!this.refused)
          this.onError(
            new Error(
              `the gateway shows its request log to administrators only, and GATEWAY_TOKEN is not an administrator's: answers' costs stay unknown and share links' usage points are not counted (${err.message})`,
            ),
          );
        this.refused = true;
      } else this.onError(err);
    }
  }

  stop(): void {
    this.stopped = true;
    for (const t of this.timers) clearTimeout(t);
    this.timers.clear();
  }
}
