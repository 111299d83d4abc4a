// The gateway's two server-side HTTP paths, held to the same answers: the lean
// front (http1/lean-front.ts, POSTs off the raw socket) and node:http
// (http1/node-front.ts, then Fastify). Which one serves is decided per
// connection (http1/README.md): the lean front serves well-formed POSTs with a
// Content-Length until it meets anything else, then hands the socket to
// node:http for good. So every case below is sent twice, byte for byte the
// same: on a fresh connection (the lean front's), and on a connection whose
// first request was a GET (handed to node:http before the case is written).
// The server's 'request' events, which only node:http emits, prove which path
// served. Then status, significant headers, body and SSE frames must agree
// once `normalise` has taken out what legitimately differs between two runs.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { startUpstreamSim, type UpstreamSim } from '@kbchat/upstream-sim';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROOT_TOKEN, startTestGateway, type TestGateway } from './helpers.js';
import { RawClient, type RawResponse } from './raw-client.js';

const KEY = 'sk-sim-differential';
const AUTH = `Authorization: Bearer ${ROOT_TOKEN}\r\n`;

/** A request's bytes: a head, and a body framed by Content-Length (or given whole in `raw`). */
function post(path: string, body: string, headers = `${AUTH}Content-Type: application/json\r\n`): string {
  return `POST ${path} HTTP/1.1\r\nHost: gw\r\n${headers}Content-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`;
}
const chat = (model: string, extra: object = {}) =>
  post('/v1/chat/completions', JSON.stringify({ model, messages: [{ role: 'user', content: 'hello differential' }], ...extra }));
const stream = (model: string) => chat(model, { stream: true, stream_options: { include_usage: true } });
const messages = (model: string, extra: object = {}) =>
  post('/v1/messages', JSON.stringify({ model, max_tokens: 64, messages: [{ role: 'user', content: 'hello differential' }], ...extra }));
const chunked = (path: string, parts: string[]) =>
  `POST ${path} HTTP/1.1\r\nHost: gw\r\n${AUTH}Content-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n` +
  parts.map((p) => `${Buffer.byteLength(p).toString(16)}\r\n${p}\r\n`).join('') +
  '0\r\n\r\n';

interface Case {
  name: string;
  /** The bytes, written in one go (pipelined requests are several in one string), or in pieces a little apart. */
  raw: string | string[];
  /** Answers to read (default 1). */
  answers?: number;
  /** The lean front hands this over on its own (so both connections end on node:http): how many of the answers node:http gives there. */
  handedOver?: number;
  /** How long to wait for each answer (a HEAD's answer has a Content-Length and no body: it never completes for RawClient). */
  readMs?: number;
}

const chatBody = JSON.stringify({ model: 'sim-chat', messages: [{ role: 'user', content: 'hello differential' }] });
/** A chat whose body is cut between the bytes of one character (RawClient writes latin1: the text is given as UTF-8 bytes). */
function utf8Split(): string[] {
  const bytes = Buffer.from(JSON.stringify({ model: 'sim-echo-prompt', messages: [{ role: 'user', content: '检索 ünïcödé 🌍' }] }));
  const head = `POST /v1/chat/completions HTTP/1.1\r\nHost: gw\r\n${AUTH}Content-Type: application/json\r\nContent-Length: ${bytes.length}\r\n\r\n`;
  const cut = bytes.indexOf(Buffer.from('检')) + 1;
  return [head + bytes.subarray(0, cut).toString('latin1'), bytes.subarray(cut).toString('latin1')];
}
const messagesBody = JSON.stringify({ model: 'sim-chat', max_tokens: 64, messages: [{ role: 'user', content: 'hello differential' }] });

