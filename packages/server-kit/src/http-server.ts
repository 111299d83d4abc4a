// What the gateway's and the platform's node:http servers do about clients
// that send too slowly or send what is not HTTP, so that both answer alike.
//
// - A request's head must arrive within one bound (node's headersTimeout,
//   checked every eighth of it), and its body may not pause that long.
//   node's only bound on a body, requestTimeout, is a total: it would also end
//   a large upload that is slow but steady. So it stays 0, and bodies are
//   watched here instead (one sweep a server; a map entry while a body comes).
// - node's parser refuses a malformed head, a head over 16 KB, a request that
//   came too late, with a bare 400/431/413/408 and no body (or Fastify's own
//   JSON); clientErrorAnswer() words each one for the service's envelope and
//   answerOnSocket() sends it as node would, then closes the connection.
import { maxHeaderSize, STATUS_CODES, type IncomingMessage, type Server, type ServerOptions } from 'node:http';
import type { Duplex } from 'node:stream';

/** How often heads (node) and bodies (the watch) are checked: an eighth of the bound, 10 ms to 1 s. */
function checkInterval(boundMs: number): number {
  return Math.max(10, Math.min(1000, Math.floor(boundMs / 8)));
}

/** node:http server options: a head must arrive, and a body may not pause, for longer than `boundMs`. */
export function requestStallOptions(boundMs: number): ServerOptions {
  return { headersTimeout: boundMs, requestTimeout: 0, connectionsCheckingInterval: checkInterval(boundMs) };
}

/** "64 MB", "512 KB", "1000 bytes": a size limit as a client reads it (MB = 1024 KB, as the limits are set). */
export function byteSize(bytes: number): string {
  if (bytes >= 1024 * 1024 && bytes % (1024 * 1024) === 0) return `${bytes / (1024 * 1024)} MB`;
  if (bytes >= 1024 && bytes % 1024 === 0) return `${bytes / 1024} KB`;
  return `${bytes} bytes`;
}

/** What a client error means for the client: node's status for it, a code and words. */
export interface ClientErrorAnswer {
  status: number;
  code: string;
  message: string;
}

/** The answer to a client error (server 'clientError': a parse error or a request that came too late). */
export function clientErrorAnswer(err: Error & { code?: string; reason?: string }, boundMs: number): ClientErrorAnswer {
  switch (err.code) {
    case 'ERR_HTTP_REQUEST_TIMEOUT':
      return {
        status: 408,
        code: 'request_timeout',
        message: `The request did not arrive in time: its head must arrive within ${boundMs / 1000} s, and its body may not pause that long`,
      };
    case 'HPE_HEADER_OVERFLOW':
      return { status: 431, code: 'request_header_too_large', message: `The request head is larger than the ${byteSize(maxHeaderSize)} accepted` };
    case 'HPE_CHUNK_EXTENSIONS_OVERFLOW':
      return { status: 413, code: 'chunk_extensions_too_large', message: 'The chunk extensions of the request body are too large' };
    default:
      return { status: 400, code: 'bad_request', message: `The request is not valid HTTP/1.1: ${err.reason ?? err.message}` };
  }
}

/**
 * Writes a complete JSON error answer straight to the socket and closes it,
 * as node:http does for a client error: the answer only when the client can
 * still read it and no answer on this connection has begun (node's own check
 * of the response it attached to the socket: bytes now would corrupt it).
 */
export function answerOnSocket(socket: Duplex, status: number, headers: Record<string, string>, body: string): void {
  const current = (socket as { _httpMessage?: { headersSent?: boolean } })._httpMessage;
  if (socket.writable && !current?.headersSent) {
    let head = `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\nContent-Type: application/json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n`;
    for (const name in headers) head += `${name}: ${headers[name]}\r\n`;
    socket.write(`${head}\r\n${body}`);
  }
  socket.destroy();
}

/** An HTTP/1.1 request without Host, which node:http (requireHostHeader) answers with a bare 400. */
export function lacksHost(req: IncomingMessage): boolean {
  return req.httpVersionMajor === 1 && req.httpVersionMinor === 1 && req.headers.host === undefined;
}

/** A request body still coming: the socket's byte count when last seen to move, and when. */
interface BodyProgress {
  bytesRead: number;
  at: number;
}

/**
 * Closes every connection whose request body has had no byte for the
 * server's headersTimeout, through the server's 'clientError' (a 408), as
 * node does for a late head. Time the server itself stops reading (the
 * application has not taken what came) is not the client's. Call before
 * listen(): the sweep runs while the server listens.
 */
export function watchBodyStalls(server: Server): void {
  const receiving = new Map<IncomingMessage, BodyProgress>();
  // Forgotten once the body has been read: kept until the next sweep, requests outlived the young
  // generation (a bare node:http server: +10 us of CPU a request, against about +2 us now).
  function forget(this: IncomingMessage) {
    receiving.delete(this);
  }
  server.on('request', (req: IncomingMessage) => {
    // A head frames a body with Transfer-Encoding or a Content-Length (RFC 9112 6.3); a GET costs nothing.
    const length = req.headers['content-length'];
    if (req.headers['transfer-encoding'] === undefined && (length === undefined || length === '0')) return;
    receiving.set(req, { bytesRead: req.socket.bytesRead, at: Date.now() });
    req.on('end', forget);
  });
  const sweep = () => {
    const now = Date.now();
    const bound = server.headersTimeout;
    for (const [req, seen] of receiving) {
      const socket = req.socket;
      if (req.complete || socket.destroyed) {
        receiving.delete(req);
      } else if (socket.bytesRead !== seen.bytesRead || socket.isPaused()) {
        seen.bytesRead = socket.bytesRead;
        seen.at = now;
      } else if (bound > 0 && now - seen.at > bound) {
        receiving.delete(req);
        const late = Object.assign(new Error('the request body stalled'), { code: 'ERR_HTTP_REQUEST_TIMEOUT' });
        if (!server.emit('clientError', late, socket)) socket.destroy();
      }
    }
  };
  let timer: NodeJS.Timeout | undefined;
  server.on('listening', () => {
    clearInterval(timer);
    timer = setInterval(sweep, checkInterval(server.headersTimeout)).unref();
  });
  server.on('close', () => clearInterval(timer));
}
