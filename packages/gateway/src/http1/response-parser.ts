// Reads one HTTP/1.1 response at a time from an upstream connection's bytes:
// the status line and headers, then the body by Content-Length, chunked
// encoding or the connection's end. Pure (no sockets), so every way bytes can
// be split is testable. Strict where leniency could mislead the relay (a bad
// length, a folded header); the upstream's fault then becomes a clear error.

/** A response the gateway cannot read safely; the connection is dropped. */
export class ResponseProtocolError extends Error {
  readonly code = 'UPSTREAM_BAD_RESPONSE';
}

export interface ResponseEvents {
  /** A final (non-1xx) head. Header names are lower case; repeated headers are joined with ", ". */
  onHead(status: number, headers: Record<string, string>): void;
  onBody(chunk: Buffer): void;
  /** The body is complete; `reusable` when the connection may carry another request. */
  onComplete(reusable: boolean): void;
}

const enum State {
  Head,
  Fixed,
  ChunkSize,
  ChunkData,
  ChunkDataEnd,
  Trailers,
  UntilClose,
  Done,
}

const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
const DIGITS = /^\d{1,15}$/;
const HEX = /^[0-9a-fA-F]{1,12}$/;
const STATUS_LINE = /^HTTP\/1\.([01]) (\d{3})(?: [^\r\n]*)?$/;
// A chunk-size line with extensions, or a trailer section, has no business being longer.
const MAX_LINE = 4096;

/** The value of a hex digit's byte, or -1. */
function hexValue(byte: number): number {
  if (byte >= 48 && byte <= 57) return byte - 48;
  const lower = byte | 32;
  return lower >= 97 && lower <= 102 ? lower - 87 : -1;
}

function protocolError(message: string): ResponseProtocolError {
  return new ResponseProtocolError(`the upstream's answer is not valid HTTP/1.1: ${message}`);
}

export class ResponseParser {
  private state = State.Head;
  /** Bytes of a head, chunk-size line or trailer section not complete yet. */
  private partial: Buffer | undefined;
  private remaining = 0;
  private keepAlive = true;
  /** Any byte of the answer has arrived (a reused connection that fails before this may be retried). */
  started = false;
  private readonly pieces: Buffer[] = [];

  constructor(
    private readonly events: ResponseEvents,
    private readonly maxHeadBytes = 16 * 1024,
  ) {}

  get done(): boolean {
    return this.state === State.Done;
  }

  /** Feeds bytes. Returns how many bytes were left after the response ended (0 when none). */
  feed(chunk: Buffer): number {
    this.started = true;
    try {
      return this.feedPieces(chunk);
    } finally {
      this.flushBody();
    }
  }

  private feedPieces(chunk: Buffer): number {
    let at = 0;
    while (at < chunk.length) {
      switch (this.state) {
        case State.Head:
          at = this.readHead(chunk, at);
          break;
        case State.Fixed:
          at = this.takeBody(chunk, at);
          if (this.remaining === 0) this.complete();
          break;
        case State.ChunkSize:
          at = this.readChunkSize(chunk, at);
          break;
        case State.ChunkData:
          at = this.takeBody(chunk, at);
          if (this.remaining === 0) {
            this.state = State.ChunkDataEnd;
            this.remaining = 2;
          }
          break;
        case State.ChunkDataEnd:
          // The CRLF after a chunk's data, possibly split across reads.
          if (chunk[at] !== (this.remaining === 2 ? 13 : 10)) throw protocolError('a chunk does not end with CRLF');
          at++;
          if (--this.remaining === 0) this.state = State.ChunkSize;
          break;
        case State.Trailers:
          at = this.readTrailers(chunk, at);
          break;
        case State.UntilClose:
          this.body(chunk, at, chunk.length);
          at = chunk.length;
          break;
        case State.Done:
          return chunk.length - at;
      }
    }
    return 0;
  }

  /** The connection ended: completes a body that runs until the close; anything else was cut short. */
  end(): void {
    if (this.state === State.Done) return;
    if (this.state === State.UntilClose) return this.complete();
    throw protocolError(this.started ? 'the connection closed in the middle of the answer' : 'the connection closed before an answer');
  }

  /** Takes up to `remaining` body bytes from `at`; returns where the rest begins. */
  private takeBody(chunk: Buffer, at: number): number {
    const n = Math.min(this.remaining, chunk.length - at);
    this.remaining -= n;
    this.body(chunk, at, at + n);
    return at + n;
  }

  private body(chunk: Buffer, from: number, to: number): void {
    if (to > from) this.pieces.push(from === 0 && to === chunk.length ? chunk : chunk.subarray(from, to));
  }

  /**
   * Hands on the body bytes of one read as one buffer: chunked encoding cuts
   * a stream into a piece per event, and each piece handed on alone costs the
   * relay a pass through its stream code (a copy of a few KB costs less).
   */
  private flushBody(): void {
    const pieces = this.pieces;
    if (pieces.length === 0) return;
    const out = pieces.length === 1 ? pieces[0]! : Buffer.concat(pieces);
    pieces.length = 0;
    this.events.onBody(out);
  }

  private complete(): void {
    this.flushBody();
    this.state = State.Done;
    this.events.onComplete(this.keepAlive);
  }

  /** Joins `chunk` from `at` onto what is pending and finds `marker` in it; returns [buffer, index or -1]. */
  private gather(chunk: Buffer, at: number, marker: string): [Buffer, number] {
    const buf = this.partial ? Buffer.concat([this.partial, chunk.subarray(at)]) : at === 0 ? chunk : chunk.subarray(at);
    return [buf, buf.indexOf(marker, 0, 'latin1')];
  }

