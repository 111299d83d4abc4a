// The gateway's upstream client (http1/agent.ts with response-parser.ts)
// against node:http's client (llhttp) as the reference: the same answer bytes,
// recorded from the project's upstream simulator (plus a few framings the
// simulator does not use), replayed by a raw server cut into pieces at awkward
// places (inside the head, between CR and LF, inside chunk-size lines, inside
// UTF-8 characters), must give both clients the same status, headers, body
// bytes and the same verdict on whether the answer was complete.
import { request } from 'node:http';
import { connect, type Socket } from 'node:net';
import { startUpstreamSim, type UpstreamSim } from '@kbchat/upstream-sim';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cleanupAfterEach, makeAgent, rawServer, send } from './agent-support.js';

cleanupAfterEach();

const KEY = 'sk-sim-agent';
const message = (content: string) => [{ role: 'user', content }];

/** Requests to the simulator whose answers are recorded: [name, path, body]. */
const RECORDED: Array<[string, string, object]> = [
  ['chat', '/v1/chat/completions', { model: 'sim-chat', messages: message('hello') }],
  ['chat echoing UTF-8 (Chinese, emoji)', '/v1/chat/completions', { model: 'sim-echo-prompt', messages: message('你好，世界 🌍 naïve café') }],
  ['chat stream', '/v1/chat/completions', { model: 'sim-chat', stream: true, stream_options: { include_usage: true }, messages: message('hello') }],
  ['chat stream of UTF-8', '/v1/chat/completions', { model: 'sim-echo-prompt', stream: true, messages: message('检索增强生成 🌍 ünïcödé') }],
  ['a big answer', '/v1/chat/completions', { model: 'sim-big-40000', messages: message('hello') }],
  ['upstream 400', '/v1/chat/completions', { model: 'sim-400', messages: message('hello') }],
  ['upstream 503', '/v1/chat/completions', { model: 'sim-503', messages: message('hello') }],
  ['embeddings', '/v1/embeddings', { model: 'sim-embed-384', input: ['one', 'two'] }],
  ['rerank', '/v1/rerank', { model: 'sim-rerank', query: 'cat', documents: ['a cat', 'a dog'] }],
  ['Anthropic stream', '/v1/messages', { model: 'claude-sim', max_tokens: 32, stream: true, messages: message('hello 世界') }],
  ['Gemini stream', '/v1beta/models/gemini-sim:streamGenerateContent?alt=sse', { contents: [{ role: 'user', parts: [{ text: 'hello 世界' }] }] }],
];

/** Framings the simulator does not send. */
const HANDMADE: Array<[string, string]> = [
  [
    'chunk extensions and trailers',
    'HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nTransfer-Encoding: chunked\r\n\r\n5;ext=1\r\nhello\r\n8\r\n, 世界\r\n0\r\nX-Trailer: t\r\n\r\n',
  ],
  ['a body that runs to the close', 'HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nConnection: close\r\n\r\nno framing: read to the end, 世界'],
  ['204 with no body', 'HTTP/1.1 204 No Content\r\nX-A: 1\r\n\r\n'],
  ['a body shorter than its Content-Length', 'HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 50\r\n\r\n{"cut":'],
  ['a chunked body cut inside a chunk', 'HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\na\r\n01234'],
  ['upper-case hex and leading zeros in chunk sizes', 'HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n00A\r\n0123456789\r\n0\r\n\r\n'],
  ['repeated headers', 'HTTP/1.1 200 OK\r\nX-Many: a\r\nx-many: b\r\nContent-Length: 2\r\n\r\nok'],
];

/** Where an answer is cut: each strategy lists the offsets at which a new write starts. */
const SPLITS: Record<string, (b: Buffer) => number[]> = {
  whole: () => [],
  // Every byte of the head, then every CR|LF gap, UTF-8 continuation byte and chunk-size line of the body.
  awkward: (b) => {
    const headEnd = b.indexOf('\r\n\r\n') + 4;
    const cuts: number[] = [];
    for (let i = 1; i < b.length && cuts.length < 400; i++) {
      const inHead = i <= headEnd;
      const crlf = b[i - 1] === 0x0d && b[i] === 0x0a;
      const utf8 = (b[i]! & 0xc0) === 0x80;
      const chunkLine = b[i - 1] === 0x0a && /[0-9a-fA-F]/.test(String.fromCharCode(b[i]!));
      if (inHead || crlf || utf8 || chunkLine) cuts.push(i);
    }
    return cuts;
  },
  'every 7 bytes': (b) => Array.from({ length: Math.min(400, Math.floor((b.length - 1) / 7)) }, (_, i) => (i + 1) * 7),
};

