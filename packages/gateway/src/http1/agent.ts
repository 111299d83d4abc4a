// The gateway's HTTP/1.1 client to upstreams: keep-alive connections per
// origin (plain or TLS), one request at a time on each, answers read by
// response-parser.ts. Why not undici, the usual choice: on the relay bench a
// request's trip through undici cost 40-60 us of CPU against 10-15 us here,
// and the relay's CPU is what its throughput is made of. The relay needs one
// narrow thing (POST a JSON text, read the answer as it arrives, with
// backpressure, timeouts and abort), which is this file.
import { isIP, Socket, connect as netConnect } from 'node:net';
import { connect as tlsConnect } from 'node:tls';
import { ResponseParser, type ResponseEvents } from './response-parser.js';

export interface AgentOptions {
  connectTimeoutMs: number;
  /** From the request written (or, on a new connection, the connection made) to the answer's head. */
  headersTimeoutMs: number;
  /** Between two pieces of the answer's body (not counted while the relay holds the upstream back). */
  bodyTimeoutMs: number;
  /** How long an unused connection is kept, unless the upstream's Keep-Alive header says less. */
  keepAliveMs?: number;
  maxConnectionsPerOrigin?: number;
  maxHeadBytes?: number;
}

/** What the caller can do to a request in flight. */
export interface RequestControl {
  abort(reason: Error): void;
  pause(): void;
  resume(): void;
}

export interface RequestHandler {
  onRequestStart(c: RequestControl): void;
  onResponseStart(c: RequestControl, status: number, headers: Record<string, string>): void;
  onResponseData(c: RequestControl, chunk: Buffer): void;
  onResponseEnd(c: RequestControl): void;
  onResponseError(c: RequestControl, err: Error): void;
}

export interface RequestOptions {
  origin: string;
  path: string;
  method: string;
  headers: Record<string, string>;
  body: string;
}

/** A failure of the agent's own (the socket's errors keep their Node codes: ECONNREFUSED, ECONNRESET...). */
export class AgentError extends Error {
  constructor(
    readonly code: 'CONNECT_TIMEOUT' | 'HEADERS_TIMEOUT' | 'BODY_TIMEOUT' | 'UPSTREAM_CLOSED' | 'BAD_REQUEST_HEADER' | 'AGENT_CLOSED',
    message: string,
  ) {
    super(message);
  }
}

const HEADER_NAME = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
const HEADER_VALUE_BAD = /[\r\n\0]/;
const KEEP_ALIVE_TIMEOUT = /(?:^|,)\s*timeout=(\d+)/i;
// Bodies up to this size go out in one write with the head (one syscall); larger ones are not copied.
const ONE_WRITE_LIMIT = 64 * 1024;
// How soon after its write a reused connection's failure counts as the stale keep-alive race (the upstream's FIN or RST was already on its way).
const STALE_RETRY_MS = 1000;

/** The request head, or an AgentError for a header that would break the framing. */
function requestHead(opts: RequestOptions, host: string, bodyBytes: number): string | AgentError {
  let head = `${opts.method} ${opts.path} HTTP/1.1\r\nhost: ${host}\r\n`;
  for (const name in opts.headers) {
    const value = opts.headers[name]!;
    if (!HEADER_NAME.test(name) || HEADER_VALUE_BAD.test(value))
      return new AgentError('BAD_REQUEST_HEADER', `the header ${JSON.stringify(name)} cannot be sent: it holds a line break or an invalid character`);
    head += `${name}: ${value}\r\n`;
  }
  return `${head}content-length: ${bodyBytes}\r\n\r\n`;
}

/** One request: queued, then on a connection until its answer ends or fails. */
class Exchange implements RequestControl {
  conn: Connection | undefined;
  settled = false;
  paused = false;
  /** Sent once more after a reused connection the upstream had closed failed it (Connection.failOrRetry). */
  retried = false;

  constructor(
    readonly opts: RequestOptions,
    readonly handler: RequestHandler,
    readonly pool: OriginPool,
    /** The request's head (host, headers, content-length), built before any connection is taken. */
    readonly head: string,
    readonly bodyBytes: number,
  ) {}

  abort(reason: Error): void {
    if (this.settled) return;
    if (this.conn) this.conn.destroy();
    else this.pool.unqueue(this);
    this.fail(reason);
  }

  pause(): void {
    this.paused = true;
    this.conn?.socket.pause();
  }

  resume(): void {
    if (!this.paused) return;
    this.paused = false;
    const conn = this.conn;
    if (!conn) return;
    if (conn.phase === 'body') conn.deadline = Date.now() + this.pool.agent.opts.bodyTimeoutMs;
    conn.socket.resume();
  }

