// The gateway's /metrics, /readyz and caller request ids, over HTTP against
// the upstream simulator: the series move by what real requests did (counts,
// histogram buckets, an upstream 503 by channel, tokens and spend as the
// request log has them), the text parses, and only the right callers read it.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROOT_TOKEN, startTestGateway, type TestGateway } from './helpers.js';
import { parseExposition, type Exposition } from './prom-text.js';
import { RawClient } from './raw-client.js';
import { STORE_NAMES, testStore, type TestStore } from './stores.js';

// Units per 1M tokens: a priced model, so that spend moves by an amount the log rows confirm.
const PRICE = { input_price: 30, output_price: 60 };
const chatBody = (model: string, stream = false) => ({ model, stream, messages: [{ role: 'user', content: 'how are the metrics today' }] });

describe('gateway metrics', () => {
  let t: TestGateway;
  let channel: string;

  const scrape = async (): Promise<Exposition> => {
    const res = await fetch(`${t.url}/metrics`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toContain('text/plain; version=0.0.4');
    return parseExposition(await res.text());
  };
  const chat = (model: string, init: { stream?: boolean; headers?: Record<string, string> } = {}) =>
    t.api('/v1/chat/completions', { method: 'POST', json: chatBody(model, init.stream), headers: init.headers });

  beforeAll(async () => {
    t = await startTestGateway();
    expect((await t.api('/api/prices/sim-chat', { method: 'PUT', json: PRICE })).status).toBe(200);
    const channels = (await (await t.api('/api/channels')).json()) as any;
    channel = String(channels.data.find((c: any) => c.models.includes('sim-chat')).id);
  }, 30_000);
  afterAll(async () => {
    await t?.close();
  });

  it('counts relayed requests, their latency, tokens and spend by endpoint, channel and model', async () => {
    const before = await scrape();
    const labels = { endpoint: 'chat', channel, model: 'sim-chat' };
    const usage = { prompt: 0, completion: 0 };
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) {
      const res = await chat('sim-chat');
      expect(res.status).toBe(200);
      const body = (await res.json()) as any;
      usage.prompt += body.usage.prompt_tokens;
      usage.completion += body.usage.completion_tokens;
      ids.push(res.headers.get('x-request-id')!);
    }
    const streamed = await chat('sim-chat', { stream: true });
    expect(streamed.status).toBe(200);
    await streamed.text();
    ids.push(streamed.headers.get('x-request-id')!);
    const embed = await t.api('/v1/embeddings', { method: 'POST', json: { model: 'sim-embed-384', input: ['one', 'two'] } });
    expect(embed.status).toBe(200);

    const after = await scrape();
    const delta = (name: string, l: Record<string, string> = labels) => after.sum(name, l) - before.sum(name, l);
    expect(delta('kbchat_gateway_relay_requests_total', { ...labels, status: '200' })).toBe(4);
    expect(delta('kbchat_gateway_relay_requests_total', { endpoint: 'embeddings', channel, model: 'sim-embed-384', status: '200' })).toBe(1);
    // The histogram: every request under +Inf and the last finite bucket, and as many as counted.
    expect(delta('kbchat_gateway_relay_request_duration_seconds_count')).toBe(4);
    expect(delta('kbchat_gateway_relay_request_duration_seconds_bucket', { ...labels, le: '+Inf' })).toBe(4);
    expect(delta('kbchat_gateway_relay_request_duration_seconds_bucket', { ...labels, le: '120' })).toBe(4);
    expect(delta('kbchat_gateway_relay_request_duration_seconds_sum')).toBeGreaterThan(0);
    // Buckets are cumulative: never fewer in a larger one.
    const buckets = after.find('kbchat_gateway_relay_request_duration_seconds_bucket', labels).map((s) => s.value);
    expect(buckets).toEqual([...buckets].sort((a, b) => a - b));
    expect(delta('kbchat_gateway_upstream_duration_seconds_count')).toBe(4);

    // Tokens and spend: what the simulator reported (non-stream) and what the request log charged.
    expect(delta('kbchat_gateway_tokens_total', { ...labels, type: 'prompt' })).toBeGreaterThanOrEqual(usage.prompt);
    expect(delta('kbchat_gateway_tokens_total', { ...labels, type: 'completion' })).toBeGreaterThanOrEqual(usage.completion);
    await t.gw.services.ledger.flush();
    let logged = { cost: 0, prompt: 0, completion: 0 };
    for (const id of ids) {
      const row = ((await (await t.api(`/api/logs?request_id=${id}`)).json()) as any).data[0];
      logged = { cost: logged.cost + row.cost_micros, prompt: logged.prompt + row.prompt_tokens, completion: logged.completion + row.completion_tokens };
    }
    expect(logged.cost).toBeGreaterThan(0);
    expect(delta('kbchat_gateway_tokens_total', { ...labels, type: 'prompt' })).toBe(logged.prompt);
    expect(delta('kbchat_gateway_tokens_total', { ...labels, type: 'completion' })).toBe(logged.completion);
    expect(delta('kbchat_gateway_spend_units_total')).toBeCloseTo(logged.cost / 1_000_000, 9);
    expect(after.sum('kbchat_gateway_relay_requests_in_flight')).toBe(0);
    expect(after.find('kbchat_gateway_channel_info', { channel })[0]?.labels.enabled).toBe('true');
  });

  it("counts an upstream's 503 by channel and model, and the request's final status", async () => {
    const before = await scrape();
    const res = await chat('sim-503');
    expect(res.status).toBe(503);
    const after = await scrape();
    const labels = { endpoint: 'chat', channel, model: 'sim-503' };
    expect(
      after.sum('kbchat_gateway_upstream_errors_total', { ...labels, reason: '503' }) -
        before.sum('kbchat_gateway_upstream_errors_total', { ...labels, reason: '503' }),
    ).toBe(1);
    expect(
      after.sum('kbchat_gateway_relay_requests_total', { ...labels, status: '503' }) -
        before.sum('kbchat_gateway_relay_requests_total', { ...labels, status: '503' }),
    ).toBe(1);
  });

  it('counts refused requests without a model label (a client can name any model)', async () => {
    const before = await scrape();
    const noToken = await t.api('/v1/chat/completions', { method: 'POST', json: chatBody('no-such-model-4711'), token: 'sk-wrong' });
    expect(noToken.status).toBe(401);
    const unknownModel = await chat('no-such-model-4711');
    expect(unknownModel.status).toBe(503);
    const after = await scrape();
    const refused = { endpoint: 'chat', channel: '', model: '' };
    expect(
      after.sum('kbchat_gateway_relay_requests_total', { ...refused, status: '401' }) -
        before.sum('kbchat_gateway_relay_requests_total', { ...refused, status: '401' }),
    ).toBe(1);
    expect(
      after.sum('kbchat_gateway_relay_requests_total', { ...refused, status: '503' }) -
        before.sum('kbchat_gateway_relay_requests_total', { ...refused, status: '503' }),
    ).toBe(1);
    expect(after.samples.some((s) => Object.values(s.labels).includes('no-such-model-4711'))).toBe(false);
  });

  it("counts Fastify's routes by their pattern, never the raw URL", async () => {
    const before = await scrape();
    expect((await t.api('/api/users')).status).toBe(200);
    expect((await t.api('/api/logs/20990101000000000deadbeef0000')).status).toBe(404);
    expect((await t.api('/no/such/page-31337')).status).toBe(404);
    const after = await scrape();
    const d = (l: Record<string, string>) => after.sum('kbchat_gateway_http_requests_total', l) - before.sum('kbchat_gateway_http_requests_total', l);
    expect(d({ method: 'GET', route: '/api/users', status: '200' })).toBe(1);
    expect(d({ method: 'GET', route: '/api/logs/:requestId', status: '404' })).toBe(1);
    expect(d({ method: 'GET', route: 'unmatched', status: '404' })).toBe(1);
    expect(after.sum('kbchat_gateway_http_request_duration_seconds_count', { method: 'GET', route: '/api/users' })).toBeGreaterThanOrEqual(1);
    expect(after.samples.some((s) => Object.values(s.labels).some((v) => v.includes('31337') || v.includes('deadbeef')))).toBe(false);
    // The process's own metrics are on the same registry.
    expect(after.types.get('process_cpu_user_seconds_total')).toBe('counter');
    expect(after.types.get('nodejs_eventloop_lag_seconds')).toBe('gauge');
  });

  it('serves /metrics to loopback callers only, unless METRICS_TOKEN is set', async () => {
    const proxied = await fetch(`${t.url}/metrics`, { headers: { 'x-forwarded-for': '203.0.113.9' } });
    expect(proxied.status).toBe(403);
    expect(((await proxied.json()) as any).error.message).toContain('METRICS_TOKEN');
    // A second gateway in this process: its own registry, with a token.
    const other = await startTestGateway({ config: { metricsToken: 'metrics-secret-1234' }, simInstance: t.sim });
    try {
      expect((await fetch(`${other.url}/metrics`)).status).toBe(401);
      expect((await fetch(`${other.url}/metrics`, { headers: { authorization: 'Bearer wrong' } })).status).toBe(401);
      const ok = await fetch(`${other.url}/metrics`, { headers: { authorization: 'Bearer metrics-secret-1234', 'x-forwarded-for': '203.0.113.9' } });
      expect(ok.status).toBe(200);
      const text = parseExposition(await ok.text());
      // Nothing of the first gateway's traffic: registries are per instance.
      expect(text.sum('kbchat_gateway_relay_requests_total')).toBe(0);
    } finally {
      await other.close();
    }
  }, 30_000);
});

