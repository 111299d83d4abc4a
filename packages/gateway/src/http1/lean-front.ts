// A service's POSTs (the gateway's relay: its three endpoints) served straight
// off the socket, for the simple, common request; node:http takes the socket
// over for anything else. Why:
// node:http's server machinery (IncomingMessage and ServerResponse, their
// stream events) costs 25-50 us of CPU a relayed request (a bare proxy:
// 75-130 us on node:http, 53-80 us on a minimal parser); with this front the
// gateway's CPU per request went x0.74-0.77 non-stream, x0.81-0.93 stream
// (2026-11-23, compare-builds.mjs). A served request is exactly `POST <relay path> HTTP/1.1`
// with well-formed headers in at most 16 KB, one Host, one Content-Length of
// digits and no Transfer-Encoding, Expect or Upgrade (head-parser.ts). Anything
// else hands the socket, with the bytes already read, to node:http for the
// rest of the connection's life (handOver below), so that its strict parser,
// its 400/431/408 answers and Fastify's routes see exactly what the client sent.
// What happens to a served request once its head is read is the service's
// (exchange.ts), as on the node:http front (node-front.ts).
import type { Server } from 'node:http';
import { Socket } from 'node:net';
import type { ExchangeService } from './exchange.js';
import { findHeadEnd, hasLoneLineBreak, parseHead, MAX_HEAD } from './head-parser.js';
import { LeanExchange, type LeanLink } from './lean-exchange.js';

// Unread bytes buffered (pipelined requests, a body the handler has not asked
// for yet) before the socket is paused, so that a client cannot make us buffer more.
const PAUSE_AT = 64 * 1024;
// node:http closes an idle keep-alive socket this long after the advertised timeout (HTTP_SERVER_KEEP_ALIVE_TIMEOUT_BUFFER).
const KEEP_ALIVE_GRACE_MS = 1000;
// What node:http's own check reports for a request that does not arrive in time (its 'clientError', answered as node:http's 408 is).
const REQUEST_TIMEOUT = Object.assign(new Error('the request did not arrive in time'), { code: 'ERR_HTTP_REQUEST_TIMEOUT' });

type ConnectionListener = (this: Server, socket: Socket) => void;

/** The lean front of one node:http server: its connections, timeouts and shutdown. */
class LeanFront {
  readonly connections = new Set<LeanConnection>();
  /** server.close() was called: answers say `Connection: close` and busy connections end after them. */
  closing = false;
  private sweeper: NodeJS.Timeout | undefined;

  constructor(
    readonly server: Server,
    private readonly nodeListeners: ConnectionListener[],
    readonly service: ExchangeService<unknown>,
  ) {}

  /** The service's route of a path (one closure per front, not per request). */
  readonly route = (url: string): unknown => this.service.route(url);

  /**
   * What node:http does with a request that does not arrive in time: the
   * server's 'clientError' (whose listener answers 408 and closes), or its
   * own bare 408 when nobody listens.
   */
  requestTimedOut(socket: Socket): void {
    if (this.server.listenerCount('clientError') > 0) this.server.emit('clientError', REQUEST_TIMEOUT, socket);
    else {
      socket.write('HTTP/1.1 408 Request Timeout\r\nConnection: close\r\n\r\n');
      socket.destroySoon();
    }
  }

  /** Gives the socket to node:http as if it had just connected. */
  nodeConnection(socket: Socket): void {
    for (const listener of this.nodeListeners) listener.call(this.server, socket);
  }

  /** Like node:http's closeIdleConnections: idle sockets go now, busy ones after their answer. */
  closeIdle(): void {
    for (const conn of this.connections) if (conn.idle()) conn.socket.destroy();
  }

  closeAll(): void {
    for (const conn of this.connections) conn.socket.destroy();
  }

