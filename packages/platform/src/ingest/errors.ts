// One error type for everything ingestion refuses, with a stable machine code
// and the HTTP status the route should answer with, so routes never guess
// from message text. Messages name the file or link and say what to do.

export type IngestErrorCode =
  | 'unsupported_file_type' // 400: no reader for this extension / mime type
  | 'file_too_large' // 413: over maxBytes
  | 'too_many_pages' // 413: PDF over maxPages
  | 'corrupt_file' // 422: the bytes are not a readable file of the claimed type
  | 'encrypted_file' // 422: password-protected PDF
  | 'parse_timeout' // 422: a parser ran past its time limit
  | 'empty_document' // 422: readable, but no text in it (e.g. a scanned PDF)
  | 'too_complex' // 413: reading it needs more memory than a reader is given
  | 'parser_failed' // 502: the team's own file parser (CUSTOM_READ_FILE_URL) failed
  | 'link_invalid_url' // 400: not an absolute http(s) URL
  | 'link_forbidden_address' // 400: resolves to a private / loopback / metadata address
  | 'link_too_many_redirects' // 422
  | 'link_too_large' // 413: body over maxBytes
  | 'link_timeout' // 502: no complete answer within timeoutMs
  | 'link_unreachable' // 502: DNS failure, refused connection, TLS error
  | 'link_bad_status' // 502: the site answered non-2xx
  | 'link_disallowed' // 422: the site's robots.txt does not let the crawler read it
  | 'link_unsupported_content'; // 422: content type we cannot read (image, video…)

const STATUS: Record<IngestErrorCode, number> = {
  unsupported_file_type: 400,
  file_too_large: 413,
  too_many_pages: 413,
  corrupt_file: 422,
  encrypted_file: 422,
  parse_timeout: 422,
  empty_document: 422,
  too_complex: 413,
  parser_failed: 502,
  link_invalid_url: 400,
  link_forbidden_address: 400,
  link_too_many_redirects: 422,
  link_too_large: 413,
  link_timeout: 502,
  link_unreachable: 502,
  link_bad_status: 502,
  link_disallowed: 422,
  link_unsupported_content: 422,
};

export class IngestError extends Error {
  override readonly name = 'IngestError';
  /** The HTTP status a route should answer with. */
  readonly status: number;

  constructor(
    readonly code: IngestErrorCode,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.status = STATUS[code];
  }
}

export function isIngestError(err: unknown): err is IngestError {
  return err instanceof IngestError;
}

/** Finds an IngestError anywhere in a chain of `cause`s (undici wraps errors thrown in hooks). */
export function findIngestError(err: unknown): IngestError | undefined {
  for (let e = err, depth = 0; e && depth < 8; e = (e as { cause?: unknown }).cause, depth++) {
    if (e instanceof IngestError) return e;
  }
  return undefined;
}
