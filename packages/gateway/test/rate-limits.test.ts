// Rate limits over HTTP on real gateways in front of the upstream simulator:
// a token's RPM refuses the request past it with OpenAI's 429 (the limit
// named, Retry-After) and every answer carries x-ratelimit-*; TPM counts the
// tokens reserved and settles them to the tokens used; a model's limit binds
// every caller; a refused request counts nowhere. Then two gateways on one
// database, counted on Redis and, without it, on the database itself: a
// burst of 60 through a token limited to 30 per minute gets exactly 30. With
// Redis unreachable the gateway keeps serving, limits counted per process,
// and /readyz says so without failing.
import { randomUUID } from 'node:crypto';
import { createServer } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startUpstreamSim, type UpstreamSim } from '@kbchat/upstream-sim';
import { startTestGateway, type TestGateway } from './helpers.js';
import { testStore, type TestStore } from './stores.js';

const REDIS_URL = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';
/** Gateways on one store share the key that seals channel keys, or each cannot read the other's. */
const SHARED_SECRET = 'rate-limits-test-shared-secret';

async function call(t: TestGateway, path: string, init: { method?: string; json?: unknown; token?: string } = {}) {
  const res = await t.api(path, init);
  const text = await res.text();
  return { status: res.status, text, headers: res.headers, body: text ? JSON.parse(text) : undefined };
}

const chat = (t: TestGateway, token?: string, extra: Record<string, unknown> = {}) =>
  call(t, '/v1/chat/completions', { method: 'POST', token, json: { model: 'sim-chat', messages: [{ role: 'user', content: 'hi' }], ...extra } });

/** A streamed chat: its status and headers (the body is read to its end). */
async function streamed(t: TestGateway, token: string) {
  const res = await t.api('/v1/chat/completions', {
    method: 'POST',
    token,
    json: { model: 'sim-chat', stream: true, messages: [{ role: 'user', content: 'hi' }] },
  });
  const text = await res.text();
  expect(text).toContain('data: [DONE]');
  return { status: res.status, text, headers: res.headers };
}

async function newToken(t: TestGateway, name: string): Promise<{ id: number; key: string }> {
  const me = (await call(t, '/api/auth/me')).body.user;
  const made = await call(t, '/api/tokens', { method: 'POST', json: { user_id: me.id, name } });
  expect(made.status, made.text).toBe(201);
  return { id: made.body.token.id, key: made.body.key };
}

/** Is a Redis answering at REDIS_URL? (The tests that need one skip, saying so, where none is.) */
async function redisAnswers(): Promise<boolean> {
  const { Redis } = await import('ioredis');
  const r = new Redis(REDIS_URL, { lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null, connectTimeout: 1000 });
  r.on('error', () => {});
  try {
    await r.connect();
    return (await r.ping()) === 'PONG';
  } catch {
    return false;
  } finally {
    r.disconnect();
  }
}

