// What the platform itself saw of each model through the gateway: calls that
// failed on the gateway's side (5xx, no channel, timeouts, rate limits) since
// the model's last success. The gateway shows its channels' health only to
// its administrators, and a failing channel leaves its /v1/models list only
// once it is auto-disabled; these failures let the models page and the setup
// checklist say "failing" before that, without admin rights.
import type { ModelFailing } from '@kbchat/contracts';

export type { ModelFailing };

/** Failures older than this are not "now" any more (the model may be fine since, unused). */
const RECENT_MS = 15 * 60_000;
/** The most of an error message kept (a gateway message can carry an upstream page). */
const KEPT_CHARS = 500;

export class ModelFailures {
  private readonly byModel = new Map<string, { failures: number; since: number; lastAt: number; lastError: string }>();

  /** A failure the gateway answered (status >= 500 or 429); a caller's mistake (other 4xx) or an abort is not one. */
  noteFailure(model: string, status: number, message: string, now = Date.now()): void {
    if (status < 500 && status !== 429) return;
    const seen = this.byModel.get(model);
    const lastError = message.slice(0, KEPT_CHARS);
    if (seen && now - seen.lastAt < RECENT_MS) Object.assign(seen, { failures: seen.failures + 1, lastAt: now, lastError });
    else this.byModel.set(model, { failures: 1, since: now, lastAt: now, lastError });
  }

  noteSuccess(model: string): void {
    if (this.byModel.size) this.byModel.delete(model);
  }

  /** The model's failures since its last success, when the last is recent. */
  failing(model: string, now = Date.now()): ModelFailing | undefined {
    const seen = this.byModel.get(model);
    if (!seen || now - seen.lastAt >= RECENT_MS) return undefined;
    return { failures: seen.failures, since: new Date(seen.since).toISOString(), lastAt: new Date(seen.lastAt).toISOString(), lastError: seen.lastError };
  }
}