  /**
   * The timeouts, read from the node:http server's own settings each time (so
   * that both fronts follow them): headersTimeout (60 s) for a request's head
   * and body, keepAliveTimeout (72 s) for an idle connection. One sweep for all
   * connections instead of a timer per request.
   */
  startSweeping(): void {
    if (this.sweeper) return;
    const sweep = () => {
      const now = Date.now();
      const { headersTimeout, keepAliveTimeout } = this.server;
      const idleMs = keepAliveTimeout > 0 ? keepAliveTimeout + KEEP_ALIVE_GRACE_MS : 0;
      for (const conn of this.connections) conn.checkTimeouts(now, headersTimeout, idleMs);
      this.sweeper = setTimeout(sweep, sweepInterval(headersTimeout, keepAliveTimeout)).unref();
    };
    this.sweeper = setTimeout(sweep, sweepInterval(this.server.headersTimeout, this.server.keepAliveTimeout)).unref();
  }

  stopSweeping(): void {
    clearTimeout(this.sweeper);
    this.sweeper = undefined;
  }
}

/** An eighth of the shortest timeout, between 10 ms and 1 s: timeouts fire at most 12.5% late. */
function sweepInterval(headersTimeout: number, keepAliveTimeout: number): number {
  const shortest = Math.min(headersTimeout || Infinity, keepAliveTimeout || Infinity);
  return Math.max(10, Math.min(1000, shortest / 8));
}

/** One socket while the lean front serves it. */
export class LeanConnection implements LeanLink {
  /** Bytes read and not yet used: the next request's head, or the current one's body. */
  private pending: Buffer | undefined;
  /** The request being served; the next one is not parsed until its answer is complete. */
  private exchange: LeanExchange | undefined;
  /** When the first byte of the request being received arrived; at first, when the client connected. */
  private requestSince = Date.now();
  /**
   * No request has started yet. node:http counts a new connection as a request
   * on its way (headersTimeout, then 408), so that connecting and sending
   * nothing holds no socket for long; so does the lean front.
   */
  private fresh = true;
  private idleSince = Date.now();
  /** When bytes last arrived: a body times out when it stalls, not when it is long. */
  private lastReadAt = 0;
  private paused = false;
  private drainWaiter: (() => void) | undefined;
  private draining: Promise<void> | undefined;
  /** The socket is gone, or node:http's now. */
  closed = false;
  private readonly onData = (chunk: Buffer) => {
    // Inline rather than through guard(): no closure per read.
    try {
      this.received(chunk);
    } catch (err) {
      this.failed(err);
    }
  };
  private readonly onEnd = () => this.guard(() => this.clientEnded());
  private readonly onClose = () => this.guard(() => this.socketClosed());
  private readonly onDrain = () => this.drainWaiter?.();
  private readonly onError = () => {}; // 'close' follows; the exchange learns of it there

  constructor(
    readonly front: LeanFront,
    readonly socket: Socket,
  ) {
    socket.on('data', this.onData);
    socket.on('end', this.onEnd);
    socket.on('close', this.onClose);
    socket.on('drain', this.onDrain);
    socket.on('error', this.onError);
    front.connections.add(this);
  }

  idle(): boolean {
    return this.exchange === undefined && this.pending === undefined;
  }

  /** Whether an answer must close the connection after it (the front is closing, or the client is leaving). */
  closesAfterAnswer(): boolean {
    return this.front.closing || !this.socket.writable;
  }

  /** Writes one answer's bytes; false when the socket is full (the caller waits for drained()). */
  write(text: string): boolean {
    if (this.closed || !this.socket.writable) return true;
    return this.socket.write(text);
  }

  /** Resolves when the socket takes more, or is gone (one promise for all who wait). */
  drained(): Promise<void> {
    if (this.closed) return Promise.resolve();
    this.draining ??= new Promise((resolve) => {
      this.drainWaiter = () => {
        this.drainWaiter = undefined;
        this.draining = undefined;
        resolve();
      };
    });
    return this.draining;
  }

