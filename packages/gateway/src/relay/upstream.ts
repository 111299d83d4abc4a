// Sends one request to one upstream and classifies what went wrong, so that
// the retry loop can decide with one switch. The HTTP client is the gateway's
// own keep-alive agent (http1/agent.ts says why).
import { upstreamErrorMessage } from '@kbchat/shared';
import { Http1Agent, type RequestControl, type RequestHandler } from '../http1/agent.js';
import { errors, GatewayError } from '../errors.js';
import type { UpstreamTarget } from '../providers/index.js';
import { ClientSignal } from '../http1/exchange.js';

export type FailureKind = 'unreachable' | 'timeout' | 'status' | 'dropped' | 'bad_body';

/**
 * The error codes (or types) with which upstreams say a key's quota or money
 * is used up, as opposed to a rate limit (rate_limit_exceeded): OpenAI's and
 * Azure's insufficient_quota and billing_hard_limit_reached, Moonshot's
 * exceeded_current_quota_error, a new-api/one-api upstream's insufficient_user_quota.
 */
const QUOTA_ERROR = /"(?:code|type)"\s*:\s*"(?:insufficient_quota|billing_hard_limit_reached|exceeded_current_quota_error|insufficient_user_quota)"/;

/** A failed upstream attempt, with the client-facing error it becomes. */
export class UpstreamFailure extends Error {
  /** A non-2xx answer as it came, for providers that translate their own errors (providers/wire.ts). */
  answer?: { status: number; body: string; headers: Record<string, string> };

  constructor(
    readonly kind: FailureKind,
    readonly error: GatewayError,
    readonly status?: number,
  ) {
    super(error.message);
  }

  /** Worth trying on another channel: never for the request's own faults (400, 413, 422). */
  get retryable(): boolean {
    if (this.kind !== 'status') return true;
    const s = this.status ?? 0;
    return s === 429 || s >= 500 || s === 401 || s === 403 || s === 404 || s === 408;
  }

  /**
   * Counts toward auto-disabling the channel+model: only what says the channel
   * itself is broken (unreachable, timing out, 5xx, its key refused). A 404 or
   * 429 can be caused by the request or by load, and a client must never be
   * able to switch a model off for everyone by sending bad requests.
   */
  get countsAgainstChannel(): boolean {
    if (this.kind !== 'status') return true;
    const s = this.status ?? 0;
    return s >= 500 || s === 401 || s === 403;
  }

  /**
   * Says the key itself will not do: refused (401; Gemini's
   * API_KEY_INVALID is a 401 by then), no money on it (402), or a 429 whose
   * code says its quota is used up. A channel with several keys then disables
   * that key alone and tries another (relay/attempts.ts); an ordinary rate
   * limit (429 rate_limit_exceeded) is load, not the key.
   */
  get keyRefused(): boolean {
    if (this.kind !== 'status') return false;
    const s = this.error.status;
    // Not 403: a firewall or a region block answers it to a request whatever
    // its key, and one such request would disable every key of the pool in turn.
    if (s === 401 || s === 402) return true;
    return s === 429 && QUOTA_ERROR.test(this.answer?.body ?? '');
  }
}

export interface UpstreamOptions {
  connectTimeoutMs: number;
  headersTimeoutMs: number;
  idleTimeoutMs: number;
}

/**
 * A failed connection or exchange: a timeout, or "get request url failed"
 * with Node's own words for the rest (connect ECONNREFUSED 10.0.0.5:8000,
 * a certificate error, an answer that is not HTTP).
 */
export function classifyError(err: unknown, opts: UpstreamOptions): UpstreamFailure {
  const e = err as { code?: string; message?: string; cause?: { message?: string } };
  if (e.code === 'HEADERS_TIMEOUT') return new UpstreamFailure('timeout', errors.upstreamTimeout(opts.headersTimeoutMs));
  if (e.code === 'BODY_TIMEOUT') return new UpstreamFailure('timeout', errors.upstreamTimeout(opts.idleTimeoutMs));
  const detail = e.cause?.message && e.cause.message !== e.message ? `${e.message}: ${e.cause.message}` : (e.message ?? String(err));
  return new UpstreamFailure('unreachable', errors.unreachable(detail));
}