const CASES: Case[] = [
  // Chat, OpenAI upstream.
  { name: 'chat, non-stream', raw: chat('sim-chat') },
  { name: 'chat, echo of the prompt with a query string', raw: chat('sim-echo-prompt').replace('/v1/chat/completions', '/v1/chat/completions?x=1') },
  { name: 'chat, tools', raw: chat('sim-tools', { tools: [{ type: 'function', function: { name: 'f', parameters: { type: 'object', properties: {} } } }] }) },
  { name: 'chat, stream', raw: stream('sim-chat') },
  { name: 'chat, stream without usage from upstream', raw: stream('sim-nousage') },
  {
    name: 'chat, stream of a tool call',
    raw: chat('sim-tools', { stream: true, tools: [{ type: 'function', function: { name: 'f', parameters: { type: 'object' } } }] }),
  },
  // Translated providers: Anthropic and Gemini channels, and the Anthropic wire in.
  { name: 'chat to an Anthropic channel', raw: chat('claude-sim') },
  { name: 'chat stream to an Anthropic channel', raw: stream('claude-sim') },
  { name: 'chat to a Gemini channel', raw: chat('gemini-sim') },
  { name: 'chat stream to a Gemini channel', raw: stream('gemini-sim') },
  { name: 'Messages API in, OpenAI upstream', raw: messages('sim-chat') },
  { name: 'Messages API stream in, Anthropic upstream', raw: messages('claude-sim', { stream: true }) },
  // Embeddings and rerank.
  { name: 'embeddings', raw: post('/v1/embeddings', JSON.stringify({ model: 'sim-embed-384', input: ['one', 'two'] })) },
  { name: 'embeddings as base64', raw: post('/v1/embeddings', JSON.stringify({ model: 'sim-embed-384', input: 'one', encoding_format: 'base64' })) },
  { name: 'embeddings through Gemini', raw: post('/v1/embeddings', JSON.stringify({ model: 'gemini-sim-embed-768', input: 'one' })) },
  { name: 'rerank', raw: post('/v1/rerank', JSON.stringify({ model: 'sim-rerank', query: 'cat', documents: ['a cat', 'a dog', 'cats and dogs'] })) },
  // Upstream faults: 4xx, 5xx, timeouts, dropped streams, malformed bodies.
  { name: 'upstream 400', raw: chat('sim-400') },
  { name: 'upstream 500', raw: chat('sim-500') },
  { name: 'upstream 503', raw: chat('sim-503') },
  { name: 'upstream 503 on a stream', raw: stream('sim-503') },
  { name: 'Anthropic upstream 529', raw: chat('claude-sim-529') },
  { name: 'Gemini upstream 503', raw: chat('gemini-sim-503') },
  { name: 'upstream too slow for its timeout', raw: chat('sim-slow') },
  { name: 'upstream that never answers', raw: stream('sim-hang') },
  { name: 'stream dropped by the upstream', raw: stream('sim-drop') },
  { name: 'Anthropic stream dropped', raw: stream('claude-sim-drop') },
  { name: 'Anthropic stream error event', raw: stream('claude-sim-stream-error') },
  { name: 'upstream answers 200 with a body that is not JSON', raw: chat('raw-not-json') },
  { name: 'upstream answers 200 with a truncated body', raw: chat('raw-truncated') },
  { name: 'upstream answers an HTML 502', raw: chat('raw-html-502') },
  { name: 'upstream stream of frames that are not JSON', raw: stream('raw-bad-frames') },
  { name: 'unknown model', raw: chat('no-such-model') },
  // Bad requests from the client.
  { name: 'body that is not JSON', raw: post('/v1/chat/completions', '{"model": "sim-chat", ') },
  { name: 'empty body', raw: post('/v1/chat/completions', '') },
  { name: 'JSON that is not an object', raw: post('/v1/chat/completions', '[1,2,3]') },
  { name: 'messages of the wrong type', raw: post('/v1/chat/completions', JSON.stringify({ model: 'sim-chat', messages: 'hi' })) },
  { name: 'model of the wrong type', raw: post('/v1/chat/completions', JSON.stringify({ model: 42, messages: [] })) },
  { name: 'embeddings input of the wrong type', raw: post('/v1/embeddings', JSON.stringify({ model: 'sim-embed-384', input: { a: 1 } })) },
  { name: 'rerank without documents', raw: post('/v1/rerank', JSON.stringify({ model: 'sim-rerank', query: 'q' })) },
  { name: 'content type that is not JSON', raw: post('/v1/chat/completions', chatBody, `${AUTH}Content-Type: text/plain\r\n`) },
  { name: 'no content type', raw: post('/v1/chat/completions', chatBody, AUTH) },
  { name: 'content type with a charset', raw: post('/v1/chat/completions', chatBody, `${AUTH}Content-Type: application/json; charset=utf-8\r\n`) },
  { name: 'no token', raw: post('/v1/chat/completions', chatBody, 'Content-Type: application/json\r\n') },
  { name: 'a wrong token', raw: post('/v1/chat/completions', chatBody, 'Authorization: Bearer sk-wrong\r\nContent-Type: application/json\r\n') },
  { name: 'the token as X-Api-Key', raw: post('/v1/messages', messagesBody, `X-Api-Key: ${ROOT_TOKEN}\r\nContent-Type: application/json\r\n`) },
  { name: 'a caller request id', raw: post('/v1/chat/completions', chatBody, `${AUTH}Content-Type: application/json\r\nX-Request-Id: caller-id_123\r\n`) },
  {
    name: 'a malformed caller request id',
    raw: post('/v1/chat/completions', chatBody, `${AUTH}Content-Type: application/json\r\nX-Request-Id: not valid!\r\n`),
  },
  {
    name: 'a declared body over 64 MB',
    raw: `POST /v1/chat/completions HTTP/1.1\r\nHost: gw\r\n${AUTH}Content-Type: application/json\r\nContent-Length: 70000000\r\n\r\n{`,
  },
  { name: 'an unknown relay path', raw: post('/v1/completions', chatBody), handedOver: 1 },
  // Keep-alive and pipelining.
  {
    name: 'three pipelined requests: chat, bad JSON, embeddings',
    answers: 3,
    raw: chat('sim-chat') + post('/v1/chat/completions', '{') + post('/v1/embeddings', JSON.stringify({ model: 'sim-embed-384', input: 'x' })),
  },
  { name: 'a stream then a chat, pipelined', answers: 2, raw: stream('sim-chat') + chat('sim-echo-prompt') },
  { name: 'the head, then the body in a later write', raw: [chat('sim-chat').split('\r\n\r\n')[0] + '\r\n\r\n', chatBody] },
  { name: 'a body cut inside a UTF-8 character', raw: utf8Split() },
  {
    name: 'the next request arriving with the end of the body',
    answers: 2,
    raw: [chat('sim-chat').slice(0, -5), chat('sim-chat').slice(-5) + chat('sim-echo-prompt')],
  },
  { name: 'Connection: close', raw: post('/v1/chat/completions', chatBody, `${AUTH}Content-Type: application/json\r\nConnection: close\r\n`) },
  { name: 'Connection: keep-alive', raw: post('/v1/chat/completions', chatBody, `${AUTH}Content-Type: application/json\r\nConnection: keep-alive\r\n`) },
  { name: 'a POST then a GET, pipelined (the GET hands over)', answers: 2, handedOver: 1, raw: chat('sim-chat') + 'GET /healthz HTTP/1.1\r\nHost: gw\r\n\r\n' },
  // What the lean front hands over on its own: both connections end on node:http.
  { name: 'HEAD on a relay path', raw: `HEAD /v1/chat/completions HTTP/1.1\r\nHost: gw\r\n${AUTH}\r\n`, handedOver: 1, readMs: 300 },
  { name: 'PUT on a relay path', raw: `PUT /v1/chat/completions HTTP/1.1\r\nHost: gw\r\n${AUTH}Content-Length: 0\r\n\r\n`, handedOver: 1 },
  { name: 'an unknown method', raw: `BREW /v1/chat/completions HTTP/1.1\r\nHost: gw\r\n\r\n`, handedOver: 0 },
  {
    name: 'Expect: 100-continue (the 100 counts as an answer)',
    answers: 2,
    handedOver: 1,
    raw: post('/v1/chat/completions', chatBody, `${AUTH}Content-Type: application/json\r\nExpect: 100-continue\r\n`),
  },
  { name: 'a chunked body', raw: chunked('/v1/chat/completions', [chatBody.slice(0, 7), chatBody.slice(7)]), handedOver: 1 },
  { name: 'a chunked body that is not JSON', raw: chunked('/v1/chat/completions', ['{"model"', ':']), handedOver: 1 },
  { name: 'HTTP/1.0', raw: post('/v1/chat/completions', chatBody).replace('HTTP/1.1', 'HTTP/1.0'), handedOver: 1 },
  { name: 'no Host', raw: post('/v1/chat/completions', chatBody).replace('Host: gw\r\n', ''), handedOver: 1 },
  {
    name: 'two Content-Lengths',
    raw: post('/v1/chat/completions', chatBody, `${AUTH}Content-Type: application/json\r\nContent-Length: ${chatBody.length}\r\n`),
    handedOver: 0,
  },
  {
    name: 'a header name with a space',
    raw: post('/v1/chat/completions', chatBody, `${AUTH}Content-Type: application/json\r\nBad Header: x\r\n`),
    handedOver: 0,
  },
  {
    name: 'a header value with obs-text',
    raw: post('/v1/chat/completions', chatBody, `${AUTH}Content-Type: application/json\r\nX-Note: caf\xe9\r\n`),
    handedOver: 1,
  },
  { name: 'two Authorization headers', raw: post('/v1/chat/completions', chatBody, `${AUTH}${AUTH}Content-Type: application/json\r\n`), handedOver: 1 },
  { name: 'a bare LF in the head', raw: `POST /v1/chat/completions HTTP/1.1\nHost: gw\r\n\r\n`, handedOver: 0 },
  {
    name: 'a head over 16 KB',
    raw: post('/v1/chat/completions', chatBody, `${AUTH}Content-Type: application/json\r\nX-Pad: ${'a'.repeat(17_000)}\r\n`),
    handedOver: 0,
  },
];