  fail(err: Error): void {
    if (this.settled) return;
    this.settled = true;
    this.conn = undefined;
    this.handler.onResponseError(this, err);
  }
}

type Phase = 'connecting' | 'headers' | 'body' | 'idle';

/** One socket to an upstream, carrying one exchange at a time. */
class Connection implements ResponseEvents {
  exchange: Exchange | undefined;
  phase: Phase = 'connecting';
  /** When the current phase times out (ms since the epoch). */
  deadline: number;
  reused = false;
  private parser: ResponseParser;
  private closed = false;
  /** The upstream's Keep-Alive timeout, from the last answer's headers. */
  private keepAliveMs: number | undefined;
  /** Whether the last answer left the connection fit for another request. */
  private reusable = false;
  /** When the current request was written. */
  private sentAt = 0;

  constructor(
    readonly socket: Socket,
    readonly pool: OriginPool,
  ) {
    const { opts } = pool.agent;
    this.deadline = Date.now() + opts.connectTimeoutMs;
    this.parser = new ResponseParser(this, opts.maxHeadBytes);
    socket.setNoDelay(true);
    socket.setKeepAlive(true, 60_000);
    // Connected while a request waits: its head was written on connecting, now the headers timeout runs.
    socket.once(pool.tls ? 'secureConnect' : 'connect', () => {
      if (this.phase !== 'connecting') return;
      this.phase = 'headers';
      this.deadline = Date.now() + opts.headersTimeoutMs;
    });
    socket.on('data', (chunk: Buffer) => this.onData(chunk));
    socket.on('end', () => this.onEnd());
    socket.on('error', (err) => this.onSocketGone(err));
    socket.on('close', () => this.onSocketGone(new AgentError('UPSTREAM_CLOSED', 'the upstream closed the connection before the answer was complete')));
  }

  send(ex: Exchange): void {
    this.exchange = ex;
    ex.conn = this;
    const { opts } = this.pool.agent;
    this.parser = new ResponseParser(this, opts.maxHeadBytes);
    if (this.phase !== 'connecting') this.phase = 'headers';
    this.sentAt = Date.now();
    this.deadline = this.sentAt + (this.phase === 'connecting' ? opts.connectTimeoutMs : opts.headersTimeoutMs);
    if (ex.bodyBytes <= ONE_WRITE_LIMIT) this.socket.write(ex.head + ex.opts.body);
    else {
      this.socket.cork();
      this.socket.write(ex.head);
      this.socket.write(ex.opts.body);
      this.socket.uncork();
    }
    if (ex.paused) this.socket.pause();
  }

  private onData(chunk: Buffer): void {
    const ex = this.exchange;
    // Bytes nobody asked for (on an idle connection) mean it cannot be trusted with the next request.
    if (!ex) return this.destroy();
    // The body timer restarts once per read, not per piece of it.
    if (this.phase === 'body') this.deadline = Date.now() + this.pool.agent.opts.bodyTimeoutMs;
    let left: number;
    try {
      left = this.parser.feed(chunk);
    } catch (err) {
      this.destroy();
      ex.fail(err as Error);
      return;
    }
    // The answer ended in this read: the connection is free only if nothing came after it.
    if (this.exchange === undefined && !this.closed) {
      if (left === 0 && this.reusable) this.pool.release(this, this.keepAliveMs);
      else this.destroy();
    }
  }

  onHead(status: number, headers: Record<string, string>): void {
    const ex = this.exchange!;
    this.phase = 'body';
    this.deadline = Date.now() + this.pool.agent.opts.bodyTimeoutMs;
    const hint = KEEP_ALIVE_TIMEOUT.exec(headers['keep-alive'] ?? '');
    this.keepAliveMs = hint ? Number(hint[1]) * 1000 : undefined;
    ex.handler.onResponseStart(ex, status, headers);
  }

  onBody(chunk: Buffer): void {
    const ex = this.exchange;
    if (!ex || ex.settled) return;
    ex.handler.onResponseData(ex, chunk);
  }

  /** Released (or destroyed) by onData once the read that ended the answer is used up, never from inside the parser. */
  onComplete(reusable: boolean): void {
    const ex = this.exchange!;
    this.exchange = undefined;
    ex.conn = undefined;
    this.reusable = reusable;
    if (ex.paused) this.socket.resume();
    if (ex.settled) return;
    ex.settled = true;
    ex.handler.onResponseEnd(ex);
  }