describe('rate limits on one gateway (counted in the process)', () => {
  let t: TestGateway;
  beforeAll(async () => {
    t = await startTestGateway({ models: ['sim-chat', 'sim-embed'] });
  });
  afterAll(async () => {
    await t?.close();
  });

  it("refuses past a token's RPM with OpenAI's 429, and says where the caller stands on every answer", async () => {
    const tok = await newToken(t, 'three a minute');
    const set = await call(t, `/api/rate-limits/token/${tok.id}`, { method: 'PUT', json: { rpm: 3 } });
    expect(set.status, set.text).toBe(200);
    expect(set.body).toEqual({ scope: 'token', subject: String(tok.id), rpm: 3, tpm: null, rpd: null, budget: null });

    const remaining: string[] = [];
    for (let i = 0; i < 3; i++) {
      const r = i === 1 ? await streamed(t, tok.key) : await chat(t, tok.key);
      expect(r.status, r.text).toBe(200);
      expect(r.headers.get('x-ratelimit-limit-requests')).toBe('3');
      expect(r.headers.get('x-ratelimit-reset-requests')).toMatch(/^\d+s$/);
      remaining.push(r.headers.get('x-ratelimit-remaining-requests')!);
    }
    expect(remaining).toEqual(['2', '1', '0']);

    const refused = await chat(t, tok.key);
    expect(refused.status).toBe(429);
    expect(refused.body.error).toMatchObject({ code: 'rate_limit_exceeded', type: 'requests' });
    expect(refused.body.error.message).toContain('token "three a minute"');
    expect(refused.body.error.message).toContain('requests per min (RPM): Limit 3');
    const retryAfter = Number(refused.headers.get('retry-after'));
    expect(retryAfter).toBeGreaterThanOrEqual(1);
    expect(retryAfter).toBeLessThanOrEqual(60);
    expect(refused.headers.get('x-request-id')).toBeTruthy();

    // Another token of the same user is not limited; the root token carries no headers at all.
    const free = await chat(t);
    expect(free.status).toBe(200);
    expect(free.headers.get('x-ratelimit-limit-requests')).toBeNull();

    // A deleted token's limits go with it.
    expect((await call(t, `/api/tokens/${tok.id}`, { method: 'DELETE' })).status).toBe(200);
    const left = (await call(t, '/api/rate-limits')).body.data;
    expect(left.some((r: { scope: string; subject: string }) => r.scope === 'token' && r.subject === String(tok.id))).toBe(false);
  });

  it('counts TPM as tokens reserved, settled to the tokens used, and refuses a request larger than the limit', async () => {
    const tok = await newToken(t, 'tokens');
    expect((await call(t, `/api/rate-limits/token/${tok.id}`, { method: 'PUT', json: { tpm: 500 } })).status).toBe(200);
    const big = await chat(t, tok.key, { max_tokens: 600 });
    expect(big.status).toBe(429);
    expect(big.body.error).toMatchObject({ code: 'rate_limit_exceeded', type: 'tokens' });
    expect(big.body.error.message).toContain('tokens per min (TPM): Limit 500');

    const first = await chat(t, tok.key, { max_tokens: 100 });
    expect(first.status, first.text).toBe(200);
    expect(first.headers.get('x-ratelimit-limit-tokens')).toBe('500');
    const reservedLeft = Number(first.headers.get('x-ratelimit-remaining-tokens'));
    expect(reservedLeft).toBeLessThanOrEqual(400);
    const used = first.body.usage.total_tokens as number;
    expect(used).toBeLessThan(100);
    // Settled: the next request (the same body, so the same reservation) sees only the tokens the first used.
    const second = await chat(t, tok.key, { max_tokens: 100 });
    expect(second.status, second.text).toBe(200);
    expect(Number(second.headers.get('x-ratelimit-remaining-tokens'))).toBe(reservedLeft - used);
  });

  it("binds every caller to a model's limit, and a refused request counts nowhere", async () => {
    const a = await newToken(t, 'model a');
    const b = await newToken(t, 'model b');
    expect((await call(t, '/api/rate-limits/model/sim-embed', { method: 'PUT', json: { rpm: 2 } })).status).toBe(200);
    expect((await call(t, `/api/rate-limits/token/${b.id}`, { method: 'PUT', json: { rpm: 1 } })).status).toBe(200);
    const embed = (key: string) => call(t, '/v1/embeddings', { method: 'POST', token: key, json: { model: 'sim-embed', input: 'x' } });
    const one = await embed(a.key);
    expect(one.status).toBe(200);
    expect(one.headers.get('x-ratelimit-remaining-requests')).toBe('1');
    expect((await embed(b.key)).status).toBe(200);
    // b is now over its own limit: refused, and the model's window is given its count back...
    const overToken = await embed(b.key);
    expect(overToken.status).toBe(429);
    expect(overToken.body.error.message).toContain(`token "model b"`);
    // ...so that the model's window is full with two, not three:
    const overModel = await embed(a.key);
    expect(overModel.status).toBe(429);
    expect(overModel.body.error.message).toContain('model "sim-embed"');
    expect((await call(t, '/api/rate-limits/model/sim-embed', { method: 'DELETE' })).status).toBe(200);
    expect((await embed(a.key)).status).toBe(200);
  });

  it('lists the limits and where they are counted, and names a bad field', async () => {
    const list = await call(t, '/api/rate-limits');
    expect(list.status).toBe(200);
    expect(list.body.counting).toBe('process');
    expect(list.body.problem).toBeNull();
    expect(list.body.data.some((r: { scope: string }) => r.scope === 'token')).toBe(true);

    const bad = async (path: string, json: unknown, field: string, status = 400) => {
      const r = await call(t, path, { method: 'PUT', json });
      expect(r.status, r.text).toBe(status);
      if (status === 400) expect(r.body.error.param).toBe(field);
    };
    await bad('/api/rate-limits/token/1', { rpm: 0 }, 'rpm');
    await bad('/api/rate-limits/token/1', { tpm: 1.5 }, 'tpm');
    await bad('/api/rate-limits/token/1', { rpd: 'many' }, 'rpd');
    await bad('/api/rate-limits/token/1', { rps: 3 }, 'rps');
    await bad('/api/rate-limits/team/1', { rpm: 3 }, 'scope');
    await bad('/api/rate-limits/token/abc', { rpm: 3 }, 'subject');
    await bad('/api/rate-limits/token/99999', { rpm: 3 }, 'subject', 404);
    await bad('/api/rate-limits/group/no-such-group', { rpm: 3 }, 'subject', 404);
    expect((await call(t, '/api/rate-limits/user/99999', { method: 'DELETE' })).status).toBe(404);

    // A plain user may not set limits.
    const me = (await call(t, '/api/auth/me')).body.user;
    const user = await call(t, '/api/users', { method: 'POST', json: { username: `plain-${randomUUID().slice(0, 8)}`, password: 'plain-password-1' } });
    expect(user.status, user.text).toBe(201);
    const theirs = await call(t, '/api/tokens', { method: 'POST', json: { user_id: user.body.id, name: 'theirs' } });
    expect(theirs.status, theirs.text).toBe(201);
    const denied = await call(t, `/api/rate-limits/user/${me.id}`, { method: 'PUT', token: theirs.body.key, json: { rpm: 1 } });
    expect(denied.status).toBe(403);

    // An admin limits the users it manages: not root, and not itself.
    const admin = await call(t, '/api/users', {
      method: 'POST',
      json: { username: `admin-${randomUUID().slice(0, 8)}`, password: 'admin-password-1', role: 'admin' },
    });
    expect(admin.status, admin.text).toBe(201);
    const adminKey = (await call(t, '/api/tokens', { method: 'POST', json: { user_id: admin.body.id, name: 'admin key' } })).body.key;
    const put = (path: string) => call(t, path, { method: 'PUT', token: adminKey, json: { rpm: 1 } });
    expect((await put(`/api/rate-limits/user/${me.id}`)).status).toBe(403);
    expect((await put(`/api/rate-limits/user/${admin.body.id}`)).status).toBe(403);
    expect((await put(`/api/rate-limits/user/${user.body.id}`)).status).toBe(200);
    expect((await put(`/api/rate-limits/token/${theirs.body.token.id}`)).status).toBe(200);
  });
});