  /** The exchange's answer is complete: close, or go on with its unread body and the next request. */
  answered(ex: LeanExchange, close: boolean): void {
    if (close) {
      this.socket.destroySoon(); // as node:http does for `Connection: close`: end, then destroy once flushed
      return;
    }
    ex.failBody('the answer was sent before the body was read');
    if (ex.bodyLeft === 0) this.exchangeDone();
    // What is already here (a pipelined request, the rest of the body) is handled
    // on its own turn, not inside the handler that answered.
    if (this.pending !== undefined) queueMicrotask(() => this.guard(() => this.pump()));
  }

  /** Delivers body bytes to an exchange whose handler asked for them. */
  bodyWanted(): void {
    this.pump();
  }

  private exchangeDone(): void {
    this.exchange = undefined;
    this.idleSince = Date.now();
    this.requestSince = this.pending === undefined ? 0 : this.idleSince;
    // The server began to close while this connection was busy (reading the rest of a body).
    if (this.front.closing) this.socket.destroySoon();
  }

  private received(chunk: Buffer): void {
    this.lastReadAt = Date.now();
    if (this.pending === undefined) {
      this.pending = chunk;
      if (this.exchange === undefined) this.requestSince = Date.now();
    } else {
      this.pending = Buffer.concat([this.pending, chunk]);
    }
    this.pump();
  }

  private pump(): void {
    for (;;) {
      if (this.closed || this.pending === undefined) break;
      const ex = this.exchange;
      if (ex === undefined) {
        if (!this.startExchange(this.pending)) break;
        continue;
      }
      if (!ex.takesBody()) break;
      const take = Math.min(ex.bodyLeft, this.pending.length);
      const part = take === this.pending.length ? this.pending : this.pending.subarray(0, take);
      this.pending = take === this.pending.length ? undefined : this.pending.subarray(take);
      ex.receiveBody(part);
      if (ex.bodyLeft === 0 && ex.finished) this.exchangeDone();
    }
    if (this.closed) return; // handed over to node:http, or gone
    // Flow control: stop reading while unread bytes pile up.
    const full = this.pending !== undefined && this.pending.length >= PAUSE_AT;
    if (full !== this.paused) {
      this.paused = full;
      if (full) this.socket.pause();
      else this.socket.resume();
    }
  }

  /** Starts serving the request at the start of `buf`; false when its head is incomplete or it goes to node:http. */
  private startExchange(buf: Buffer): boolean {
    const end = findHeadEnd(buf);
    if (end < 0) {
      // Waiting for the end of a head node:http refuses (a bare LF) would hold it until the 408.
      if (buf.length > MAX_HEAD || hasLoneLineBreak(buf)) this.handOver(false);
      return false;
    }
    const head = end <= MAX_HEAD ? parseHead(buf.toString('latin1', 0, end - 2), this.front.route) : undefined;
    if (head === undefined) {
      this.handOver(false);
      return false;
    }
    this.pending = end < buf.length ? buf.subarray(end) : undefined;
    const ex = new LeanExchange(this, head);
    this.exchange = ex;
    this.fresh = false;
    this.front.service.serve(head.route, ex);
    return true;
  }

  /**
   * Gives the connection to node:http for good. node's connection listener
   * (lib/_http_server.js connectionListenerInternal) attaches its 'data'
   * listener and makes its parser consume the socket's handle: from then on
   * new bytes go from the handle to the parser natively, without 'data'
   * events. The bytes we already read are fed to its 'data' listener
   * (socketOnData -> parser.execute) synchronously, right after the listener
   * is attached: nothing can arrive from the handle before the current turn
   * ends, so the parser sees every byte once and in order. (socket.unshift
   * would wait for the stream to flow on a later tick and fails once the
   * socket's 'end' has been emitted.) Bytes the stream buffered while paused
   * go first into what we feed.
   */
  private handOver(ended: boolean): void {
    const socket = this.socket;
    this.front.connections.delete(this);
    this.closed = true;
    this.paused = false;
    socket.off('data', this.onData);
    socket.off('end', this.onEnd);
    socket.off('close', this.onClose);
    socket.off('drain', this.onDrain);
    socket.off('error', this.onError);
    let bytes = this.pending;
    this.pending = undefined;
    for (let chunk: Buffer | null; (chunk = socket.read() as Buffer | null) !== null;) bytes = bytes ? Buffer.concat([bytes, chunk]) : chunk;
    if (socket.isPaused()) socket.resume();
    this.front.nodeConnection(socket);
    if (bytes !== undefined && !socket.destroyed) socket.emit('data', bytes);
    // node's 'end' listener did not see the end we saw: its parser decides what an unfinished request gets.
    if (ended && !socket.destroyed) socket.emit('end');
  }

