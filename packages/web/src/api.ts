// Calls to the service's API (the platform's, or the gateway's for its
// console) with the session cookie. Every change carries the session's CSRF
// token; every error becomes an ApiError with the service's own message
// (never a blank page).
let csrfToken = '';

export function setCsrfToken(token: string): void {
  csrfToken = token;
}

/** The header a change made outside api() (an upload, a streamed chat) must carry. */
export function csrfHeader(): Record<string, string> {
  return csrfToken ? { 'x-csrf-token': csrfToken } : {};
}

export class ApiError extends Error {
  constructor(
    readonly status: number,
    message: string,
    /** The platform's stable code (its envelope's statusText, e.g. empty_document), when it sent one. */
    readonly code?: string,
  ) {
    super(message);
  }
}

export interface CallOptions {
  method?: string;
  json?: unknown;
  /** 'omit' for a share link's visitor: no session cookie, so no CSRF token either. */
  credentials?: RequestCredentials;
  /** Cancels the call (a query that nobody reads any more: a page left, a search typed on). */
  signal?: AbortSignal;
}

/**
 * The answer's JSON, whole. A failure becomes an ApiError with the service's
 * own message: the platform's envelope `message`, or the gateway's OpenAI-shaped
 * `error.message`.
 */
export async function apiJson<T>(path: string, init: CallOptions = {}): Promise<T> {
  const method = init.method ?? (init.json === undefined ? 'GET' : 'POST');
  const credentials = init.credentials ?? 'same-origin';
  const headers: Record<string, string> = {};
  if (init.json !== undefined) headers['content-type'] = 'application/json';
  if (method !== 'GET' && credentials !== 'omit' && csrfToken) headers['x-csrf-token'] = csrfToken;
  let res: Response;
  try {
    res = await fetch(path, { method, headers, credentials, signal: init.signal, body: init.json === undefined ? undefined : JSON.stringify(init.json) });
  } catch (err) {
    // A cancelled call is no failure to show: its reader has gone.
    if (init.signal?.aborted) throw err;
    throw new ApiError(0, '');
  }
  const text = await res.text();
  let body: { message?: string; statusText?: string; error?: { message?: string } } | undefined;
  try {
    body = JSON.parse(text);
  } catch {
    body = undefined;
  }
  if (!res.ok) throw new ApiError(res.status, body?.message || body?.error?.message || `${res.status} ${res.statusText}`, body?.statusText || undefined);
  return body as T;
}

/** The platform's whole envelope: `data`, and the `message` some routes fill on success (warnings). */
export async function apiEnvelope<T>(path: string, init: CallOptions = {}): Promise<{ data: T; message: string }> {
  const body = await apiJson<{ data?: T; message?: string } | undefined>(path, init);
  return { data: body?.data as T, message: body?.message ?? '' };
}

/** The answer's `data`. */
export async function api<T>(path: string, init: CallOptions = {}): Promise<T> {
  return (await apiEnvelope<T>(path, init)).data;
}

export type * from '@kbchat/contracts/platform';

/** A path with its query, every value encoded (names and ids may hold any character). */
export function withQuery(path: string, params: Record<string, string | number | boolean | undefined>): string {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) if (v !== undefined) q.set(k, String(v));
  const s = q.toString();
  return s ? `${path}?${s}` : path;
}