/** Two gateways on one database (and, for Redis, one Redis), sharing one simulator. */
async function twoGateways(store: TestStore, sim: UpstreamSim, env: Record<string, string>): Promise<[TestGateway, TestGateway]> {
  const a = await startTestGateway({ databaseUrl: store.url, simInstance: sim, models: ['sim-chat'], env });
  const b = await startTestGateway({ databaseUrl: store.url, simInstance: sim, models: ['sim-chat'], env });
  return [a, b];
}

async function burstOf60(a: TestGateway, b: TestGateway): Promise<{ ok: number; refused: number; other: string[] }> {
  const tok = await newToken(a, `burst ${randomUUID().slice(0, 6)}`);
  expect((await call(a, `/api/rate-limits/token/${tok.id}`, { method: 'PUT', json: { rpm: 30 } })).status).toBe(200);
  // b learns of the limit at its next refresh of the book (CHANNEL_REFRESH_MS, 200 ms here).
  await expect
    .poll(async () => (await call(b, '/api/rate-limits')).body.data.some((r: { subject: string }) => r.subject === String(tok.id)), { timeout: 10_000 })
    .toBe(true);
  await new Promise((r) => setTimeout(r, 400));
  const answers = await Promise.all(Array.from({ length: 60 }, (_, i) => chat(i % 2 ? a : b, tok.key)));
  return {
    ok: answers.filter((r) => r.status === 200).length,
    refused: answers.filter((r) => r.status === 429 && r.body.error.code === 'rate_limit_exceeded').length,
    other: answers.flatMap((r, i) => (r.status !== 200 && r.status !== 429 ? [`${i % 2 ? 'a' : 'b'} ${r.status}`] : [])),
  };
}