/** The failure for a non-2xx answer, in the upstream's own words. */
function statusFailure(statusCode: number, text: string, headers: Record<string, string>): UpstreamFailure {
  const retryAfter = headers['retry-after'];
  let message: string | undefined;
  try {
    message = upstreamErrorMessage(JSON.parse(text));
  } catch {
    /* not JSON: the raw text below */
  }
  // An error shape we do not know still reaches the client in the upstream's own words.
  message ??= text.trim() ? text.trim().slice(0, 2000) : undefined;
  // Only real error statuses pass through; a 3xx or a 6xx becomes a 502 that names it.
  const status = statusCode >= 400 && statusCode <= 599 ? statusCode : 502;
  const shown = status === statusCode ? message : `upstream answered with status ${statusCode}${message ? `: ${message}` : ''}`;
  const error = errors.badResponseStatus(status, shown);
  // A rate limit's wait is the upstream's to say; clients (the platform's queue) honour it.
  if (retryAfter && (status === 429 || status === 503)) error.retryAfter = retryAfter;
  const failure = new UpstreamFailure('status', error, status);
  failure.answer = { status: statusCode, body: text, headers };
  return failure;
}

/** An upstream's 2xx answer as JSON; one that is not JSON is the upstream's fault. */
export function parseAnswer(text: string): any {
  try {
    return JSON.parse(text);
  } catch (err) {
    throw new UpstreamFailure('bad_body', errors.badUpstreamBody((err as Error).message));
  }
}

/** Something that says a request is no longer wanted: the client left, or a test timed out. */
export type StopSignal = AbortSignal | ClientSignal;

const NOTHING_TO_UNWATCH = () => {};

/** Calls `onAbort` when the signal fires; returns the unsubscribe. */
function watchAbort(signal: StopSignal | undefined, onAbort: () => void): () => void {
  if (!signal) return NOTHING_TO_UNWATCH;
  if (signal instanceof ClientSignal) {
    signal.onAbort(onAbort);
    return () => signal.offAbort(onAbort);
  }
  signal.addEventListener('abort', onAbort, { once: true });
  return () => signal.removeEventListener('abort', onAbort);
}

/** One upstream answer, handed to `onChunk` as it arrives (a class: few allocations per request). */
class StreamHandler implements RequestHandler {
  private status = 0;
  private ok = false;
  private settled = false;
  private errorChunks: Buffer[] = [];
  private errorHeaders: Record<string, string> | undefined;
  private controller: RequestControl | undefined;
  /** The last chunk's write while the client's socket is full. */
  private waiting: Promise<void> | undefined;
  private readonly stopWatching: () => void;

  constructor(
    private readonly onChunk: (chunk: Buffer) => void | Promise<void>,
    private readonly signal: StopSignal | undefined,
    private readonly opts: UpstreamOptions,
    private readonly resolve: (status: number) => void,
    private readonly reject: (err: unknown) => void,
  ) {
    this.stopWatching = watchAbort(signal, () => this.controller?.abort(new Error('the client closed the connection')));
  }

  private finish(err?: unknown): void {
    if (this.settled) return;
    this.settled = true;
    this.stopWatching();
    if (err === undefined) return this.resolve(this.status);
    if (err instanceof UpstreamFailure || this.ok) return this.reject(err);
    this.reject(classifyError(err, this.opts));
  }

  onRequestStart(c: RequestControl): void {
    this.controller = c;
    if ((this.signal as { aborted?: boolean } | undefined)?.aborted) c.abort(new Error('the client closed the connection'));
  }

  onResponseStart(_c: RequestControl, statusCode: number, headers: Record<string, string>): void {
    this.status = statusCode;
    this.ok = statusCode >= 200 && statusCode < 300;
    if (!this.ok) this.errorHeaders = headers;
  }

