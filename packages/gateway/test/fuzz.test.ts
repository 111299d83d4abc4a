// No input crashes the gateway: bodies of every JSON type in every field, sent
// to every endpoint, get a 2xx or a 4xx with the request id, and the gateway
// keeps answering. Deterministic (seeded), so a failure can be replayed.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestGateway, type TestGateway } from './helpers.js';

function rng(seed: number) {
  let s = seed >>> 0;
  return () => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

const ODD_VALUES: unknown[] = [
  null,
  true,
  false,
  0,
  -1,
  1.5,
  1e308,
  -1e308,
  2 ** 53 + 1,
  '',
  ' ',
  'x'.repeat(300),
  '\u0000',
  '\ud800',
  '<script>',
  '../../etc/passwd',
  [],
  [null],
  [{}],
  {},
  { a: { b: { c: [] } } },
  { __proto__: { polluted: true } },
  { constructor: { prototype: {} } },
];

const ENDPOINTS: Array<{ method: string; path: string; fields: string[] }> = [
  {
    method: 'POST',
    path: '/v1/chat/completions',
    fields: ['model', 'messages', 'stream', 'stream_options', 'max_tokens', 'temperature', 'n', 'tools', 'tool_choice'],
  },
  { method: 'POST', path: '/v1/embeddings', fields: ['model', 'input', 'encoding_format', 'dimensions'] },
  { method: 'POST', path: '/v1/rerank', fields: ['model', 'query', 'documents', 'top_n'] },
  { method: 'POST', path: '/api/users', fields: ['username', 'password', 'role', 'group', 'balance'] },
  { method: 'PATCH', path: '/api/users/1', fields: ['status', 'role', 'balance', 'balance_delta', 'password'] },
  { method: 'POST', path: '/api/tokens', fields: ['user_id', 'name', 'expires_at', 'quota_limit', 'models', 'ip_allow'] },
  { method: 'POST', path: '/api/channels', fields: ['name', 'type', 'base_url', 'key', 'models', 'model_mapping', 'options', 'priority', 'weight'] },
  { method: 'PUT', path: '/api/prices/fuzz-model', fields: ['input_price', 'output_price', 'model_ratio', 'completion_ratio'] },
  { method: 'POST', path: '/api/auth/login', fields: ['username', 'password'] },
];

describe('fuzzed input', () => {
  let t: TestGateway;
  beforeAll(async () => {
    t = await startTestGateway({ models: ['sim-chat', 'sim-embed-384', 'sim-rerank'] });
  });
  afterAll(async () => {
    await t?.close();
  });

  it('sends 400 odd-shaped bodies to every endpoint: each gets a 2xx or 4xx with its request id, and the gateway stays up', async () => {
    const random = rng(20261122);
    const pick = <T>(list: T[]) => list[Math.floor(random() * list.length)]!;
    const statuses = new Map<number, number>();
    for (let i = 0; i < 400; i++) {
      const ep = i % 10 === 0 ? ENDPOINTS[0]! : ENDPOINTS[i % ENDPOINTS.length]!;
      const body: Record<string, unknown> = {};
      for (const f of ep.fields) if (random() < 0.7) body[f] = pick(ODD_VALUES);
      if (ep.path.startsWith('/v1/') && random() < 0.5) body.model = pick(['sim-chat', 'sim-embed-384', 'sim-rerank']);
      if (ep.path === '/v1/chat/completions' && random() < 0.3) body.messages = [{ role: pick(['user', 'tool', 'bogus', 5]), content: pick(ODD_VALUES) }];
      if (i % 10 === 0) {
        // A valid request carrying odd values only in fields the gateway passes through.
        Object.assign(body, { model: 'sim-chat', messages: [{ role: 'user', content: 'hi' }], user: pick(ODD_VALUES), metadata: pick(ODD_VALUES) });
        for (const f of ['stream', 'stream_options', 'max_tokens', 'temperature', 'n', 'tools', 'tool_choice']) delete body[f];
      }
      const raw = random() < 0.1 && i % 10 !== 0 ? JSON.stringify(body).slice(0, -1) : JSON.stringify(body); // some truncated JSON too
      const res = await t.api(ep.path, { method: ep.method, body: raw, headers: { 'content-type': 'application/json' } });
      const text = await res.text();
      statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1);
      expect(res.status, `${ep.method} ${ep.path} ${raw.slice(0, 300)} -> ${text.slice(0, 300)}`).toBeLessThan(500);
      const id = res.headers.get('x-request-id');
      expect(id).toMatch(/^\d{17}[0-9a-f]{12}$/);
      if (res.status >= 400) expect(JSON.parse(text).error.message).toContain(`(request id: ${id})`);
    }
    // The fuzzing reached real work, not only the validators.
    expect([...statuses.keys()].some((s) => s < 300)).toBe(true);
    expect(statuses.get(400)).toBeGreaterThan(50);
    const health = await fetch(`${t.url}/healthz`);
    expect(health.status).toBe(200);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });
});
