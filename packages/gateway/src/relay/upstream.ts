// Sends one request to one upstream and classifies what went wrong, so that
// the retry loop can decide with one switch. undici with keep-alive pools: the
// lowest overhead HTTP client in Node.
import type { EventEmitter } from 'node:events';
import { upstreamErrorMessage } from '@kbchat/shared';
import { Agent, type Dispatcher } from 'undici';
import { errors, GatewayError } from '../errors.js';
import type { UpstreamTarget } from '../providers/index.js';

export type FailureKind = 'unreachable' | 'timeout' | 'status' | 'dropped' | 'bad_body';

/** A failed upstream attempt, with the client-facing error it becomes. */
export class UpstreamFailure extends Error {
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

  /** Counts toward auto-disabling the channel+model (429 is load, not a broken channel). */
  get countsAgainstChannel(): boolean {
    return this.retryable && this.status !== 429;
  }
}

export interface UpstreamOptions {
  connectTimeoutMs: number;
  headersTimeoutMs: number;
  idleTimeoutMs: number;
}

const NETWORK_CODES = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'ECONNRESET', 'EHOSTUNREACH', 'ENETUNREACH', 'EPIPE', 'UND_ERR_SOCKET', 'UND_ERR_CONNECT_TIMEOUT', 'UND_ERR_CLOSED']);

export function classifyError(err: unknown, opts: UpstreamOptions): UpstreamFailure {
  const e = err as { code?: string; message?: string; cause?: { code?: string; message?: string } };
  const code = e.code ?? e.cause?.code;
  if (code === 'UND_ERR_HEADERS_TIMEOUT') return new UpstreamFailure('timeout', errors.upstreamTimeout(opts.headersTimeoutMs));
  if (code === 'UND_ERR_BODY_TIMEOUT') return new UpstreamFailure('timeout', errors.upstreamTimeout(opts.idleTimeoutMs));
  const detail = e.cause?.message && e.cause.message !== e.message ? `${e.message}: ${e.cause.message}` : (e.message ?? String(err));
  if (code && NETWORK_CODES.has(code)) return new UpstreamFailure('unreachable', errors.unreachable(detail));
  return new UpstreamFailure('unreachable', errors.unreachable(detail));
}

export class UpstreamClient {
  private readonly agent: Agent;

  constructor(private readonly opts: UpstreamOptions) {
    this.agent = new Agent({
      connections: 512,
      pipelining: 1,
      keepAliveTimeout: 30_000,
      connect: { timeout: opts.connectTimeoutMs },
      headersTimeout: opts.headersTimeoutMs,
      bodyTimeout: opts.idleTimeoutMs,
    });
  }

  /**
   * Posts a JSON body. Resolves with the open response on 2xx; throws
   * UpstreamFailure on anything else, with the upstream's own message.
   */
  async post(target: UpstreamTarget, body: string, signal?: AbortSignal | EventEmitter): Promise<Dispatcher.ResponseData> {
    let res: Dispatcher.ResponseData;
    try {
      const { origin, path } = this.split(target.url);
      res = await this.agent.request({ origin, path, method: 'POST', headers: target.headers, body, signal });
    } catch (err) {
      throw classifyError(err, this.opts);
    }
    if (res.statusCode >= 200 && res.statusCode < 300) return res;
    let text = '';
    try {
      text = await res.body.text();
    } catch {
      /* the status alone will do */
    }
    let message: string | undefined;
    try {
      message = upstreamErrorMessage(JSON.parse(text));
    } catch {
      message = text.trim() ? text.trim().slice(0, 2000) : undefined;
    }
    throw new UpstreamFailure('status', errors.badResponseStatus(res.statusCode, message), res.statusCode);
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
