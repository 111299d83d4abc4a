// One relayed request's bookkeeping: the reservation before the upstream call,
// then settlement and the log row after it, whatever happened in between.
import { callerGroup, TokenAuthenticator } from '../accounts/auth.js';
import type { Reservation } from '../accounts/ledger.js';
import { atRatio, costMicros, type ModelPrice } from '../accounts/pricing.js';
import type { Channel } from '../channels/registry.js';
import { errors, GatewayError } from '../errors.js';
import { RelayFailure } from './attempts.js';
import type { Endpoint } from '../providers/index.js';
import type { RelayContext, RelayDeps, Responder } from './context.js';
import type { Admission } from '../limits/rate-limits.js';

export interface RunResult {
  /** The model that answered, where a fallback did (the run's own model otherwise). */
  model?: string;
  channel?: Channel;
  upstreamModel?: string;
  attempts: number;
  promptTokens: number;
  completionTokens: number;
  usageSource: 'upstream' | 'local' | 'none';
  status: number;
  error?: GatewayError;
  ttftMs?: number;
  /** The body that was sent upstream, kept for failed requests so they can be replayed. */
  failedBody?: string;
}

/**
 * A token count reported by an upstream, made safe for money and for the log
 * columns: a whole number from 0 to 1e9 (a broken or hostile upstream could
 * otherwise send 1e300 or a negative count).
 */
export function tokenCount(v: unknown): number {
  const n = Math.floor(Number(v));
  return Number.isFinite(n) && n > 0 ? Math.min(n, 1_000_000_000) : 0;
}

/** Text for a log column: PostgreSQL text cannot hold NUL. */
function logText(s: string): string {
  return s.includes('\u0000') ? s.replaceAll('\u0000', '') : s;
}

const KEY_FIELDS = /^(api[-_]?key|key|authorization|access[-_]?token|secret)$/i;

/**
 * The longest failed-request body kept for replay, in characters. A client
 * that sends tens of megabytes, and fails, would otherwise write them into
 * the log for every attempt (an operator saw the log grow 16 MB in minutes).
 */
export const KEPT_BODY_MAX_CHARS = 1_000_000;

/** The failed body to keep, and the note that replaces it when it is too big to keep. */
function keptBody(body: string | undefined): { body: string | null; note: string } {
  if (!body) return { body: null, note: '' };
  if (body.length <= KEPT_BODY_MAX_CHARS) return { body: scrubBody(body), note: '' };
  return { body: null, note: ` (request body of ${body.length} characters not kept: more than the ${KEPT_BODY_MAX_CHARS} kept for replay)` };
}

/** The request body with anything that looks like a credential removed. */
export function scrubBody(body: string): string {
  try {
    return JSON.stringify(JSON.parse(body), (k, v) => (KEY_FIELDS.test(k) ? undefined : v));
  } catch {
    return body;
  }
}

export class RelayRun {
  private constructor(
    private readonly deps: RelayDeps,
    private readonly ctx: RelayContext,
    private readonly endpoint: Endpoint,
    readonly model: string,
    private readonly stream: boolean,
    private readonly price: ModelPrice,
    private readonly reservation: Reservation,
    private readonly admission: Admission | undefined,
    /** The caller's group's ratio, in millionths, when the run began: the reservation and the charge use the same. */
    private readonly ratio: number,
  ) {}

  /**
   * Checks the token may use the model and reserves the request's most likely
   * cost: estimated input plus the output it may produce, at its group's ratio.
   */
  static async begin(
    deps: RelayDeps,
    ctx: RelayContext,
    /** Given the x-ratelimit-* headers where a rate limit applies. */
    responder: Responder,
    endpoint: Endpoint,
    model: string,
    stream: boolean,
    estimatedInputTokens: number,
    maxOutputTokens: number,
  ): Promise<RelayRun> {
    TokenAuthenticator.checkModel(ctx.caller, model);
    const price = deps.prices.priceOf(model);
    const ratio = deps.groups.ratioOf(callerGroup(ctx.caller));
    const amount = atRatio(costMicros(price, estimatedInputTokens, maxOutputTokens), ratio);
    const { token, user } = ctx.caller;
    // Rate limits first (limits/): a request they refuse reserves no money.
    const admission = await deps.limits.admit(ctx.caller, model, estimatedInputTokens + maxOutputTokens, amount);
    let r: Awaited<ReturnType<typeof deps.ledger.reserve>>;
    try {
      r = await deps.ledger.reserve(user.id, token.id, token.quota_limit !== null, amount);
    } catch (err) {
      admission?.release();
      throw err;
    }
    if (typeof r === 'string') admission?.release();
    if (r === 'user') throw errors.insufficientUserQuota();
    if (r === 'token') throw errors.tokenExhausted();
    if (admission) responder.setHeaders?.(admission.headers());
    return new RelayRun(deps, ctx, endpoint, model, stream, price, r, admission, ratio);
  }

  finish(r: RunResult): void {
    // A fallback's answer is charged at its own model's price, and logged under it;
    // the group's ratio applies to the model's cost, rounded up (pricing.ts atRatio).
    const model = r.model ?? this.model;
    const price = model === this.model ? this.price : this.deps.prices.priceOf(model);
    const cost = r.error && r.promptTokens === 0 && r.completionTokens === 0 ? 0 : atRatio(costMicros(price, r.promptTokens, r.completionTokens), this.ratio);
    const now = Date.now();
    this.admission?.settle(r.promptTokens + r.completionTokens, cost);
    this.ctx.recorded = true;
    this.deps.metrics.finished(this.endpoint, model, r.channel?.id, r.status, now - this.ctx.startedAt, r.promptTokens, r.completionTokens, cost);
    const kept = r.error ? keptBody(r.failedBody) : { body: null, note: '' };
    // The row and its charge are written together (accounts/ledger.ts).
    this.deps.ledger.settle(this.reservation, cost, {
      request_id: this.ctx.requestId,
      created_at: now,
      user_id: this.ctx.caller.user.id,
      token_id: this.ctx.caller.token.id,
      channel_id: r.channel?.id ?? null,
      endpoint: this.endpoint,
      model,
      upstream_model: r.upstreamModel ?? null,
      requested_model: model === this.model ? null : this.model,
      is_stream: this.stream ? 1 : 0,
      prompt_tokens: r.promptTokens,
      completion_tokens: r.completionTokens,
      usage_source: r.usageSource,
      cost,
      latency_ms: now - this.ctx.startedAt,
      ttft_ms: r.ttftMs ?? null,
      status: r.status,
      error: r.error ? logText(r.error.message) + kept.note : null,
      attempts: r.attempts,
      request_body: kept.body,
    });
  }
}

/** Records a failed run in `result` and returns the error the client gets. */
export function recordFailure(result: RunResult, err: unknown, ctx: RelayContext, sentBody: string): GatewayError {
  const failure = err instanceof RelayFailure ? err : undefined;
  const gwErr = failure ? failure.error : err instanceof GatewayError ? err : errors.internal((err as Error).message);
  if (failure) Object.assign(result, { channel: failure.channel, upstreamModel: failure.upstreamModel, attempts: failure.attempts });
  result.error = gwErr;
  result.status = ctx.signal.aborted ? 499 : gwErr.status;
  result.failedBody = sentBody;
  return gwErr;
}
