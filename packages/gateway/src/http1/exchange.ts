// What the HTTP/1.1 fronts (lean-front.ts, node-front.ts) hand to the
// application behind them, and what they ask of it: the seam between
// transport and meaning. The fronts know how bytes come and go; the service
// (the gateway's relay: relay/front-serve.ts) knows which paths it serves and
// what a request means. Nothing here knows of relaying, billing or channels.

/**
 * Tells the application that the client went away. Deliberately tiny (no
 * EventEmitter): one per request, and at most one listener at a time (the
 * relay's attempts run one after another).
 */
export class ClientSignal {
  aborted = false;
  private listener: (() => void) | undefined;

  onAbort(listener: () => void): void {
    this.listener = listener;
  }

  offAbort(listener: () => void): void {
    if (this.listener === listener) this.listener = undefined;
  }

  abort(): void {
    if (this.aborted) return;
    this.aborted = true;
    this.listener?.();
  }
}

/** The way back to the client: a JSON answer, or an SSE stream (a replay implements it to capture the answer). */
export interface Responder {
  /** A complete JSON answer (text already serialised). */
  json(status: number, text: string): void;
  /** Starts an SSE answer; nothing has been sent before this. */
  startStream(): void;
  /** Writes to the open stream; resolves when the socket can take more. */
  write(text: string): Promise<void> | void;
  /** Ends the stream; `text`, if any, is its last write (one socket write with the end). */
  end(text?: string): void;
  readonly started: boolean;
  /** Headers for the answer to come (flat name/value pairs): the relay's x-ratelimit-* (limits/rate-limits.ts). */
  setHeaders?(pairs: readonly string[]): void;
}

/** One request as a front hands it over: its head, its body to come, and the way back. */
export interface Exchange {
  /** The caller's X-Request-Id when well formed, else a new one. */
  readonly requestId: string;
  readonly signal: ClientSignal;
  readonly responder: Responder;
  readonly authorization: string | undefined;
  /** X-Api-Key (Anthropic's clients send their key there). */
  readonly apiKey: string | undefined;
  /** X-Kbchat-Priority (bulk or interactive), which the relay passes to kbchat's local models only. */
  readonly priority: string | undefined;
  readonly contentType: string | undefined;
  /** The Content-Length the client declared, if any. */
  readonly declaredLength: number | undefined;
  clientIp(trustProxy: boolean): string;
  /** The body as text, undefined when empty; rejects when over the limit (BodyTooLargeError) or when the client leaves. */
  readBody(limit: number): Promise<string | undefined>;
  /** False once an answer has begun or the client is gone. */
  canAnswer(): boolean;
  /** A complete error answer (JSON text) with these headers besides the content type. */
  answerError(status: number, headers: Record<string, string>, text: string): void;
}

/** Where a front logs its own failures (a bug costs the connection, never the process). */
export interface FrontLog {
  error(obj: object, msg: string): void;
}

/**
 * The application behind the fronts. `R` is whatever the service needs to
 * remember of a path it serves (the relay: its handler).
 */
export interface ExchangeService<R> {
  /** What serves a POST to `url` (its query included); undefined leaves the request to node:http's own listener. */
  route(url: string): R | undefined;
  /** Serves one exchange to its end; never throws (every error becomes an answer, or nothing once the client is gone). */
  serve(route: R, exchange: Exchange): void;
  log(): FrontLog;
}

/** A body larger than the limit the service passed to readBody (only a chunked one can be found so late). */
export class BodyTooLargeError extends Error {
  constructor(readonly limit: number) {
    super(`the request body is larger than ${limit} bytes`);
  }
}

/** The first address of X-Forwarded-For, when the header names one. */
export function forwardedClient(header: string | undefined): string | undefined {
  return header?.split(',')[0]?.trim() || undefined;
}