/**
 * What may differ between two runs of one request, and nothing else: the
 * gateway's request ids (new per request: header and error messages), the
 * Date header (also inside a cut answer quoted whole), the upstream's
 * `created` times and the simulator's random completion, message and
 * (Anthropic's) request ids. Streams are compared frame by frame.
 */
const REQUEST_ID = /\d{17}[0-9a-f]{12}/g;
const UPSTREAM_ID = /"id":"(chatcmpl|msg)[-_][A-Za-z0-9]+"/g;
const CREATED = /"created":\d+/g;
const UPSTREAM_REQUEST_ID = /req_sim_[a-z0-9]+/g;
const DATE = /Date: [^\\]+ GMT/g;
const normaliseText = (s: string) =>
  s
    .replace(REQUEST_ID, '<request-id>')
    .replace(DATE, 'Date: <date>')
    .replace(UPSTREAM_ID, '"id":"<upstream-id>"')
    .replace(CREATED, '"created":0')
    .replace(UPSTREAM_REQUEST_ID, 'req_sim_<id>');
/** The only header left out: every other one (framing included) is compared, so that a new difference is noticed. */
const IGNORED_HEADERS = new Set(['date']);

interface Seen {
  answers: Array<{ status: number; headers: Record<string, string>; frames: string[] } | { failed: string }>;
}