  private onEnd(): void {
    const ex = this.exchange;
    if (ex) {
      try {
        this.parser.end(); // completes an answer that runs until the close
      } catch (err) {
        this.failOrRetry(ex, err as Error);
        this.destroy();
        return;
      }
    }
    this.destroy();
  }

  private onSocketGone(err: Error): void {
    const ex = this.exchange;
    // Before destroy(): a retry must take the slot this connection frees, ahead of the queue.
    if (ex) this.failOrRetry(ex, err);
    this.destroy();
  }

  /**
   * An upstream may close an idle keep-alive connection just as a request is
   * written on it: the failure then comes at once, with nothing answered, and
   * the request is sent once more on a new connection (browsers do the same).
   * A failure later than STALE_RETRY_MS after the write may come from an
   * upstream that had begun the work (a crash, a deploy): never sent twice.
   */
  private failOrRetry(ex: Exchange, err: Error): void {
    this.exchange = undefined;
    ex.conn = undefined;
    if (ex.settled) return;
    if (this.reused && !this.parser.started && !ex.retried && Date.now() - this.sentAt < STALE_RETRY_MS) {
      ex.retried = true;
      this.pool.retryFirst(ex, this);
      return;
    }
    ex.fail(err);
  }

  /** Called by the agent's sweep: fails what has waited too long. */
  expire(now: number): void {
    if (now < this.deadline || this.closed) return;
    const ex = this.exchange;
    if (this.phase === 'idle' || !ex) return this.destroy();
    if (this.phase === 'body' && ex.paused) return; // held back by the relay, not slow upstream
    const { opts } = this.pool.agent;
    const err =
      this.phase === 'connecting'
        ? new AgentError('CONNECT_TIMEOUT', `connect timeout: no connection to ${this.pool.host} after ${opts.connectTimeoutMs} ms`)
        : this.phase === 'headers'
          ? new AgentError('HEADERS_TIMEOUT', `no answer in ${opts.headersTimeoutMs} ms`)
          : new AgentError('BODY_TIMEOUT', `the answer stalled for ${opts.bodyTimeoutMs} ms`);
    this.exchange = undefined;
    ex.conn = undefined;
    this.destroy();
    ex.fail(err);
  }

  destroy(): void {
    if (this.closed) return;
    this.closed = true;
    this.socket.destroy();
    this.pool.forget(this);
  }

  get isClosed(): boolean {
    return this.closed;
  }
}

/** The connections to one origin and the requests waiting for one. */
class OriginPool {
  readonly tls: boolean;
  readonly host: string;
  private readonly hostname: string;
  private readonly port: number;
  private idle: Connection[] = [];
  readonly all = new Set<Connection>();
  private queue: Exchange[] = [];

  constructor(
    readonly agent: Http1Agent,
    origin: string,
  ) {
    const url = new URL(origin);
    if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new Error(`unsupported protocol ${url.protocol} in ${origin}`);
    this.tls = url.protocol === 'https:';
    this.host = url.host;
    this.hostname = url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname;
    this.port = Number(url.port) || (this.tls ? 443 : 80);
  }

  dispatch(ex: Exchange): void {
    const now = Date.now();
    let conn: Connection | undefined;
    while ((conn = this.idle.pop())) {
      // Past its keep-alive time the upstream may already have closed it.
      if (conn.deadline > now && !conn.isClosed) break;
      conn.destroy();
    }
    if (conn) {
      conn.reused = true;
      conn.send(ex);
    } else if (this.all.size < this.agent.maxConnections) this.connectFor(ex);
    else this.queue.push(ex);
  }

  connectFor(ex: Exchange): void {
    const socket = this.tls
      ? tlsConnect({ host: this.hostname, port: this.port, servername: isIP(this.hostname) ? undefined : this.hostname, ALPNProtocols: ['http/1.1'] })
      : netConnect({ host: this.hostname, port: this.port });
    const conn = new Connection(socket, this);
    this.all.add(conn);
    this.agent.watch();
    conn.send(ex);
  }

  /**
   * A request to send again after `from` failed: first in the queue while
   * `from` is still counted, so the slot its destroy() frees is this
   * request's; else on a new connection if there is room (or while closing,
   * when nothing queued is started).
   */
  retryFirst(ex: Exchange, from: Connection): void {
    if (this.agent.closing || (!this.all.has(from) && this.all.size < this.agent.maxConnections)) this.connectFor(ex);
    else this.queue.unshift(ex);
  }

  unqueue(ex: Exchange): void {
    const i = this.queue.indexOf(ex);
    if (i >= 0) this.queue.splice(i, 1);
  }

