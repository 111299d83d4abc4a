// OpenAI-shaped error envelope used by the gateway on every error a client sees.
// The request id is appended to the message the way one-api does, so that a
// user pasting an error into a bug report also pastes the id an operator needs.

export interface OpenAIErrorBody {
  error: { message: string; type: string; param: string | null; code: string | null };
}

export function openAIError(message: string, type: string, code: string | null = null, param: string | null = null, requestId?: string): OpenAIErrorBody {
  const text = requestId ? `${message} (request id: ${requestId})` : message;
  return { error: { message: text, type, param, code } };
}

/** Pulls the human message out of an upstream error body of any common shape. */
export function upstreamErrorMessage(body: unknown): string | undefined {
  if (!body || typeof body !== 'object') return undefined;
  const b = body as Record<string, unknown>;
  const err = b.error;
  if (typeof err === 'string') return err;
  if (err && typeof err === 'object' && typeof (err as Record<string, unknown>).message === 'string') {
    return (err as Record<string, string>).message;
  }
  if (typeof b.message === 'string') return b.message;
  if (typeof b.detail === 'string') return b.detail;
  return undefined;
}