describe.each(STORE_NAMES)('gateway /readyz on %s', (name) => {
  let store: TestStore;
  let t: TestGateway | undefined;
  beforeAll(async () => {
    store = await testStore(name);
    if (store.url) t = await startTestGateway({ databaseUrl: store.url });
  }, 60_000);
  afterAll(async () => {
    await t?.close();
    await store?.drop();
  });

  it('200 while the store answers with every migration run, else 503 naming the check', async (c) => {
    if (!t) return c.skip();
    const ok = await fetch(`${t.url}/readyz`);
    expect(ok.status).toBe(200);
    expect(await ok.json()).toMatchObject({ ok: true, failing: [], checks: { store: { ok: true }, migrations: { ok: true } } });
    const db = t.gw.services.store.db;
    const newest = (await db
      .selectFrom('kbchat_migrations' as any)
      .select(['name', 'timestamp'])
      .orderBy('name', 'desc')
      .limit(1)
      .executeTakeFirstOrThrow()) as { name: string; timestamp: string };
    await db
      .deleteFrom('kbchat_migrations' as any)
      .where('name', '=', newest.name)
      .execute();
    try {
      const failing = await fetch(`${t.url}/readyz`);
      expect(failing.status).toBe(503);
      const body = (await failing.json()) as any;
      expect(body.failing).toEqual(['migrations']);
      expect(body.checks.migrations.error).toContain(newest.name);
      expect(body.checks.store.ok).toBe(true);
    } finally {
      await db
        .insertInto('kbchat_migrations' as any)
        .values(newest)
        .execute();
    }
    expect((await fetch(`${t.url}/readyz`)).status).toBe(200);
    expect(((await (await fetch(`${t.url}/healthz`)).json()) as any).ok).toBe(true);
  });
});