/**
 * The simulator's answer to one request, as bytes off the wire: to the close
 * (`Connection: close`), or to the last chunk of a stream (the simulator's
 * streams say keep-alive whatever the request said).
 */
async function record(sim: UpstreamSim, path: string, body: object): Promise<Buffer> {
  const text = JSON.stringify(body);
  const socket: Socket = connect(Number(new URL(sim.url).port), '127.0.0.1');
  const parts: Buffer[] = [];
  socket.on('data', (d: Buffer) => {
    parts.push(d);
    if (d.toString('latin1').endsWith('\r\n0\r\n\r\n')) socket.end();
  });
  const auth = path.startsWith('/v1beta')
    ? `x-goog-api-key: ${KEY}`
    : path === '/v1/messages'
      ? `x-api-key: ${KEY}\r\nanthropic-version: 2023-06-01`
      : `Authorization: Bearer ${KEY}`;
  socket.write(
    `POST ${path} HTTP/1.1\r\nHost: sim\r\n${auth}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(text)}\r\nConnection: close\r\n\r\n${text}`,
  );
  await new Promise((resolve) => socket.on('close', resolve));
  return Buffer.concat(parts);
}

interface Seen {
  status: number;
  headers: Record<string, string>;
  body: string;
  complete: boolean;
}

/**
 * One normaliser for both: header names in lower case, repeated ones joined
 * with ', ' (node:http's join for unknown names), framing headers left out of
 * the comparison only where the two clients legitimately report them
 * differently (none so far); body as bytes (hex would hide nothing more).
 */
function normalise(status: number, headers: Record<string, string | string[] | undefined>, body: Buffer, complete: boolean): Seen {
  const h: Record<string, string> = {};
  for (const [k, v] of Object.entries(headers)) if (v !== undefined) h[k.toLowerCase()] = Array.isArray(v) ? v.join(', ') : v;
  return { status, headers: h, body: body.toString('latin1'), complete };
}

function viaNode(origin: string): Promise<Seen> {
  return new Promise((resolve) => {
    const req = request(`${origin}/v1/chat/completions`, { method: 'POST', agent: false, headers: { 'content-type': 'application/json' } }, (res) => {
      const parts: Buffer[] = [];
      res.on('data', (d: Buffer) => parts.push(d));
      res.on('error', () => {});
      res.on('close', () => resolve(normalise(res.statusCode!, res.headers as Record<string, string>, Buffer.concat(parts), res.complete)));
    });
    req.on('error', (err) => resolve({ status: 0, headers: {}, body: err.message, complete: false }));
    req.end('{}');
  });
}

async function viaAgent(origin: string): Promise<Seen> {
  const out = await send(makeAgent(), origin);
  return normalise(out.status ?? 0, out.headers ?? {}, Buffer.concat(out.chunks), !out.error);
}

describe('the upstream agent reads answers as node:http does', () => {
  let sim: UpstreamSim;
  const answers: Array<[string, Buffer]> = HANDMADE.map(([name, text]) => [name, Buffer.from(text)]);
  beforeAll(async () => {
    sim = await startUpstreamSim({ port: 0, key: KEY });
    for (const [name, path, body] of RECORDED) answers.push([name, await record(sim, path, body)]);
    // A stream the upstream drops: the recorded chat stream, cut two thirds in (inside a chunk).
    const stream = answers.find(([name]) => name === 'chat stream')![1];
    answers.push(['a stream cut by the upstream', stream.subarray(0, Math.floor(stream.length * 0.66))]);
  });
  afterAll(() => sim?.close());

  it('recorded every answer from the simulator', () => {
    for (const [name, bytes] of answers) expect(bytes.length, name).toBeGreaterThan(20);
  });

  for (const split of Object.keys(SPLITS)) {
    it(`same status, headers, body and completeness with the answers cut ${split}`, async () => {
      for (const [name, bytes] of answers) {
        const cuts = SPLITS[split]!(bytes);
        // Each piece is its own write, the next one after the reader's turn (setImmediate follows the poll that reads).
        const server = await rawServer(async (_req, socket) => {
          socket.setNoDelay(true);
          let from = 0;
          for (const at of [...cuts, bytes.length]) {
            if (socket.destroyed) return;
            socket.write(bytes.subarray(from, at));
            from = at;
            await new Promise((r) => setImmediate(r));
          }
          socket.end();
        });
        const [reference, agent] = [await viaNode(server.origin), await viaAgent(server.origin)];
        expect(agent, `${name}, cut ${split}`).toEqual(reference);
      }
    });
  }
});
