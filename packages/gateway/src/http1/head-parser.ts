// The request heads the lean front serves itself (lean-front.ts says why it
// exists): strict HTTP/1.1 POSTs to a path the service routes, with the few
// headers it reads; anything else is node:http's. Pure text in, text out.

/** node:http's default maximum size of a request head (--max-http-header-size). */
export const MAX_HEAD = 16 * 1024;
const HEAD_END = Buffer.from('\r\n\r\n');
const CR = 13;
const LF = 10;

// The heads the lean front serves: the request line, then header lines of a
// token, a colon and a value of visible ASCII, spaces and tabs (no other
// control characters, no obs-text, no obs-fold), each ending in CRLF.
// One pass, no backtracking; the service's route() checks the path.
const HEAD_SHAPE = /^POST \/[!-~]* HTTP\/1\.1\r\n(?:[!#$%&'*+.^_`|~0-9A-Za-z-]+:[\t -~]*\r\n)*$/;
const REQUEST_LINE_START = 'POST '.length;
const DIGITS = /^\d{1,15}$/;

/** What the lean front needs from a request head it serves; `R` is the service's route. */
export interface LeanHead<R> {
  route: R;
  authorization: string | undefined;
  /** X-Api-Key, the header Anthropic's clients send their key in. */
  apiKey: string | undefined;
  contentType: string | undefined;
  contentLength: number;
  forwardedFor: string | undefined;
  /** The caller's X-Request-Id, as sent (LeanExchange takes it when well formed). */
  requestId: string | undefined;
  /** X-Kbchat-Priority, as sent (relayed to kbchat's local models only). */
  priority: string | undefined;
  /** The client sent `Connection: close`. */
  close: boolean;
}

/** The offset just past the blank line that ends the head at the start of `buf`; -1 while it is incomplete. */
export function findHeadEnd(buf: Buffer): number {
  const at = buf.indexOf(HEAD_END);
  return at < 0 ? -1 : at + 4;
}

/**
 * A CR or LF that is not part of a CRLF (a CR at the very end may still be):
 * node:http refuses such a head at once, and the lean front never serves one,
 * so an incomplete head with one is node's to answer without waiting for its end.
 */
export function hasLoneLineBreak(buf: Buffer): boolean {
  for (let at = buf.indexOf(LF); at >= 0; at = buf.indexOf(LF, at + 1)) if (buf[at - 1] !== CR) return true;
  for (let at = buf.indexOf(CR); at >= 0 && at + 1 < buf.length; at = buf.indexOf(CR, at + 1)) if (buf[at + 1] !== LF) return true;
  return false;
}

// The headers the lean front reads, by their place in parseHead's values (a
// second copy of one goes to node:http, which knows how to merge or refuse
// it); -1 for framing and protocol changes it leaves to node:http.
const HOST = 0;
const AUTHORIZATION = 1;
const CONTENT_TYPE = 2;
const CONTENT_LENGTH = 3;
const FORWARDED_FOR = 4;
const CONNECTION = 5;
const REQUEST_ID = 6;
const API_KEY = 7;
const PRIORITY = 8;
const HEADER_INDEX = new Map([
  ['host', HOST],
  ['authorization', AUTHORIZATION],
  ['content-type', CONTENT_TYPE],
  ['content-length', CONTENT_LENGTH],
  ['x-forwarded-for', FORWARDED_FOR],
  ['connection', CONNECTION],
  ['x-request-id', REQUEST_ID],
  ['x-api-key', API_KEY],
  ['x-kbchat-priority', PRIORITY],
  ['transfer-encoding', -1],
  ['expect', -1],
  ['upgrade', -1],
]);

/**
 * The head (request line and header lines, each with its CRLF) when the lean
 * front serves it: a path `route` knows and headers it can frame; undefined
 * hands the connection to node:http.
 */
export function parseHead<R>(text: string, route: (url: string) => R | undefined): LeanHead<R> | undefined {
  if (!HEAD_SHAPE.test(text)) return undefined;
  let lineEnd = text.indexOf('\r\n');
  const served = route(text.slice(REQUEST_LINE_START, lineEnd - ' HTTP/1.1'.length));
  if (served === undefined) return undefined;
  const values: (string | undefined)[] = [undefined, undefined, undefined, undefined, undefined, undefined, undefined, undefined, undefined];
  for (let at = lineEnd + 2; at < text.length; at = lineEnd + 2) {
    lineEnd = text.indexOf('\r\n', at);
    const colon = text.indexOf(':', at);
    const index = HEADER_INDEX.get(text.slice(at, colon).toLowerCase());
    if (index === undefined) continue;
    if (index < 0 || values[index] !== undefined) return undefined;
    // The shape allows only spaces and tabs around a value, which is what trim() takes off.
    values[index] = text.slice(colon + 1, lineEnd).trim();
  }
  const length = values[CONTENT_LENGTH];
  const connection = values[CONNECTION]?.toLowerCase();
  // node:http answers an HTTP/1.1 request without Host with 400 (requireHostHeader).
  if (values[HOST] === undefined || length === undefined || !DIGITS.test(length)) return undefined;
  if (connection !== undefined && connection !== 'keep-alive' && connection !== 'close') return undefined;
  return {
    route: served,
    authorization: values[AUTHORIZATION],
    apiKey: values[API_KEY],
    contentType: values[CONTENT_TYPE],
    contentLength: Number(length),
    forwardedFor: values[FORWARDED_FOR],
    requestId: values[REQUEST_ID],
    priority: values[PRIORITY],
    close: connection === 'close',
  };
}