describe("the caller's request id", () => {
  let t: TestGateway;
  beforeAll(async () => {
    t = await startTestGateway();
  }, 30_000);
  afterAll(async () => {
    await t?.close();
  });
  const logRow = async (id: string) => {
    await t.gw.services.ledger.flush();
    return ((await (await t.api(`/api/logs?request_id=${id}`)).json()) as any).data[0];
  };

  it('is taken when well formed, echoed, and kept in the request log and the error envelope (lean front)', async () => {
    const id = 'platform-20991231-req_42-1';
    const res = await t.api('/v1/chat/completions', { method: 'POST', json: chatBody('sim-chat'), headers: { 'x-request-id': id } });
    expect(res.status).toBe(200);
    expect(res.headers.get('x-request-id')).toBe(id);
    expect((await logRow(id))?.request_id).toBe(id);

    const failedId = 'platform-failing-call-7';
    const failed = await t.api('/v1/chat/completions', { method: 'POST', json: chatBody('sim-503'), headers: { 'x-request-id': failedId } });
    expect(failed.status).toBe(503);
    expect(failed.headers.get('x-request-id')).toBe(failedId);
    expect(((await failed.json()) as any).error.message).toContain(failedId);
    expect((await logRow(failedId))?.status).toBe(503);
  });

  it('is replaced by its own when malformed or too long', async () => {
    for (const bad of ['has space', 'semi;colon', 'x'.repeat(65), '']) {
      const res = await t.api('/v1/chat/completions', { method: 'POST', json: chatBody('sim-chat'), headers: { 'x-request-id': bad } });
      expect(res.status).toBe(200);
      expect(res.headers.get('x-request-id')).toMatch(/^\d{17}[0-9a-f]{12}$/);
    }
  });

  it('is taken by the node:http front (a chunked body) and by Fastify routes', async () => {
    const body = JSON.stringify(chatBody('sim-chat'));
    const raw = await RawClient.open(t.url);
    try {
      raw.send(
        `POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${ROOT_TOKEN}\r\nContent-Type: application/json\r\n` +
          `X-Request-Id: chunked-caller-id-9\r\nTransfer-Encoding: chunked\r\n\r\n${Buffer.byteLength(body).toString(16)}\r\n${body}\r\n0\r\n\r\n`,
      );
      const res = await raw.response();
      expect(res.status).toBe(200);
      expect(res.headers['x-request-id']).toBe('chunked-caller-id-9');
    } finally {
      raw.socket.destroy();
    }
    expect((await logRow('chunked-caller-id-9'))?.request_id).toBe('chunked-caller-id-9');
    const models = await t.api('/v1/models', { headers: { 'x-request-id': 'models-call-1' } });
    expect(models.headers.get('x-request-id')).toBe('models-call-1');
  });
});
