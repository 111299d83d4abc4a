// A client on a raw socket for tests of the gateway's HTTP fronts: it writes
// bytes exactly as given and reads the answers one by one (Content-Length,
// chunked, or to the close), so that what a test sees is what went over the wire.
import { connect, type Socket } from 'node:net';
import { expect, vi } from 'vitest';

export interface RawResponse {
  status: number;
  headers: Record<string, string>;
  body: string;
}

/** A client on a raw socket: writes bytes as given and reads the answers one by one. */
export class RawClient {
  private data = '';
  private pos = 0;
  closed = false;
  private wake: (() => void) | undefined;

  private constructor(readonly socket: Socket) {
    socket.setEncoding('latin1');
    socket.on('data', (d: string) => {
      this.data += d;
      this.wake?.();
    });
    socket.on('error', () => {});
    socket.on('close', () => {
      this.closed = true;
      this.wake?.();
    });
  }

  static open(url: string): Promise<RawClient> {
    const { port } = new URL(url);
    return new Promise((resolve, reject) => {
      const socket = connect(Number(port), '127.0.0.1', () => resolve(new RawClient(socket)));
      socket.once('error', reject);
    });
  }

  send(text: string): void {
    this.socket.write(text, 'latin1');
  }

  /** The next complete answer (100 Continue counts as one); fails if the socket closes first. */
  async response(timeoutMs = 10_000): Promise<RawResponse> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const r = this.parse();
      if (r) return r;
      if (this.closed) throw new Error(`closed before a complete answer: ${JSON.stringify(this.data.slice(this.pos))}`);
      if (Date.now() > deadline) throw new Error(`no complete answer in time: ${JSON.stringify(this.data.slice(this.pos))}`);
      await new Promise<void>((resolve) => {
        this.wake = resolve;
        setTimeout(resolve, 50);
      });
    }
  }

  /** Resolves when the server has closed the connection. */
  async whenClosed(timeoutMs = 10_000): Promise<void> {
    await vi.waitFor(() => expect(this.closed).toBe(true), { timeout: timeoutMs, interval: 20 });
  }

  private parse(): RawResponse | undefined {
    const headEnd = this.data.indexOf('\r\n\r\n', this.pos);
    if (headEnd < 0) return undefined;
    const [statusLine, ...lines] = this.data.slice(this.pos, headEnd).split('\r\n');
    const headers: Record<string, string> = {};
    for (const line of lines) {
      const colon = line.indexOf(':');
      headers[line.slice(0, colon).toLowerCase()] = line.slice(colon + 1).trim();
    }
    const status = Number(statusLine!.split(' ')[1]);
    let at = headEnd + 4;
    let body = '';
    if (headers['content-length'] !== undefined) {
      const length = Number(headers['content-length']);
      if (this.data.length < at + length) return undefined;
      body = this.data.slice(at, at + length);
      at += length;
    } else if (headers['transfer-encoding'] === 'chunked') {
      for (;;) {
        const lineEnd = this.data.indexOf('\r\n', at);
        if (lineEnd < 0) return undefined;
        const size = parseInt(this.data.slice(at, lineEnd), 16);
        if (this.data.length < lineEnd + 2 + size + 2) return undefined;
        body += this.data.slice(lineEnd + 2, lineEnd + 2 + size);
        at = lineEnd + 2 + size + 2;
        if (size === 0) break;
      }
    } else if (status !== 100) {
      // No framing: the body runs to the end of the connection.
      if (!this.closed) return undefined;
      body = this.data.slice(at);
      at = this.data.length;
    }
    this.pos = at;
    return { status, headers, body };
  }

  close(): void {
    this.socket.destroy();
  }
}
