// How the worker tells outcomes apart: wait (rate limit, quota), hold
// (nothing configured to do the work), or count an attempt; and the reason an
// item shows for it, decided from the error's type and codes, never its text.
import { INDEXING_REASONS, type IndexingReason } from '@kbchat/contracts';
import { GatewayError } from '../gateway-client/errors.js';

export const NO_VECTOR_MODEL = 'no vector model configured';
export const NO_QA_MODEL = 'no QA model configured';

/** The work cannot start until an operator configures something; items wait without losing attempts. */
export class NotConfiguredError extends Error {
  override readonly name = 'NotConfiguredError';
  constructor(
    message: string,
    readonly datasetId?: string,
  ) {
    super(message);
  }
}

/** A model's answer that could not be read (no question/answer pairs, vectors that do not fit): retrying may help, the model is the cause. */
export class ParseFailureError extends Error {
  override readonly name = 'ParseFailureError';
}

/** Counted failures before an item becomes 'failed', unless the worker is told otherwise. */
export const DEFAULT_MAX_ATTEMPTS = 5;

/** Why an item waits or failed, as the list shows it. */
export { INDEXING_REASONS, type IndexingReason };

/** The gateway's codes for a model it cannot reach at all (no channel, or the token may not use it). */
const MODEL_MISSING_CODES = new Set(['model_not_found', 'model_not_allowed']);
/** The gateway client's and the gateway's codes for an answer that was not JSON. */
const UNREADABLE_CODES = new Set(['bad_response', 'bad_response_body']);

export function reasonOf(err: unknown): IndexingReason {
  if (err instanceof NotConfiguredError) return 'model_missing';
  if (isRateLimit(err)) return 'rate_limited';
  if (err instanceof ParseFailureError) return 'parse_failure';
  if (err instanceof GatewayError) {
    // An upstream's 404 on a model call is its "model does not exist".
    if (MODEL_MISSING_CODES.has(err.code) || err.status === 404) return 'model_missing';
    if (UNREADABLE_CODES.has(err.code)) return 'parse_failure';
    return 'upstream_error';
  }
  return 'other';
}

/** A 429 or a provider quota: the queue slows down instead of burning retries. */
export function isRateLimit(err: unknown): boolean {
  if (err instanceof GatewayError) return err.isRateLimit;
  const e = err as { status?: unknown; statusCode?: unknown } | null;
  return e?.status === 429 || e?.statusCode === 429;
}

export function retryAfterOf(err: unknown): number | undefined {
  return err instanceof GatewayError ? err.retryAfterMs : undefined;
}

/**
 * An error that belongs to one item rather than to the whole call (the request
 * was refused as bad, or our own code or the store rejected something): worth
 * retrying the batch's items one by one so only the culprit fails.
 */
export function isItemSpecific(err: unknown): boolean {
  if (err instanceof GatewayError) return err.status === 400 || err.status === 413 || err.status === 422;
  return !(err instanceof NotConfiguredError);
}

/** The text an item shows: exactly the error's message (the gateway's own, with its request id). */
export function errorText(err: unknown): string {
  if (err instanceof Error) return err.message || err.name;
  return String(err);
}
