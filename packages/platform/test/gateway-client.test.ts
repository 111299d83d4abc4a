// GatewayClient against a real gateway in front of the upstream simulator,
// against a small HTTP server for answers the gateway never gives (float
// arrays, Retry-After), and against a closed port.
import http from 'node:http';
import { createServer, type AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROOT_TOKEN, startTestGateway, type TestGateway } from '../../gateway/test/helpers.js';
import { GatewayClient, GatewayError } from '../src/gateway-client/index.js';
import { modelsMissingFromGateway } from '../src/models/config-file.js';

let gw: TestGateway;
let client: GatewayClient;

beforeAll(async () => {
  gw = await startTestGateway();
  client = new GatewayClient({ url: gw.url, token: ROOT_TOKEN, timeoutMs: 10_000 });
});
afterAll(async () => {
  await client?.close();
  await gw?.close();
});

async function caught(p: Promise<unknown>): Promise<GatewayError> {
  try {
    await p;
  } catch (err) {
    expect(err).toBeInstanceOf(GatewayError);
    return err as GatewayError;
  }
  throw new Error('expected a GatewayError');
}

/** A one-route HTTP server answering every request with `answer`. */
async function tinyServer(answer: (req: http.IncomingMessage, res: http.ServerResponse) => void): Promise<{ url: string; close(): Promise<void> }> {
  const server = http.createServer((req, res) => {
    req.resume();
    req.on('end', () => answer(req, res));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise((r) => {
        server.close(() => r());
        server.closeAllConnections();
      }),
  };
}

describe('GatewayClient through a real gateway', () => {
  it('embeds in base64 and decodes the same floats the upstream computes', async () => {
    const inputs = ['the quick brown fox', 'jumps over', 'the lazy dog'];
    const out = await client.embeddings('sim-embed-384', inputs);
    expect(out.vectors).toHaveLength(3);
    expect(out.requestId).toMatch(/^\d{17}/);
    expect(out.promptTokens).toBeGreaterThan(0);
    expect((gw.sim.stats().lastBody['sim-embed-384'] as { encoding_format?: string }).encoding_format).toBe('base64');
    // The simulator asked directly for float arrays gives the same numbers.
    const direct = await fetch(`${gw.sim.url}/v1/embeddings`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: 'Bearer sk-sim-upstream-key' },
      body: JSON.stringify({ model: 'sim-embed-384', input: inputs }),
    }).then((r) => r.json() as Promise<{ data: { embedding: number[] }[] }>);
    for (let i = 0; i < 3; i++) {
      expect(out.vectors[i]).toHaveLength(384);
      expect(Array.from(out.vectors[i]!)).toEqual(Array.from(Float32Array.from(direct.data[i]!.embedding)));
      const norm = Math.hypot(...out.vectors[i]!);
      expect(norm).toBeCloseTo(1, 4);
    }
  });

  it('chats, streams and reranks', async () => {
    const { json, requestId } = await client.chat({ model: 'sim-chat', messages: [{ role: 'user', content: 'hello there' }] });
    expect(json.choices[0].message.content).toMatch(/^Echo: hello there/);
    expect(requestId).toBeTruthy();
    const deltas: string[] = [];
    const streamed = await client.chatStream({ model: 'sim-chat', messages: [{ role: 'user', content: 'hello there' }] }, (t) => deltas.push(t));
    expect(deltas.length).toBeGreaterThan(3);
    expect(streamed.content).toBe(deltas.join(''));
    expect(streamed.content).toBe(json.choices[0].message.content);
    expect(streamed.finishReason).toBe('stop');
    expect(streamed.usage?.completion_tokens).toBeGreaterThan(0);
    const ranked = await client.rerank('sim-rerank', 'red apple', ['blue sky', 'a red apple pie', 'green grass']);
    expect(ranked.results[0]!.index).toBe(1);
  });

  it('lists the served models and names the missing ones', async () => {
    expect(await client.models()).toContain('sim-chat');
    const config = {
      llmModels: [{ model: 'sim-chat' }, { model: 'no-such-model' }],
      vectorModels: [{ model: 'sim-embed-384' }],
      reRankModels: [],
      systemEnv: { vectorMaxProcess: 1, qaMaxProcess: 1, hnswEfSearch: 100 },
    };
    expect(modelsMissingFromGateway(config, new Set(await client.models()))).toEqual(['no-such-model']);
  });

  it("keeps the gateway's message, code, request id and the body that was sent", async () => {
    const err = await caught(client.embeddings('no-such-model', ['x']));
    expect(err.status).toBe(503);
    expect(err.code).toBe('model_not_found');
    expect(err.message).toMatch(/^No available channel for model no-such-model .*\(request id: \w+\)$/);
    expect(err.message.endsWith(`(request id: ${err.requestId})`)).toBe(true);
    expect(JSON.parse(err.requestBody!)).toEqual({ model: 'no-such-model', input: ['x'], encoding_format: 'base64' });
    expect(err.isRateLimit).toBe(false);

    const upstream = await caught(client.chat({ model: 'sim-503', messages: [{ role: 'user', content: 'hi' }] }));
    expect(upstream.status).toBe(503);
    expect(upstream.requestId).toBeTruthy();

    const badToken = new GatewayClient({ url: gw.url, token: 'sk-wrong' });
    const auth = await caught(badToken.models());
    expect(auth.status).toBe(401);
    expect(auth.message).toMatch(/Invalid token.*\(request id: /);
    await badToken.close();
  });

  it('an upstream 429 reaches the platform as a rate limit', async () => {
    const limited = await startTestGateway({ sim: { rpm: 1 } });
    const c = new GatewayClient({ url: limited.url, token: ROOT_TOKEN });
    try {
      await c.embeddings('sim-embed-384', ['one']);
      const err = await caught(c.embeddings('sim-embed-384', ['two']));
      expect(err.status).toBe(429);
      expect(err.isRateLimit).toBe(true);
      expect(err.message).toMatch(/Rate limit reached: 1 requests per minute \(request id: /);
    } finally {
      await c.close();
      await limited.close();
    }
  });
});

describe('GatewayClient against other servers', () => {
  it('accepts float arrays from an upstream that ignores base64, and reads Retry-After', async () => {
    let calls = 0;
    const srv = await tinyServer((_req, res) => {
      calls++;
      if (calls === 1) {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(
          JSON.stringify({
            data: [
              { index: 1, embedding: [0, 1] },
              { index: 0, embedding: [1, 0] },
            ],
            usage: { prompt_tokens: 2 },
          }),
        );
      } else {
        res.writeHead(429, { 'content-type': 'application/json', 'retry-after': '2' });
        res.end(JSON.stringify({ error: { message: 'slow down', type: 'requests', code: 'rate_limit_exceeded' } }));
      }
    });
    const c = new GatewayClient({ url: `${srv.url}/v1/` });
    try {
      const out = await c.embeddings('m', ['a', 'b']);
      expect(out.vectors.map((v) => Array.from(v))).toEqual([
        [1, 0],
        [0, 1],
      ]);
      const err = await caught(c.embeddings('m', ['a']));
      expect(err).toMatchObject({ status: 429, code: 'rate_limit_exceeded', retryAfterMs: 2000, message: 'slow down' });
      expect(err.isRateLimit).toBe(true);
    } finally {
      await c.close();
      await srv.close();
    }
  });

  it("puts a stream's tool calls together: by index, a new id at a taken index is a new call, a missing id is made up", async () => {
    const chunk = (delta: unknown) => `data: ${JSON.stringify({ choices: [{ index: 0, delta }] })}\n\n`;
    const srv = await tinyServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.end(
        [
          chunk({ content: 'Let me look. ' }),
          chunk({ tool_calls: [{ index: 0, id: 'call_a', function: { name: 'forecast', arguments: '{"ci' } }] }),
          chunk({ tool_calls: [{ index: 0, function: { arguments: 'ty":"Oslo"}' } }] }),
          // A server that sends every call at index 0: a new id there is a second call.
          chunk({ tool_calls: [{ index: 0, id: 'call_b', function: { name: 'time', arguments: '{}' } }] }),
          // No id at a new index.
          chunk({ tool_calls: [{ index: 5, function: { name: 'news', arguments: '{"q":1}' } }] }),
          'data: [DONE]\n\n',
        ].join(''),
      );
    });
    const c = new GatewayClient({ url: `${srv.url}/v1/` });
    try {
      const r = await c.chatStream({ model: 'm', messages: [] }, () => {});
      expect(r.content).toBe('Let me look. ');
      expect(r.toolCalls).toEqual([
        { id: 'call_a', name: 'forecast', arguments: '{"city":"Oslo"}' },
        { id: 'call_b', name: 'time', arguments: '{}' },
        { id: 'call_2', name: 'news', arguments: '{"q":1}' },
      ]);
    } finally {
      await c.close();
      await srv.close();
    }
  });

  it('a closed port gives "Connection error" naming the address', async () => {
    const port = await new Promise<number>((ok) => {
      const s = createServer().listen(0, '127.0.0.1', () => {
        const p = (s.address() as AddressInfo).port;
        s.close(() => ok(p));
      });
    });
    const c = new GatewayClient({ url: `http://127.0.0.1:${port}`, token: 'x' });
    const err = await caught(c.embeddings('sim-embed-384', ['x']));
    expect(err.status).toBe(502);
    expect(err.code).toBe('connection_error');
    expect(err.message).toMatch(new RegExp(`^Connection error: http://127\\.0\\.0\\.1:${port}: .*ECONNREFUSED`));
    expect(err.requestBody).toBe(JSON.stringify({ model: 'sim-embed-384', input: ['x'], encoding_format: 'base64' }));
    await c.close();
  });

  it('a gateway that does not answer in time is a 504 timeout', async () => {
    const srv = await tinyServer(() => {
      /* never answers */
    });
    const c = new GatewayClient({ url: srv.url, timeoutMs: 200 });
    const err = await caught(c.chat({ model: 'm', messages: [] }));
    expect(err).toMatchObject({ status: 504, code: 'timeout' });
    expect(err.message).toContain(srv.url);
    await c.close();
    await srv.close();
  });
});
