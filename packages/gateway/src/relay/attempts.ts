// The retry loop shared by every endpoint: pick a channel, try it, and on a
// retryable failure try a different one (never the one that just failed), up
// to RELAY_MAX_ATTEMPTS. Failures feed the channel+model health counts, except
// those caused by the client going away. When every channel of the model has
// failed with an error worth retrying (or it has none), the model's fallbacks
// (channels/fallbacks.ts) are tried in order, each the same way; never after
// an error of the caller's (400, 401, 413) or the caller going away. A
// channel whose key holds several keys sends one of them (key-pool.ts); a key
// refused or out of quota is disabled alone and the same channel tried again
// with another, so that a bad key costs its callers nothing.
import { callerGroup } from '../accounts/auth.js';
import { errors, GatewayError } from '../errors.js';
import type { Channel } from '../channels/registry.js';
import type { Endpoint } from '../providers/index.js';
import type { RelayContext, RelayDeps } from './context.js';
import { UpstreamFailure } from './upstream.js';

export interface AttemptResult<T> {
  value: T;
  channel: Channel;
  upstreamModel: string;
  attempts: number;
  /** The model that answered: the one asked for, or a fallback of it. */
  model: string;
}

export class RelayFailure extends Error {
  constructor(
    readonly error: GatewayError,
    readonly attempts: number,
    readonly channel: Channel | undefined,
    readonly upstreamModel: string | undefined,
    /** The model's channels failed (or it has none) in a way another model could answer: its fallbacks are tried. */
    readonly fallbackWorthy = false,
  ) {
    super(error.message);
  }
}

export async function withAttempts<T>(
  deps: RelayDeps,
  ctx: RelayContext,
  endpoint: Endpoint,
  model: string,
  tryChannel: (channel: Channel, upstreamModel: string) => Promise<T>,
  lateFault?: (value: T) => string | undefined,
): Promise<AttemptResult<T>> {
  const fallbacks = deps.fallbacks.of(model);
  if (fallbacks.length === 0) return attemptModel(deps, ctx, endpoint, model, tryChannel, lateFault);
  let attempts = 0;
  let failure: RelayFailure | undefined;
  for (const candidate of [model, ...fallbacks]) {
    // A token limited to some models is answered by those only.
    if (ctx.caller.models && !ctx.caller.models.has(candidate)) continue;
    try {
      const r = await attemptModel(deps, ctx, endpoint, candidate, tryChannel, lateFault);
      return { ...r, attempts: attempts + r.attempts };
    } catch (err) {
      if (!(err instanceof RelayFailure) || !err.fallbackWorthy) throw err;
      attempts += err.attempts;
      failure = err;
    }
  }
  throw new RelayFailure(failure!.error, attempts, failure!.channel, failure!.upstreamModel);
}

async function attemptModel<T>(
  deps: RelayDeps,
  ctx: RelayContext,
  endpoint: Endpoint,
  model: string,
  tryChannel: (channel: Channel, upstreamModel: string) => Promise<T>,
  /** For answers that can still fail after they began (streams): the channel's fault, if any. */
  lateFault?: (value: T) => string | undefined,
): Promise<AttemptResult<T>> {
  const tried = new Set<number>();
  const group = callerGroup(ctx.caller);
  let last: { failure: UpstreamFailure; channel: Channel; upstreamModel: string } | undefined;
  /** The channel to try again with another of its keys. */
  let again: Channel | undefined;
  let keyRetries = 0;
  for (let attempt = 1, limit = deps.config.maxAttempts; attempt <= limit; attempt++) {
    const picked = again ?? deps.registry.pick(model, tried, endpoint, group);
    again = undefined;
    if (!picked) break;
    // A pool's key: the channel as seen with it (made at load, nothing allocated here).
    const key = picked.pool === undefined ? undefined : picked.pool.pick();
    const channel = key === undefined ? picked : key.channel;
    const upstreamModel = channel.modelMapping[model] ?? model;
    const started = performance.now();
    try {
      const value = await tryChannel(channel, upstreamModel);
      const fault = lateFault?.(value);
      if (fault === undefined) deps.health.recordSuccess(channel.id, model);
      else if (!ctx.signal.aborted) deps.health.recordFailure(channel.id, model, fault).catch(deps.onError);
      if (!ctx.signal.aborted)
        deps.metrics.upstream(endpoint, channel.id, model, (performance.now() - started) / 1000, fault === undefined ? undefined : 'stream');
      return { value, channel, upstreamModel, attempts: attempt, model };
    } catch (err) {
      // The client went away (which aborts the upstream call too): not the
      // channel's fault, so it is not counted, and nobody waits for a retry.
      if (ctx.signal.aborted) throw new RelayFailure(errors.clientClosed(), attempt, channel, upstreamModel);
      if (!(err instanceof UpstreamFailure)) {
        if (err instanceof GatewayError) throw new RelayFailure(err, attempt, channel, upstreamModel);
        throw err;
      }
      deps.metrics.upstream(endpoint, channel.id, model, (performance.now() - started) / 1000, failureReason(err));
      last = { failure: err, channel, upstreamModel };
      // The key's fault, not the channel's: that key is disabled alone, and while the pool has
      // another the same channel is tried with it, beside the channel attempts.
      if (key !== undefined && err.keyRefused) {
        deps.health.disableKey(picked.id, key, `${err.error.status}: ${err.message}`).catch(deps.onError);
        if (picked.pool!.enabledCount > 0) {
          again = picked;
          limit++;
          keyRetries++;
          continue;
        }
      }
      tried.add(channel.id);
      if (err.countsAgainstChannel) {
        deps.health.recordFailure(channel.id, model, err.message).catch(deps.onError);
      }
      if (!err.retryable) break;
    }
  }
  if (!last) throw new RelayFailure(errors.noChannel(model, group), 0, undefined, undefined, true);
  throw new RelayFailure(shownError(last.failure, last.channel), tried.size + keyRetries, last.channel, last.upstreamModel, last.failure.retryable);
}

/**
 * The error the client gets for a failed last attempt. A provider whose 4xx
 * answers are about the request (kbchat's local model server: a body over its
 * 8 MiB, an input over its length) gives them as the caller's own error, in
 * its words and code: nothing went wrong upstream.
 */
function shownError(failure: UpstreamFailure, channel: Channel): GatewayError {
  const status = failure.status ?? 0;
  if (!channel.provider.requestErrorsAreCallers || failure.kind !== 'status') return failure.error;
  if (status < 400 || status >= 500 || status === 401 || status === 403 || status === 429) return failure.error;
  let code: unknown;
  let param: unknown;
  try {
    ({ code, param } = JSON.parse(failure.answer?.body ?? '').error ?? {});
  } catch {
    /* not JSON: the generic code below */
  }
  return new GatewayError(
    status,
    failure.error.message,
    'invalid_request_error',
    typeof code === 'string' ? code : 'invalid_request',
    typeof param === 'string' ? param : null,
  );
}

/** A failed attempt's reason label: the upstream's status, or what went wrong on the way (bounded: a few words and HTTP statuses). */
function failureReason(f: UpstreamFailure): string {
  return f.kind === 'status' ? String(f.status ?? f.error.status) : f.kind;
}