  /** A connection is free again: the next queued request takes it, or it waits as idle. */
  release(conn: Connection, keepAliveMs?: number): void {
    if (conn.isClosed) return;
    if (this.agent.closing) return conn.destroy();
    const next = this.queue.shift();
    if (next) {
      conn.reused = true;
      conn.send(next);
      return;
    }
    conn.phase = 'idle';
    // Given up a second before the upstream's own keep-alive limit, as undici does with two.
    const limit = keepAliveMs === undefined ? this.agent.keepAliveMs : Math.min(this.agent.keepAliveMs, Math.max(keepAliveMs - 1000, keepAliveMs / 2));
    conn.deadline = Date.now() + limit;
    this.idle.push(conn);
  }

  forget(conn: Connection): void {
    this.all.delete(conn);
    const i = this.idle.indexOf(conn);
    if (i >= 0) this.idle.splice(i, 1);
    // A slot is free: a queued request gets a new connection.
    const next = this.queue.shift();
    if (next && !this.agent.closing) this.connectFor(next);
    else if (next) next.fail(new AgentError('AGENT_CLOSED', 'the gateway is shutting down'));
    this.agent.settleClose();
  }
}

export class Http1Agent {
  readonly opts: Required<AgentOptions>;
  readonly maxConnections: number;
  readonly keepAliveMs: number;
  closing = false;
  private readonly pools = new Map<string, OriginPool>();
  private sweep: NodeJS.Timeout | undefined;
  private closed: (() => void) | undefined;
  private whenClosed: Promise<void> | undefined;

  constructor(opts: AgentOptions) {
    this.opts = { keepAliveMs: 30_000, maxConnectionsPerOrigin: 512, maxHeadBytes: 16 * 1024, ...opts };
    this.maxConnections = this.opts.maxConnectionsPerOrigin;
    this.keepAliveMs = this.opts.keepAliveMs;
  }

  /** Sends a request; the handler hears of everything that follows (never throws). */
  dispatch(opts: RequestOptions, handler: RequestHandler): void {
    let pool = this.pools.get(opts.origin);
    if (!pool) {
      try {
        pool = new OriginPool(this, opts.origin);
      } catch (err) {
        // Not a URL, or not http(s): the handler hears of it like any other failure.
        const none: RequestControl = { abort() {}, pause() {}, resume() {} };
        handler.onRequestStart(none);
        return handler.onResponseError(none, err as Error);
      }
      this.pools.set(opts.origin, pool);
    }
    const bodyBytes = Buffer.byteLength(opts.body);
    const head = requestHead(opts, pool.host, bodyBytes);
    const ex = new Exchange(opts, handler, pool, typeof head === 'string' ? head : '', bodyBytes);
    handler.onRequestStart(ex);
    if (ex.settled) return;
    if (typeof head !== 'string') return ex.fail(head);
    if (this.closing) return ex.fail(new AgentError('AGENT_CLOSED', 'the gateway is shutting down'));
    pool.dispatch(ex);
  }

  /**
   * Timeouts are checked by one timer for all connections rather than one
   * timer per request: a deadline is then a number written per phase. The
   * check runs at an eighth of the shortest timeout (at most once a second),
   * so a timeout fires at most that much late.
   */
  watch(): void {
    if (this.sweep) return;
    const { connectTimeoutMs, headersTimeoutMs, bodyTimeoutMs } = this.opts;
    const every = Math.min(1000, Math.max(5, Math.floor(Math.min(connectTimeoutMs, headersTimeoutMs, bodyTimeoutMs, this.keepAliveMs) / 8)));
    this.sweep = setInterval(() => {
      const now = Date.now();
      let open = 0;
      for (const pool of this.pools.values()) {
        for (const conn of pool.all) conn.expire(now);
        open += pool.all.size;
      }
      if (open === 0) this.unwatch();
    }, every);
    this.sweep.unref();
  }

  private unwatch(): void {
    if (this.sweep) clearInterval(this.sweep);
    this.sweep = undefined;
  }

  /** Stops new requests, closes idle connections and resolves when those in use have finished. */
  close(): Promise<void> {
    // A second call gets the same promise (a new one would leave the first unresolved).
    if (this.whenClosed) return this.whenClosed;
    this.closing = true;
    for (const pool of this.pools.values()) for (const conn of [...pool.all]) if (conn.phase === 'idle') conn.destroy();
    this.whenClosed = new Promise((resolve) => {
      this.closed = resolve;
      this.settleClose();
    });
    return this.whenClosed;
  }

  /** Resolves close() once no connection is left. */
  settleClose(): void {
    if (!this.closed) return;
    for (const pool of this.pools.values()) if (pool.all.size > 0) return;
    this.unwatch();
    this.closed();
    this.closed = undefined;
  }
}