describe('rate limits across two gateways', () => {
  let sim: UpstreamSim;
  const stores: TestStore[] = [];
  let hasRedis = false;
  beforeAll(async () => {
    sim = await startUpstreamSim({ port: 0, key: 'sk-sim-upstream-key' });
    stores.push(await testStore('mysql'), await testStore('postgres'));
    hasRedis = await redisAnswers();
    if (!hasRedis) console.warn(`[skip] no Redis answers at ${REDIS_URL}: the Redis cases do not run`);
  });
  afterAll(async () => {
    await sim?.close();
    await Promise.all(stores.map((s) => s.drop()));
  });

  it('on MariaDB with Redis: a burst of 60 through a token limited to 30 a minute gets exactly 30', async (ctx) => {
    const store = stores[0]!;
    if (store.skipReason || !hasRedis) return ctx.skip();
    const env = { REDIS_URL, REDIS_PREFIX: `kbchat-test-${randomUUID()}`, CHANNEL_REFRESH_MS: '200', GATEWAY_SECRET_KEY: SHARED_SECRET };
    const [a, b] = await twoGateways(store, sim, env);
    try {
      expect((await call(a, '/api/rate-limits')).body.counting).toBe('redis');
      expect(await burstOf60(a, b)).toEqual({ ok: 30, refused: 30, other: [] });
    } finally {
      await Promise.all([a.close(), b.close()]);
    }
  });

  it.each([
    ['MariaDB', 0],
    ['PostgreSQL', 1],
  ])('on %s without Redis: counted on the database, exactly 30 of 60', async (_name, i, ctx) => {
    const store = stores[i as number]!;
    if (store.skipReason) return ctx.skip();
    const [a, b] = await twoGateways(store, sim, { CHANNEL_REFRESH_MS: '200', GATEWAY_SECRET_KEY: SHARED_SECRET });
    try {
      expect((await call(a, '/api/rate-limits')).body.counting).toBe('store');
      expect(await burstOf60(a, b)).toEqual({ ok: 30, refused: 30, other: [] });
    } finally {
      await Promise.all([a.close(), b.close()]);
    }
  });

  it('with Redis unreachable: keeps serving under per-process limits, and /readyz says so without failing', async () => {
    const deadPort = await new Promise<number>((ok) => {
      const srv = createServer().listen(0, '127.0.0.1', () => {
        const { port } = srv.address() as { port: number };
        srv.close(() => ok(port));
      });
    });
    const t = await startTestGateway({ simInstance: sim, models: ['sim-chat'], env: { REDIS_URL: `redis://127.0.0.1:${deadPort}` } });
    try {
      const tok = await newToken(t, 'redis down');
      expect((await call(t, `/api/rate-limits/token/${tok.id}`, { method: 'PUT', json: { rpm: 2 } })).status).toBe(200);
      const statuses = [];
      for (let i = 0; i < 3; i++) statuses.push((await chat(t, tok.key)).status);
      expect(statuses).toEqual([200, 200, 429]);
      const ready = await call(t, '/readyz');
      expect(ready.status).toBe(200);
      expect(ready.body.notes.rateLimits).toMatch(/^Redis \(REDIS_URL\) is unreachable.*counted per process$/);
      // /readyz is open to anyone: never the URL (it may hold a password), not even its port.
      expect(ready.body.notes.rateLimits).not.toContain(String(deadPort));
      expect((await call(t, '/api/rate-limits')).body.problem).toMatch(/counted per process/);
    } finally {
      await t.close();
    }
  });
});