function normalise(r: RawResponse): Seen['answers'][number] {
  const headers: Record<string, string> = {};
  for (const [k, v] of Object.entries(r.headers)) if (!IGNORED_HEADERS.has(k)) headers[k] = normaliseText(v);
  // Content-Length changes with nothing normalised here (the ids replaced are of fixed length), so it stays.
  const frames = r.headers['content-type']?.startsWith('text/event-stream') ? r.body.split('\n\n').map(normaliseText) : [normaliseText(r.body)];
  return { status: r.status, headers, frames };
}

describe('the lean front and node:http answer alike', () => {
  let sim: UpstreamSim;
  let odd: Server;
  let t: TestGateway;
  let nodeRequests = 0;

  beforeAll(async () => {
    sim = await startUpstreamSim({ port: 0, key: KEY, slowMs: 2500 });
    odd = await oddUpstream();
    const oddUrl = `http://127.0.0.1:${(odd.address() as AddressInfo).port}`;
    t = await startTestGateway({
      simInstance: sim,
      sim: { key: KEY },
      // Faults must not disable a channel between a case's two runs; timeouts short enough for the hanging models.
      config: { disableThreshold: 1_000_000, upstreamTimeoutMs: 1500, upstreamIdleTimeoutMs: 1500 },
      env: {
        CLAUDE_API_KEY: KEY,
        CLAUDE_BASE_URL: sim.url,
        CLAUDE_TYPE: 'anthropic',
        CLAUDE_MODELS: 'claude-sim,claude-sim-529,claude-sim-drop,claude-sim-stream-error',
        GEMINI_API_KEY: KEY,
        GEMINI_BASE_URL: sim.url,
        GEMINI_MODELS: 'gemini-sim,gemini-sim-503,gemini-sim-embed-768',
        ODD_API_KEY: KEY,
        ODD_BASE_URL: `${oddUrl}/v1`,
        ODD_MODELS: 'raw-not-json,raw-truncated,raw-html-502,raw-bad-frames',
      },
    });
    t.gw.app.server.on('request', () => void nodeRequests++);
  });
  afterAll(async () => {
    await t?.close();
    await sim?.close();
    odd?.closeAllConnections();
    await new Promise((r) => odd?.close(r));
  });

  /** The case on a fresh connection (`lean`) or on one handed to node:http first; the answers and node:http's count of requests. */
  async function run(c: Case, path: 'lean' | 'node'): Promise<Seen & { viaNode: number }> {
    const client = await RawClient.open(t.url);
    try {
      if (path === 'node') {
        client.send('GET /healthz HTTP/1.1\r\nHost: gw\r\n\r\n');
        expect((await client.response()).status).toBe(200);
      }
      const before = nodeRequests;
      for (const [i, piece] of [c.raw].flat().entries()) {
        if (i > 0) await new Promise((r) => setTimeout(r, 30));
        client.send(piece);
      }
      const answers: Seen['answers'] = [];
      for (let i = 0; i < (c.answers ?? 1); i++) {
        try {
          answers.push(normalise(await client.response(c.readMs ?? 5000)));
        } catch (err) {
          // A stream cut short, or a connection closed without an answer: what had arrived, as the client saw it.
          answers.push({ failed: normaliseText((err as Error).message) });
          break;
        }
      }
      return { answers, viaNode: nodeRequests - before };
    } finally {
      client.close();
    }
  }

  it.each(CASES)('$name', async (c) => {
    const lean = await run(c, 'lean');
    const node = await run(c, 'node');
    // The paths were the ones meant: no request of the lean run reached node:http unless the lean front hands it over itself.
    expect(lean.viaNode).toBe(c.handedOver ?? 0);
    if (c.handedOver === undefined) expect(node.viaNode).toBe(c.answers ?? 1);
    expect(node.answers).toEqual(lean.answers);
    expect(lean.answers.length).toBeGreaterThan(0);
  });

  it('a chunked body is answered as the same body with a Content-Length', async () => {
    for (const [plain, parts] of [
      [chat('sim-chat'), [chatBody.slice(0, 1), chatBody.slice(1, 20), chatBody.slice(20)]],
      [post('/v1/chat/completions', '{"model": '), ['{"model"', ': ']],
    ] as const) {
      const lean = await run({ name: 'plain', raw: plain }, 'lean');
      const node = await run({ name: 'chunked', raw: chunked('/v1/chat/completions', [...parts]), handedOver: 1 }, 'lean');
      expect([lean.viaNode, node.viaNode]).toEqual([0, 1]);
      expect(node.answers).toEqual(lean.answers);
    }
  });
});

/**
 * An OpenAI upstream that misbehaves in ways the simulator does not: a 200
 * whose body is not JSON, a body shorter than its Content-Length, an HTML
 * 502 from a proxy, and a stream of frames that are not JSON.
 */
async function oddUpstream(): Promise<Server> {
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (d) => (body += d));
    req.on('end', () => {
      const model = (JSON.parse(body) as { model: string }).model;
      if (model === 'raw-not-json') res.writeHead(200, { 'content-type': 'application/json' }).end('<<not json>>');
      else if (model === 'raw-truncated') {
        res.writeHead(200, { 'content-type': 'application/json', 'content-length': '100' });
        res.write('{"id":"x","choices":[');
        setTimeout(() => res.destroy(), 20);
      } else if (model === 'raw-html-502') res.writeHead(502, { 'content-type': 'text/html' }).end('<html><body>Bad Gateway</body></html>');
      else {
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        res.write('data: {"id":"c1","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"content":"hi"}}]}\n\n');
        res.end('data: {not json\n\ndata: [DONE]\n\n');
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return server;
}
