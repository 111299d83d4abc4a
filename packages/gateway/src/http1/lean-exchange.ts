// One request the lean front serves (lean-front.ts says why it exists): its
// Exchange and Responder, writing each answer's head and body in one socket
// write, with the headers node:http would send.
import { STATUS_CODES, type Server } from 'node:http';
import type { Socket } from 'node:net';
import { callerRequestId, newRequestId } from '@kbchat/shared';
import { BodyTooLargeError, ClientSignal, forwardedClient, type Exchange, type Responder } from './exchange.js';
import type { LeanHead } from './head-parser.js';

/** What an exchange needs of its connection (lean-front.ts's LeanConnection). */
export interface LeanLink {
  readonly front: { readonly server: Server };
  readonly socket: Socket;
  /** The socket is gone, or node:http's now. */
  readonly closed: boolean;
  /** Whether an answer must close the connection after it. */
  closesAfterAnswer(): boolean;
  /** Writes one answer's bytes; false when the socket is full (the caller waits for drained()). */
  write(text: string): boolean;
  drained(): Promise<void>;
  /** The exchange's answer is complete. */
  answered(ex: LeanExchange, close: boolean): void;
  /** Delivers body bytes to an exchange whose handler asked for them. */
  bodyWanted(): void;
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

/** One request on a lean connection: its Exchange and Responder (one allocation per request). */
export class LeanExchange implements Exchange, Responder {
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
    private readonly conn: LeanLink,
    private readonly head: LeanHead<unknown>,
  ) {
    this.requestId = (head.requestId !== undefined ? callerRequestId(head.requestId) : undefined) ?? newRequestId();
    this.bodyLeft = head.contentLength;
  }

  get authorization(): string | undefined {
    return this.head.authorization;
  }

  get apiKey(): string | undefined {
    return this.head.apiKey;
  }

  get priority(): string | undefined {
    return this.head.priority;
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

  /** The whole declared body; refused at once when the declared length is over the limit (the relay checks that first itself). */
  readBody(limit: number): Promise<string | undefined> {
    if (this.head.contentLength === 0) return Promise.resolve(undefined);
    if (this.head.contentLength > limit) return Promise.reject(new BodyTooLargeError(limit));
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

  /** Header lines set before the answer (setHeaders), sent with it. */
  private extraLines = '';

  setHeaders(pairs: readonly string[]): void {
    for (let i = 0; i + 1 < pairs.length; i += 2) this.extraLines += `${pairs[i]}: ${pairs[i + 1]}\r\n`;
  }

  json(status: number, text: string): void {
    this.send(status, `${JSON_TYPE}x-request-id: ${this.requestId}\r\n${this.extraLines}`, text);
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
      `x-accel-buffering: no\r\nx-request-id: ${this.requestId}\r\n${this.extraLines}Date: ${httpDate()}\r\nTransfer-Encoding: chunked\r\n\r\n`;
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
