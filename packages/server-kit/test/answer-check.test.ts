// A route's declared answer (schema.response): the document shows it, an
// answer that matches is sent exactly as it was made, and one that does not
// (or that carries a key the schema does not name) is a 500 answer_contract
// when strict, or sent as it is and logged once for its route when not.
import type { FastifyBaseLogger, FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { answerSerializerCompiler, buildServiceApp, type ServiceErrors } from '../src/index.js';

const answer = z.object({ name: z.string(), count: z.number(), tags: z.array(z.object({ id: z.string() })) });
const good = { tags: [{ id: 't' }], count: 1, name: 'a' };
const bad = { name: 'a', count: 'one', tags: [] };
const undeclared = { name: 'a', count: 1, tags: [{ id: 't', secret: 'x' }] };

const failed = (status: number, code: string, message: string) => ({ failed: { status, code, message } });
const testErrors: ServiceErrors = {
  send: (err, _req, reply) => {
    const e = err as { statusCode?: number; code?: string; message: string };
    const status = e.statusCode ?? 500;
    reply.code(status).send(failed(status, e.code ?? 'internal', e.message));
  },
  notFound: (req, reply) => void reply.code(404).send(failed(404, 'not_found', req.url)),
  invalidJson: (detail) => Object.assign(new Error(detail), { statusCode: 400, code: 'invalid_json' }),
  refusal: (status, code, message) => Object.assign(new Error(message), { statusCode: status, code }),
  refusalBody: (status, code, message) => JSON.stringify(failed(status, code, message)),
};

/** What the lenient scope logged. */
const logged: { obj: unknown; msg: string }[] = [];

/** Two routes, one good and one bad, under `prefix`, checked as `strict` says. */
function scope(prefix: string, strict: boolean, log?: FastifyBaseLogger) {
  return async (app: FastifyInstance) => {
    app.setSerializerCompiler(answerSerializerCompiler({ log: log ?? app.log, strict }));
    const response = { 200: answer };
    app.get(`${prefix}/good`, { schema: { response } }, async () => good);
    app.get(`${prefix}/bad`, { schema: { response } }, async () => bad);
    app.get(`${prefix}/undeclared`, { schema: { response } }, async () => undeclared);
  };
}

let app: FastifyInstance;
let url: string;

beforeAll(async () => {
  const log = { error: (obj: unknown, msg: string) => void logged.push({ obj, msg }) } as unknown as FastifyBaseLogger;
  app = buildServiceApp({
    logLevel: 'silent',
    redact: [],
    bodyLimit: 1024,
    requestStallTimeoutMs: 2000,
    errors: testErrors,
    docs: {
      title: 'answers test',
      version: '1.0.0',
      description: 'routes with declared answers',
      securitySchemes: {},
      security: [],
      errorBody: z.object({ failed: z.object({ status: z.number(), code: z.string(), message: z.string() }) }),
      tagOf: () => 'answers',
    },
    routes: (root) => {
      void root.register(scope('/strict', true));
      void root.register(scope('/lenient', false, log));
    },
  });
  url = await app.listen({ host: '127.0.0.1', port: 0 });
});
afterAll(async () => {
  await app?.close();
});

describe('declared answers', () => {
  it('are in the document', async () => {
    const doc = (await (await fetch(`${url}/openapi.json`)).json()) as { paths: Record<string, Record<string, any>> };
    const schema = doc.paths['/strict/good']!.get.responses['200'].content['application/json'].schema;
    expect(schema).toMatchObject({ type: 'object', required: ['name', 'count', 'tags'], properties: { name: { type: 'string' }, count: { type: 'number' } } });
  });

  it('are sent unchanged when they match (key order kept)', async () => {
    for (const prefix of ['/strict', '/lenient']) {
      const r = await fetch(`${url}${prefix}/good`);
      expect(r.status).toBe(200);
      expect(await r.text()).toBe(JSON.stringify(good));
    }
  });

  it('are a 500 when strict and they carry a key the schema does not name; sent as they are when not', async () => {
    const r = await fetch(`${url}/strict/undeclared`);
    expect(r.status).toBe(500);
    const body = (await r.json()) as ReturnType<typeof failed>;
    expect(body.failed.message).toContain('tags.0.secret: not in the schema');
    const lenient = await fetch(`${url}/lenient/undeclared`);
    expect(await lenient.text()).toBe(JSON.stringify(undeclared));
  });

  it('are a 500 answer_contract when strict and they do not match', async () => {
    const r = await fetch(`${url}/strict/bad`);
    expect(r.status).toBe(500);
    const body = (await r.json()) as ReturnType<typeof failed>;
    expect(body.failed.code).toBe('answer_contract');
    expect(body.failed.message).toContain('GET /strict/bad (200)');
    expect(body.failed.message).toContain('count: ');
  });

  it('are sent as they are when not strict, and the mismatch logged once for the route', async () => {
    for (let i = 0; i < 2; i++) {
      const r = await fetch(`${url}/lenient/bad`);
      expect(r.status).toBe(200);
      expect(await r.text()).toBe(JSON.stringify(bad));
    }
    expect(logged).toHaveLength(1);
    expect(logged[0]!.obj).toMatchObject({ route: 'GET /lenient/bad (200)', mismatch: expect.stringMatching(/^count: /) });
  });
});
