// The base both services build on, with an envelope of its own: every answer
// carries its request id, a broken JSON body, an unknown path, a request
// without Host and an unknown Expect are answered in the envelope the
// service gives, the document lists the routes, and listenService() says
// where it listens and closes the app before the services.
import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { buildServiceApp, listenService, type RunningService, type ServiceErrors } from '../src/index.js';

class TestError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

const body = (status: number, code: string, message: string) => ({ failed: { status, code, message } });
const testErrors: ServiceErrors = {
  send: (err, _req, reply) => {
    const e = err instanceof TestError ? err : new TestError(500, 'internal', (err as Error).message);
    reply.code(e.status).send(body(e.status, e.code, e.message));
  },
  notFound: (req, reply) => void reply.code(404).send(body(404, 'not_found', req.url)),
  invalidJson: (detail) => new TestError(400, 'invalid_json', detail),
  refusal: (status, code, message) => new TestError(status, code, message),
  refusalBody: (status, code, message, requestId) => JSON.stringify({ ...body(status, code, message), requestId }),
};

/** Sends `text` on a new connection; the answer once the server has closed it (status, headers, body). */
function rawExchange(url: string, text: string): Promise<{ status: number; headers: Record<string, string>; body: string }> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    let got = '';
    const socket = connect(Number(port), hostname, () => socket.write(text));
    socket
      .setEncoding('utf8')
      .on('data', (d: string) => (got += d))
      .on('error', reject);
    socket.on('close', () => {
      const [head = '', body = ''] = got.split('\r\n\r\n');
      const [statusLine = '', ...lines] = head.split('\r\n');
      const headers = Object.fromEntries(lines.map((l) => [l.slice(0, l.indexOf(':')).toLowerCase(), l.slice(l.indexOf(':') + 1).trim()]));
      resolve({ status: Number(statusLine.split(' ')[1]), headers, body: headers['transfer-encoding'] === 'chunked' ? dechunk(body) : body });
    });
    socket.setTimeout(5000, () => reject(new Error(`no close within 5 s: ${got}`)));
  });
}

/** A chunked body's data: size lines and their chunks, to the 0-size one. */
function dechunk(body: string): string {
  let out = '';
  for (let at = 0; ;) {
    const eol = body.indexOf('\r\n', at);
    const size = parseInt(body.slice(at, eol), 16);
    if (!size) return out;
    out += body.slice(eol + 2, eol + 2 + size);
    at = eol + 2 + size + 2;
  }
}

const closed: string[] = [];
let running: RunningService<{ close(): Promise<void> }>;

beforeAll(async () => {
  const app = buildServiceApp({
    logLevel: 'silent',
    redact: [],
    bodyLimit: 1024,
    requestStallTimeoutMs: 2000,
    errors: testErrors,
    docs: {
      title: 'kit test',
      version: '1.0.0',
      description: 'a base with one route',
      securitySchemes: {},
      security: [],
      errorBody: z.object({ failed: z.object({ status: z.number(), code: z.string(), message: z.string() }) }),
      tagOf: () => 'echo',
    },
    routes: (app) => app.after(() => app.post('/echo', { schema: { body: z.object({ say: z.string() }) } }, async (req) => ({ echo: req.body }))),
  });
  running = await listenService(app, { close: async () => void closed.push('services') }, { host: '127.0.0.1', port: 0 });
});
afterAll(async () => {
  if (!closed.length) await running?.close();
});

describe('the service base', () => {
  it('answers with a request id, and says where it listens', async () => {
    expect(running.url).toBe(`http://127.0.0.1:${running.listening.port}`);
    const r = await fetch(`${running.url}/echo`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"say":"hi"}' });
    expect(r.status).toBe(200);
    expect(await r.json()).toEqual({ echo: { say: 'hi' } });
    expect(r.headers.get('x-request-id')).toMatch(/^\d{17}[0-9a-f]{12}$/);
  });

  it('answers a broken body and an unknown path in the envelope it is given', async () => {
    const broken = await fetch(`${running.url}/echo`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"say":' });
    expect(broken.status).toBe(400);
    expect(await broken.json()).toMatchObject({ failed: { status: 400, code: 'invalid_json' } });
    expect(broken.headers.get('x-request-id')).toBeTruthy();
    const missing = await fetch(`${running.url}/nowhere?x=1`);
    expect(missing.status).toBe(404);
    expect(await missing.json()).toEqual(body(404, 'not_found', '/nowhere?x=1'));
  });

  it("answers node's refusals in the envelope, then closes: no Host, an unknown Expect", async () => {
    // Both close the connection: the answer is whole once the socket closes.
    const r1 = await rawExchange(running.url, 'GET /echo HTTP/1.1\r\n\r\n');
    expect(r1.status).toBe(400);
    expect(JSON.parse(r1.body)).toMatchObject({ failed: { status: 400, code: 'missing_host' } });
    expect(r1.headers['x-request-id']).toBeTruthy();
    const r2 = await rawExchange(running.url, 'POST /echo HTTP/1.1\r\nHost: k\r\nExpect: later\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n');
    expect(r2.status).toBe(417);
    expect(JSON.parse(r2.body)).toMatchObject({ failed: { status: 417, code: 'expectation_failed' }, requestId: r2.headers['x-request-id'] });
  });

  it('documents the routes declared after the documents, with the error envelope', async () => {
    const doc = (await (await fetch(`${running.url}/openapi.json`)).json()) as {
      info: { title: string };
      paths: Record<string, Record<string, { tags: string[] }>>;
    };
    expect(doc.info.title).toBe('kit test');
    expect(doc.paths['/echo']!.post!.tags).toEqual(['echo']);
  });

  it('closes the app, then the services', async () => {
    await running.close();
    expect(closed).toEqual(['services']);
    await expect(fetch(`${running.url}/echo`)).rejects.toThrow();
  });
});
