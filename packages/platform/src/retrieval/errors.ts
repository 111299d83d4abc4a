// Typed errors of retrieval, each with a stable code and an HTTP status for the routes.

export class RetrievalError extends Error {
  constructor(
    readonly code: 'vector_not_normalised' | 'vector_dimensions_mismatch' | 'invalid_search',
    message: string,
    readonly status = 400,
  ) {
    super(message);
    this.name = 'RetrievalError';
  }
}

export function isRetrievalError(err: unknown): err is RetrievalError {
  return err instanceof RetrievalError;
}

/** The one message for a model whose vectors are not unit length (searches rely on inner product = cosine). */
export function notNormalisedMessage(norm: number): string {
  return `The vector model returned a vector of length ${norm.toFixed(4)}, not 1: only normalised models (unit-length vectors) are supported. Choose a model that returns normalised embeddings.`;
}
