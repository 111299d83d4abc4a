// The lean front's requests and answers (lean-front.ts says why it exists):
// which heads it serves, and one exchange's RelayExchange and Responder,
// writing each answer's head and body in one socket write, with the headers
// node:http would send.
import { STATUS_CODES } from 'node:http';
import { callerRequestId, newRequestId } from '@kbchat/shared';
import { ClientSignal, type Responder } from '../relay/context.js';
import { forwardedClient, relayHandler, type RelayExchange, type RelayHandler } from '../relay/front-serve.js';
import type { LeanConnection } from './lean-front.js';

/** node:http's default maximum size of a request head (--max-http-header-size). */
export const MAX_HEAD = 16 * 1024;
const HEAD_END = Buffer.from('\r\n\r\n');
const CR = 13;
const LF = 10;

// The heads the lean front serves: the request line, then header lines of a
// token, a colon and a value of visible ASCII, spaces and tabs (no other
// control characters, no obs-text, no obs-fold), each ending in CRLF.
// One pass, no backtracking; relayHandler() checks the path.
const HEAD_SHAPE = /^POST \/[!-~]* HTTP\/1\.1\r\n(?:[!#$%&'*+.^_`|~0-9A-Za-z-]+:[\t -~]*\r\n)*$/;
const REQUEST_LINE_START = 'POST '.length;
const DIGITS = /^\d{1,15}$/;

/** What the lean front needs from a request head it serves. */
export interface LeanHead {
  handler: RelayHandler;
  authorization: string | undefined;
  contentType: string | undefined;
  contentLength: number;
  forwardedFor: string | undefined;
  /** The caller's X-Request-Id, as sent (LeanExchange takes it when well formed). */
  requestId: string | undefined;
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
const HEADER_INDEX = new Map([
  ['host', HOST],
  ['authorization', AUTHORIZATION],
  ['content-type', CONTENT_TYPE],
  ['content-length', CONTENT_LENGTH],
  ['x-forwarded-for', FORWARDED_FOR],
  ['connection', CONNECTION],
  ['x-request-id', REQUEST_ID],
  ['transfer-encoding', -1],
  ['expect', -1],
  ['upgrade', -1],
]);

/** The head (request line and header lines, each with its CRLF) when the lean front serves it; undefined hands the connection to node:http. */
export function parseHead(text: string): LeanHead | undefined {
  if (!HEAD_SHAPE.test(text)) return undefined;
  let lineEnd = text.indexOf('\r\n');
  const handler = relayHandler(text.slice(REQUEST_LINE_START, lineEnd - ' HTTP/1.1'.length));
  if (!handler) return undefined;
  const values: (string | undefined)[] = [undefined, undefined, undefined, undefined, undefined, undefined, undefined];
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
    handler,
    authorization: values[AUTHORIZATION],
    contentType: values[CONTENT_TYPE],
    contentLength: Number(length),
    forwardedFor: values[FORWARDED_FOR],
    requestId: values[REQUEST_ID],
    close: connection === 'close',
  };
}

let dateSecond = -1;
let dateText = '';
/** The Date header's value, made once a second. */
function httpDate(): string {
  const now = Date.now();
  const second = Math.floor(now / 1000);
  if (second !== dateSecond) {
    dateSecond = second;
    dateText = new Date(now).toUTCString();
  }
  return dateText;
}

/** One chunk of a chunked body. */
function chunk(text: string): string {
  return `${Buffer.byteLength(text).toString(16)}\r\n${text}\r\n`;
}

const JSON_TYPE = 'content-type: application/json; charset=utf-8\r\n';

/** One request on a lean connection: its RelayExchange and Responder (one allocation per request). */
export class LeanExchange implements RelayExchange, Responder {
  /** The caller's X-Request-Id when well formed (the platform sends its own), else a new one. */
  readonly requestId: string;
  readonly signal = new ClientSignal();
  readonly responder: Responder = this;
  started = false;
  /** The answer is complete; what is left of the body is read and dropped. */
  finished = false;
  /** Body bytes still to arrive. */
  bodyLeft: number;
  private bodyParts: Buffer[] = [];
  private bodyWaiter: { resolve(text: string): void; reject(err: Error): void } | undefined;
  /** The stream's head, sent with its first chunk (as node:http does). */
  private streamHead: string | undefined;

  constructor(
    private readonly conn: LeanConnection,
    private readonly head: LeanHead,
  ) {
    this.requestId = (head.requestId !== undefined ? callerRequestId(head.requestId) : undefined) ?? newRequestId();
    this.bodyLeft = head.contentLength;
  }

  get authorization(): string | undefined {
    return this.head.authorization;
  }

  get contentType(): string | undefined {
    return this.head.contentType;
  }

  get declaredLength(): number {
    return this.head.contentLength;
  }

  clientIp(trustProxy: boolean): string {
    return (trustProxy ? forwardedClient(this.head.forwardedFor) : undefined) ?? this.conn.socket.remoteAddress ?? '';
  }

  /** The whole declared body (serveRelay checked it against the limit first). */
  readBody(): Promise<string | undefined> {
    if (this.head.contentLength === 0) return Promise.resolve(undefined);
    if (this.conn.closed) return Promise.reject(new Error('the client closed the connection before the body was complete'));
    return new Promise((resolve, reject) => {
      this.bodyWaiter = { resolve, reject };
      this.conn.bodyWanted();
    });
  }

  /** Whether the connection should hand this exchange its body bytes now. */
  takesBody(): boolean {
    return this.bodyLeft > 0 && (this.bodyWaiter !== undefined || this.finished);
  }

  receiveBody(part: Buffer): void {
    this.bodyLeft -= part.length;
    const waiter = this.bodyWaiter;
    if (waiter === undefined) return; // answered already: dropped
    if (this.bodyLeft > 0) {
      this.bodyParts.push(part);
      return;
    }
    this.bodyWaiter = undefined;
    const parts = this.bodyParts;
    waiter.resolve(parts.length === 0 ? part.toString('utf8') : Buffer.concat([...parts, part]).toString('utf8'));
    this.bodyParts = [];
  }

  /** Rejects a body read still waiting (the Error only then: its stack costs microseconds). */
  failBody(reason: string): void {
    const waiter = this.bodyWaiter;
    if (waiter === undefined) return;
    this.bodyWaiter = undefined;
    this.bodyParts = [];
    waiter.reject(new Error(reason));
  }

  /** The client left (or ended its side) before the answer was complete. */
  clientGone(): void {
    if (!this.finished) this.signal.abort();
    this.failBody('the client closed the connection before the body was complete');
  }

  canAnswer(): boolean {
    return !this.started && !this.finished && !this.conn.closed && this.conn.socket.writable;
  }

  answerError(status: number, headers: Record<string, string>, text: string): void {
    let lines = JSON_TYPE;
    for (const name in headers) lines += `${name}: ${headers[name]}\r\n`;
    this.send(status, lines, text);
  }

  json(status: number, text: string): void {
    this.send(status, `${JSON_TYPE}x-request-id: ${this.requestId}\r\n`, text);
  }

  /** A complete answer with a Content-Length, in one write. */
  private send(status: number, headerLines: string, text: string): void {
    if (this.finished) return;
    const close = this.head.close || this.conn.closesAfterAnswer();
    this.conn.write(
      `HTTP/1.1 ${status} ${STATUS_CODES[status] ?? 'unknown'}\r\n${headerLines}Date: ${httpDate()}\r\n${close ? 'Connection: close\r\n' : this.keepAlive()}Content-Length: ${Buffer.byteLength(text)}\r\n\r\n${text}`,
    );
    this.finish(close);
  }

  /** node:http's keep-alive lines. */
  private keepAlive(): string {
    const seconds = Math.floor(this.conn.front.server.keepAliveTimeout / 1000);
    return seconds > 0 ? `Connection: keep-alive\r\nKeep-Alive: timeout=${seconds}\r\n` : 'Connection: keep-alive\r\n';
  }

  startStream(): void {
    if (this.started) return;
    this.started = true;
    const connection = this.head.close || this.conn.closesAfterAnswer() ? 'close' : 'keep-alive';
    this.streamHead =
      `HTTP/1.1 200 OK\r\ncontent-type: text/event-stream; charset=utf-8\r\ncache-control: no-cache\r\nconnection: ${connection}\r\n` +
      `x-accel-buffering: no\r\nx-request-id: ${this.requestId}\r\nDate: ${httpDate()}\r\nTransfer-Encoding: chunked\r\n\r\n`;
  }

  write(text: string): void | Promise<void> {
    // An empty chunk would end a chunked body.
    if (this.finished || this.conn.closed || text === '') return;
    const out = this.streamHead === undefined ? chunk(text) : this.streamHead + chunk(text);
    this.streamHead = undefined;
    if (!this.conn.write(out)) return this.conn.drained();
  }

  end(text?: string): void {
    if (this.finished) return;
    if (!this.started) this.startStream();
    this.conn.write(`${this.streamHead ?? ''}${text ? chunk(text) : ''}0\r\n\r\n`);
    this.streamHead = undefined;
    this.finish(this.head.close || this.conn.closesAfterAnswer());
  }

  private finish(close: boolean): void {
    this.finished = true;
    this.conn.answered(this, close);
  }
}