  /** `buf` (pending bytes + `chunk`) is used up to `end`: the position in `chunk` where the rest begins. */
  private consumed(chunk: Buffer, buf: Buffer, end: number): number {
    this.partial = undefined;
    return chunk.length - (buf.length - end);
  }

  private readHead(chunk: Buffer, at: number): number {
    const [buf, idx] = this.gather(chunk, at, '\r\n\r\n');
    if (idx < 0) {
      // Up to 3 bytes of the blank line may be here already: the same limit as when it is whole.
      if (buf.length > this.maxHeadBytes + 3) throw protocolError(`the headers are longer than ${this.maxHeadBytes} bytes`);
      this.partial = buf;
      return chunk.length;
    }
    if (idx > this.maxHeadBytes) throw protocolError(`the headers are longer than ${this.maxHeadBytes} bytes`);
    const next = this.consumed(chunk, buf, idx + 4);
    this.startBody(buf.toString('latin1', 0, idx));
    return next;
  }

  private startBody(head: string): void {
    const lines = head.split('\r\n');
    const status = STATUS_LINE.exec(lines[0]!);
    if (!status) throw protocolError(`bad status line ${JSON.stringify(lines[0]!.slice(0, 100))}`);
    const code = Number(status[2]);
    const headers: Record<string, string> = Object.create(null);
    for (let i = 1; i < lines.length; i++) {
      const line = lines[i]!;
      const colon = line.indexOf(':');
      const name = colon > 0 ? line.slice(0, colon) : '';
      if (!TOKEN.test(name)) throw protocolError(`bad header line ${JSON.stringify(line.slice(0, 100))}`);
      const key = name.toLowerCase();
      const value = line.slice(colon + 1).trim();
      headers[key] = headers[key] === undefined ? value : `${headers[key]}, ${value}`;
    }
    // 1xx answers (100 Continue, 103 Early Hints) come before the real one.
    if (code < 200) {
      if (code === 101) throw protocolError('the upstream switched protocols');
      return;
    }
    this.keepAlive = status[1] === '1' && !/(^|,)\s*close\s*(,|$)/i.test(headers.connection ?? '');
    this.events.onHead(code, headers);
    if (code === 204 || code === 304) return this.complete();
    const te = headers['transfer-encoding'];
    if (te !== undefined) {
      // A length beside chunked is a smuggling pattern: never reuse that connection.
      if (headers['content-length'] !== undefined) this.keepAlive = false;
      if (/(^|,)\s*chunked\s*$/i.test(te)) {
        this.state = State.ChunkSize;
      } else {
        this.keepAlive = false;
        this.state = State.UntilClose;
      }
      return;
    }
    const cl = headers['content-length'];
    if (cl !== undefined) {
      const values = cl.split(',').map((v) => v.trim());
      if (!values.every((v) => DIGITS.test(v) && v === values[0])) throw protocolError(`bad content-length ${JSON.stringify(cl.slice(0, 100))}`);
      this.remaining = Number(values[0]);
      if (this.remaining === 0) return this.complete();
      this.state = State.Fixed;
      return;
    }
    this.keepAlive = false;
    this.state = State.UntilClose;
  }

  private readChunkSize(chunk: Buffer, at: number): number {
    // The usual line, whole in this read: hex digits and CRLF, read byte by byte.
    if (!this.partial) {
      let size = 0;
      let i = at;
      for (; i < chunk.length && i - at < 12; i++) {
        const digit = hexValue(chunk[i]!);
        if (digit < 0) break;
        size = size * 16 + digit;
      }
      if (i > at && chunk[i] === 13 && chunk[i + 1] === 10) {
        this.remaining = size;
        this.state = size === 0 ? State.Trailers : State.ChunkData;
        return i + 2;
      }
    }
    const [buf, idx] = this.gather(chunk, at, '\r\n');
    if (idx < 0) {
      if (buf.length > MAX_LINE + 1) throw protocolError('a chunk size line is too long');
      this.partial = buf;
      return chunk.length;
    }
    if (idx > MAX_LINE) throw protocolError('a chunk size line is too long');
    const line = buf.toString('latin1', 0, idx);
    const semi = line.indexOf(';');
    const hex = (semi < 0 ? line : line.slice(0, semi)).trim();
    if (!HEX.test(hex)) throw protocolError(`bad chunk size ${JSON.stringify(line.slice(0, 40))}`);
    const next = this.consumed(chunk, buf, idx + 2);
    this.remaining = parseInt(hex, 16);
    this.state = this.remaining === 0 ? State.Trailers : State.ChunkData;
    return next;
  }

  private readTrailers(chunk: Buffer, at: number): number {
    // Either an empty line right away, or trailer lines ended by an empty one.
    if (!this.partial && chunk[at] === 13 && chunk[at + 1] === 10) {
      this.complete();
      return at + 2;
    }
    const [buf, idx] = this.gather(chunk, at, '\r\n');
    if (idx === 0) {
      const next = this.consumed(chunk, buf, 2);
      this.complete();
      return next;
    }
    const end = buf.indexOf('\r\n\r\n', 0, 'latin1');
    if (end < 0) {
      if (buf.length > MAX_LINE + 3) throw protocolError('the trailers are too long');
      this.partial = buf;
      return chunk.length;
    }
    if (end > MAX_LINE) throw protocolError('the trailers are too long');
    const next = this.consumed(chunk, buf, end + 4);
    this.complete();
    return next;
  }
}
