// How the worker tells outcomes apart: wait (rate limit, quota), hold
// (nothing configured to do the work), or count an attempt.
import { GatewayError } from '../gateway-client/errors.js';

export const NO_VECTOR_MODEL = 'no vector model configured';
export const NO_QA_MODEL = 'no QA model configured';

/** The work cannot start until an operator configures something; items wait without losing attempts. */
export class NotConfiguredError extends Error {
  override readonly name = 'NotConfiguredError';
  constructor(message: string, readonly datasetId?: string) {
    super(message);
  }
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