  private clientEnded(): void {
    if (this.exchange === undefined && this.pending !== undefined) return this.handOver(true);
    // As node:http does (httpAllowHalfOpen false): a client that ends its side is leaving.
    this.exchange?.clientGone();
    this.socket.end();
  }

  private socketClosed(): void {
    this.closed = true;
    this.front.connections.delete(this);
    this.exchange?.clientGone();
    this.drainWaiter?.();
  }

  checkTimeouts(now: number, requestMs: number, idleMs: number): void {
    this.guard(() => this.closeIfLate(now, requestMs, idleMs));
  }

  private closeIfLate(now: number, requestMs: number, idleMs: number): void {
    const ex = this.exchange;
    const receiving = ex === undefined ? this.pending !== undefined || this.fresh : ex.bodyLeft > 0 && !this.paused;
    if (receiving) {
      // A head must arrive within requestMs of its first byte (node's headersTimeout); a body may
      // take longer, but not stall for that long (node, with requestTimeout 0, never ends a slow body).
      const since = ex === undefined ? this.requestSince : Math.max(this.lastReadAt, this.requestSince);
      if (requestMs > 0 && now - since > requestMs) {
        // node:http's answer to a request that does not arrive in time: 408, then close.
        if (ex === undefined || ex.canAnswer()) this.front.requestTimedOut(this.socket);
        else this.socket.destroy();
      }
    } else if (ex === undefined && idleMs > 0 && now - this.idleSince > idleMs) {
      this.socket.destroy();
    }
  }

  /** Runs an event handler; a bug in it costs this connection, never the process. */
  private guard(fn: () => void): void {
    try {
      fn();
    } catch (err) {
      this.failed(err);
    }
  }

  private failed(err: unknown): void {
    this.front.service.log().error({ err }, 'lean front: connection failed');
    this.socket.destroy();
  }
}

/**
 * Puts the lean front in front of a node:http server: every new socket
 * starts in the lean front, and node's own connection listener is kept for
 * the sockets handed over. The server object stays the one Fastify listens
 * on and closes; close() and closeIdleConnections() reach the lean
 * connections too.
 */
export function installLeanFront<R>(server: Server, service: ExchangeService<R>): void {
  const nodeListeners = server.listeners('connection') as ConnectionListener[];
  server.removeAllListeners('connection');
  const front = new LeanFront(server, nodeListeners, service);
  server.on('connection', (socket: Socket) => {
    try {
      // A stream other than a TCP socket (one can be emitted into an http.Server) is node:http's.
      if (socket instanceof Socket) new LeanConnection(front, socket);
      else front.nodeConnection(socket);
    } catch (err) {
      service.log().error({ err }, 'lean front: could not take a connection');
      socket.destroy();
    }
  });
  server.on('listening', () => {
    front.closing = false;
    front.startSweeping();
  });
  server.on('close', () => front.stopSweeping());
  const { close, closeIdleConnections, closeAllConnections } = server;
  server.close = function (this: Server, ...args: Parameters<Server['close']>) {
    front.closing = true;
    return close.apply(this, args);
  };
  server.closeIdleConnections = function (this: Server) {
    closeIdleConnections.call(this);
    front.closeIdle();
  };
  server.closeAllConnections = function (this: Server) {
    closeAllConnections.call(this);
    front.closeAll();
  };
}