  onResponseData(c: RequestControl, chunk: Buffer): void {
    if (this.settled) return;
    if (!this.ok) {
      this.errorChunks.push(chunk);
      return;
    }
    let pending: void | Promise<void>;
    try {
      pending = this.onChunk(chunk);
    } catch (err) {
      this.finish(err);
      c.abort(err as Error);
      return;
    }
    if (pending) {
      c.pause();
      const waiting = pending.then(
        () => {
          if (this.waiting === waiting) this.waiting = undefined;
          c.resume();
        },
        (err) => {
          this.finish(err);
          c.abort(err as Error);
        },
      );
      this.waiting = waiting;
    }
  }

  onResponseEnd(): void {
    if (!this.ok) return this.finish(statusFailure(this.status, Buffer.concat(this.errorChunks).toString('utf8'), this.errorHeaders ?? {}));
    // The agent may end the answer while the last chunk's write still waits for the client: the caller hears of the end after it.
    if (this.waiting)
      this.waiting.then(
        () => this.finish(),
        (err) => this.finish(err),
      );
    else this.finish();
  }

  onResponseError(_c: RequestControl, err: Error): void {
    this.finish(err);
  }
}

export class UpstreamClient {
  private readonly agent: Http1Agent;

  constructor(private readonly opts: UpstreamOptions) {
    this.agent = new Http1Agent({
      connectTimeoutMs: opts.connectTimeoutMs,
      headersTimeoutMs: opts.headersTimeoutMs,
      bodyTimeoutMs: opts.idleTimeoutMs,
      keepAliveMs: 30_000,
      maxConnectionsPerOrigin: 512,
    });
  }

  /** Posts a JSON body and reads the whole JSON answer (through postStream: no stream objects). */
  async postJson(target: UpstreamTarget, body: string, signal?: StopSignal): Promise<{ status: number; text: string; json: any }> {
    const { status, text } = await this.postForText(target, body, signal);
    return { status, text, json: parseAnswer(text) };
  }

  /** Posts a JSON body and reads the whole answer as text, unparsed. */
  async postForText(target: UpstreamTarget, body: string, signal?: StopSignal): Promise<{ status: number; text: string }> {
    const chunks: Buffer[] = [];
    let status: number;
    try {
      status = await this.postStream(target, body, signal, (chunk) => void chunks.push(chunk));
    } catch (err) {
      if (err instanceof UpstreamFailure) throw err;
      // The answer had begun: a stall is a timeout, anything else a body that broke off.
      const failure = classifyError(err, this.opts);
      throw failure.kind === 'timeout' ? failure : new UpstreamFailure('dropped', errors.streamDropped((err as Error).message));
    }
    return { status, text: chunks.length === 1 ? chunks[0]!.toString('utf8') : Buffer.concat(chunks).toString('utf8') };
  }

  /**
   * Posts a JSON body and hands each chunk of a 2xx answer to `onChunk` as it
   * arrives: no stream object and no async resource per request. Resolves
   * with the status at the end. When `onChunk` returns a promise the
   * upstream is paused until it settles (the client's socket is full). Rejects
   * with UpstreamFailure for anything before the answer began (so the caller
   * may retry elsewhere); a body that breaks off later rejects with the raw error.
   */
  postStream(target: UpstreamTarget, body: string, signal: StopSignal | undefined, onChunk: (chunk: Buffer) => void | Promise<void>): Promise<number> {
    const { origin, path } = this.split(target.url);
    return new Promise((resolve, reject) => {
      const handler = new StreamHandler(onChunk, signal, this.opts, resolve, reject);
      this.agent.dispatch({ origin, path, method: 'POST', headers: target.headers, body }, handler);
    });
  }

  private readonly urls = new Map<string, { origin: string; path: string }>();

  private split(url: string): { origin: string; path: string } {
    let hit = this.urls.get(url);
    if (!hit) {
      const u = new URL(url);
      hit = { origin: u.origin, path: u.pathname + u.search };
      if (this.urls.size > 1000) this.urls.clear();
      this.urls.set(url, hit);
    }
    return hit;
  }

  async close(): Promise<void> {
    await this.agent.close();
  }
}
