// Every request to a tool source (an MCP server, an OpenAPI document's API)
// goes through guardedFetch: link import's address rules (ingest/link.ts, no
// private address unless TOOL_ALLOW_PRIVATE=true, checked in the connection's
// own DNS lookup), no redirect followed by fetch itself (the MCP SDK follows
// same-origin ones by calling this again, so each hop is checked), and each
// answer's body capped. One per connection: close() ends its sockets.
import { Agent, fetch as undiciFetch, Response as UndiciResponse, type RequestInit as UndiciRequestInit } from 'undici';
import { findIngestError, IngestError } from '../ingest/errors.js';
import { guardedAgent, literalAddressRefusal, type HostResolver } from '../ingest/link.js';

export interface GuardOptions {
  allowPrivate: boolean;
  /** Connecting and the answer's head each within this. */
  timeoutMs: number;
  /** The largest body read of one answer. */
  maxBytes: number;
  /** The longest pause inside a body (0: none, for an MCP server's event stream; a call's own timeout bounds it). */
  bodyTimeoutMs?: number;
  resolve?: HostResolver;
}

export type GuardedFetch = (url: string | URL, init?: RequestInit) => Promise<Response>;

/** A failure of the network or of the rules, in words a user can act on. */
export class ToolFetchError extends Error {
  constructor(
    readonly code: 'forbidden_address' | 'invalid_url' | 'too_large' | 'timeout' | 'unreachable',
    message: string,
  ) {
    super(message);
  }
}

const NULL_BODY = new Set([101, 103, 204, 205, 304]);

export function guardedFetch(opts: GuardOptions): { fetch: GuardedFetch; close(): Promise<void> } {
  let current = '';
  const agent: Agent = guardedAgent({
    allowPrivate: opts.allowPrivate,
    resolve: opts.resolve,
    currentLink: () => current,
    timeoutMs: opts.timeoutMs,
    bodyTimeoutMs: opts.bodyTimeoutMs,
  });
  const fetch: GuardedFetch = async (input, init) => {
    const url = checkedUrl(String(input instanceof URL ? input.href : input), opts.allowPrivate);
    current = url.href;
    let res: UndiciResponse;
    try {
      res = await undiciFetch(url, { ...(init as UndiciRequestInit), redirect: 'manual', dispatcher: agent });
    } catch (err) {
      throw fetchFailure(err, url.href);
    }
    return capped(res, opts.maxBytes, url.href) as unknown as Response;
  };
  return { fetch, close: () => agent.destroy().catch(() => {}) };
}

/** An absolute http(s) URL that is not an IP address the rules refuse. */
/** A URL as messages and answers show it: no user part and no query (an MCP server's key is often in one of them). */
export function shownUrl(link: string): string {
  try {
    const u = new URL(link);
    const query = u.search ? '?…' : '';
    u.username = '';
    u.password = '';
    u.search = '';
    u.hash = '';
    return u.href + query;
  } catch {
    return link.replace(/[?#].*$/, '').slice(0, 200);
  }
}

export function checkedUrl(link: string, allowPrivate: boolean): URL {
  let url: URL;
  try {
    url = new URL(link);
  } catch {
    throw new ToolFetchError('invalid_url', `${shownUrl(link)} is not a valid URL; give an absolute http:// or https:// address.`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    throw new ToolFetchError('invalid_url', `${shownUrl(link)}: only http:// and https:// addresses can be used.`);
  const refusal = literalAddressRefusal(url, allowPrivate);
  if (refusal) throw forbidden(refusal);
  return url;
}

function forbidden(err: IngestError): ToolFetchError {
  return new ToolFetchError('forbidden_address', err.message.replace('LINK_ALLOW_PRIVATE', 'TOOL_ALLOW_PRIVATE'));
}

/** The rule that refused, or the network's reason, whatever wrapped it. */
export function fetchFailure(err: unknown, link: string): Error {
  if (err instanceof ToolFetchError) return err;
  const ingest = findIngestError(err);
  if (ingest?.code === 'link_forbidden_address') return forbidden(ingest);
  if (ingest) return new ToolFetchError('unreachable', ingest.message);
  if ((err as Error)?.name === 'AbortError' || (err as Error)?.name === 'TimeoutError') return err as Error;
  const cause = (err as { cause?: { code?: string; message?: string } })?.cause;
  const detail = cause?.code ?? cause?.message ?? (err as Error)?.message ?? String(err);
  return new ToolFetchError('unreachable', `${shownUrl(link)} could not be reached (${detail}).`);
}

/** The answer with its body cut off (an error) past maxBytes. */
function capped(res: UndiciResponse, maxBytes: number, link: string): UndiciResponse {
  if (!res.body || NULL_BODY.has(res.status)) return res;
  const declared = Number(res.headers.get('content-length'));
  let total = 0;
  const tooLarge = () => new ToolFetchError('too_large', `${shownUrl(link)} answered more than ${maxBytes} bytes, the limit of one answer.`);
  if (Number.isFinite(declared) && declared > maxBytes) {
    void res.body.cancel().catch(() => {});
    throw tooLarge();
  }
  const body = res.body.pipeThrough(
    new TransformStream<Uint8Array, Uint8Array>({
      transform(chunk, ctl) {
        total += chunk.byteLength;
        if (total > maxBytes) ctl.error(tooLarge());
        else ctl.enqueue(chunk);
      },
    }),
  );
  return new UndiciResponse(body, { status: res.status, statusText: res.statusText, headers: res.headers });
}
