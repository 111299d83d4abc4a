// GET /api/dashboard and the log list's keyset paging on every store, over
// real HTTP, from log rows made by real relayed requests (the upstream
// simulator over HTTP): every figure is checked against sums computed here
// from the rows GET /api/logs returns.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LATENCY_ERROR_BOUND } from '../src/logs/rollup.js';
import { startTestGateway, type TestGateway } from './helpers.js';
import { STORE_NAMES, testStore, type TestStore } from './stores.js';

const stores: TestStore[] = await Promise.all(STORE_NAMES.map((n) => testStore(n)));
afterAll(async () => {
  await Promise.all(stores.map((s) => s.drop()));
});

const MODELS = ['sim-chat', 'sim-echo-prompt', 'sim-slow', 'sim-400', 'sim-500'];

/** The nearest-rank percentile, as the dashboard defines it. */
function nearestRank(values: number[], q: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.max(1, Math.ceil(q * sorted.length)) - 1]!;
}

function expectWithinBound(estimate: number | null, truth: number) {
  expect(estimate).not.toBeNull();
  // Bucket 0 holds 0 ms exactly; above it the bound is relative.
  expect(Math.abs(estimate! - truth)).toBeLessThanOrEqual(LATENCY_ERROR_BOUND * truth + 0.05);
}

describe.each(stores)('dashboard and log list: $name', (t) => {
  const skip = Boolean(t.skipReason);
  let gw: TestGateway;
  const users: { id: number; key: string }[] = [];
  let plainKey = '';
  let started = 0;

  async function call(path: string, init: { method?: string; json?: unknown; token?: string } = {}) {
    const res = await gw.api(path, init);
    const text = await res.text();
    return { status: res.status, body: text ? JSON.parse(text) : undefined };
  }

  async function chat(key: string, model: string, content = 'hello dashboard') {
    const res = await fetch(`${gw.baseURL}/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model, messages: [{ role: 'user', content }] }),
    });
    await res.text();
    return res.status;
  }

  /** Every log row of this test, newest first, through the list API itself (cursor paging). */
  async function allRows(): Promise<any[]> {
    const out: any[] = [];
    let cursor = '';
    for (;;) {
      const page = await call(`/api/logs?limit=500${cursor ? `&cursor=${cursor}` : ''}`);
      expect(page.status).toBe(200);
      out.push(...page.body.data);
      if (!page.body.next_cursor) return out;
      cursor = page.body.next_cursor;
    }
  }

  beforeAll(async () => {
    if (skip) return;
    gw = await startTestGateway({
      databaseUrl: t.url,
      models: MODELS,
      sim: { slowMs: 60 },
      config: { disableThreshold: 3, disableWindowMs: 60_000 },
    });
    started = Date.now();
    for (const name of ['ann', 'bob']) {
      const u = await call('/api/users', { method: 'POST', json: { username: name, password: `${name}-password`, balance: 100 } });
      const tok = await call('/api/tokens', { method: 'POST', json: { user_id: u.body.id, name: `${name} token` } });
      users.push({ id: u.body.id, key: tok.body.key });
    }
    const plain = await call('/api/users', { method: 'POST', json: { username: 'plain', password: 'plain-password' } });
    plainKey = (await call('/api/tokens', { method: 'POST', json: { user_id: plain.body.id, name: 'plain token' } })).body.key;
    const [ann, bob] = users;
    // Ann: many cheap requests; Bob: fewer with longer prompts (more spend), slow ones and failures.
    for (let i = 0; i < 12; i++) expect(await chat(ann!.key, 'sim-chat')).toBe(200);
    for (let i = 0; i < 5; i++) expect(await chat(bob!.key, 'sim-echo-prompt', 'a much longer prompt '.repeat(40 + i * 10))).toBe(200);
    for (let i = 0; i < 3; i++) expect(await chat(bob!.key, 'sim-slow')).toBe(200);
    for (let i = 0; i < 2; i++) expect(await chat(ann!.key, 'sim-400')).toBe(400);
    // Three failures in a row auto-disable the channel model (CHANNEL_DISABLE_THRESHOLD=3).
    for (let i = 0; i < 3; i++) expect(await chat(bob!.key, 'sim-500')).toBeGreaterThanOrEqual(500);
  }, 60_000);

  afterAll(async () => {
    await gw?.close();
  });

  it.skipIf(skip)('series, totals, errors and percentiles match the log rows', async () => {
    const rows = await allRows();
    expect(rows).toHaveLength(25);
    const d = await call(`/api/dashboard?from=${started - 1000}&to=${Date.now() + 1000}`);
    expect(d.status).toBe(200);
    expect(d.body.bucket).toBe('minute');
    expect(d.body.bucket_ms).toBe(60_000);
    expect(d.body.latency_error_bound).toBeCloseTo(0.1225, 3);
    const sum = (rs: any[], f: (r: any) => number) => rs.reduce((n, r) => n + f(r), 0);
    const failed = (r: any) => r.status >= 400 || r.error !== null;
    expect(d.body.totals).toMatchObject({
      requests: 25,
      errors: sum(rows, (r) => (failed(r) ? 1 : 0)),
      prompt_tokens: sum(rows, (r) => r.prompt_tokens),
      completion_tokens: sum(rows, (r) => r.completion_tokens),
      cost_micros: sum(rows, (r) => r.cost_micros),
    });
    expect(d.body.totals.errors).toBe(5);
    expect(d.body.totals.cost_micros).toBeGreaterThan(0);
    expect(d.body.totals.cost).toBe(d.body.totals.cost_micros / 1_000_000);
    // Every point is its minute's rows; the points are dense and cover [from, to).
    expect(d.body.points[0].t).toBe(d.body.from);
    for (const p of d.body.points) {
      const mine = rows.filter((r) => r.created_at >= p.t && r.created_at < p.t + 60_000);
      expect(p.requests).toBe(mine.length);
      expect(p.errors).toBe(sum(mine, (r) => (failed(r) ? 1 : 0)));
      expect(p.cost_micros).toBe(sum(mine, (r) => r.cost_micros));
      expect(p.prompt_tokens).toBe(sum(mine, (r) => r.prompt_tokens));
    }
    const latencies = rows.map((r) => r.latency_ms);
    expectWithinBound(d.body.totals.latency_p50_ms, nearestRank(latencies, 0.5));
    expectWithinBound(d.body.totals.latency_p95_ms, nearestRank(latencies, 0.95));
    // The slow requests (>= 60 ms) are the top of the distribution: p95 sees them.
    expect(d.body.totals.latency_p95_ms).toBeGreaterThanOrEqual(60 * (1 - LATENCY_ERROR_BOUND));
    expect(d.body.totals.latency_avg_ms).toBeCloseTo(sum(rows, (r) => r.latency_ms) / 25, 1);
  });

  it.skipIf(skip)('splits by model with the rest as "other", and by user; ranks users by spend', async () => {
    const rows = await allRows();
    const range = `from=${new Date(started - 1000).toISOString()}&to=${new Date(Date.now() + 1000).toISOString()}`;
    const byModel = await call(`/api/dashboard?${range}&group_by=model&top=2`);
    expect(byModel.status).toBe(200);
    const groups = byModel.body.groups;
    expect(groups.map((g: any) => g.key)).toEqual(['sim-chat', 'sim-echo-prompt', 'other']);
    for (const g of groups.slice(0, 2)) {
      const mine = rows.filter((r) => r.model === g.key);
      expect(g.totals.requests).toBe(mine.length);
      expect(g.totals.cost_micros).toBe(mine.reduce((n, r) => n + r.cost_micros, 0));
      expectWithinBound(
        g.totals.latency_p50_ms,
        nearestRank(
          mine.map((r) => r.latency_ms),
          0.5,
        ),
      );
    }
    const rest = rows.filter((r) => r.model !== 'sim-chat' && r.model !== 'sim-echo-prompt');
    expect(groups[2]).toMatchObject({ other: true, totals: { requests: rest.length, errors: 5 } });
    // "other"'s histogram is all minus the shown ones: its p95 is the slow model's.
    expectWithinBound(
      groups[2].totals.latency_p95_ms,
      nearestRank(
        rest.map((r) => r.latency_ms),
        0.95,
      ),
    );
    expect(groups.reduce((n: number, g: any) => n + g.totals.requests, 0)).toBe(25);

    const byUser = await call(`/api/dashboard?${range}&groupBy=user`);
    const [ann, bob] = users;
    const annRows = rows.filter((r) => r.user_id === ann!.id);
    const bobRows = rows.filter((r) => r.user_id === bob!.id);
    expect(byUser.body.groups.map((g: any) => [g.key, g.label, g.totals.requests])).toEqual([
      [String(ann!.id), 'ann', annRows.length],
      [String(bob!.id), 'bob', bobRows.length],
    ]);
    // Token and user rollups keep no histogram: their groups' percentiles come from their log rows.
    for (const [g, mine] of [
      [byUser.body.groups[0], annRows],
      [byUser.body.groups[1], bobRows],
    ] as const) {
      expectWithinBound(
        g.totals.latency_p50_ms,
        nearestRank(
          mine.map((r) => r.latency_ms),
          0.5,
        ),
      );
      expectWithinBound(
        g.totals.latency_p95_ms,
        nearestRank(
          mine.map((r) => r.latency_ms),
          0.95,
        ),
      );
      expect(g.points.every((p: any) => p.latency_p50_ms === null)).toBe(true);
    }
    const spend = (rs: any[]) => rs.reduce((n, r) => n + r.cost_micros, 0);
    expect(spend(bobRows)).toBeGreaterThan(spend(annRows));
    expect(byUser.body.top_users.map((u: any) => [u.username, u.cost_micros, u.requests])).toEqual([
      ['bob', spend(bobRows), bobRows.length],
      ['ann', spend(annRows), annRows.length],
    ]);
    // A token is named with its owner: many users name theirs alike.
    const byToken = await call(`/api/dashboard?${range}&group_by=token`);
    expect(byToken.body.groups.map((g: any) => g.label).sort()).toEqual(['ann token (ann)', 'bob token (bob)']);
    // The top token by requests, and "other" (everything else: the other token, and requests with none) from the range's histogram minus it.
    const byTopToken = await call(`/api/dashboard?${range}&group_by=token&top=1`);
    const [topToken, otherTokens] = byTopToken.body.groups;
    expect(otherTokens).toMatchObject({ other: true });
    const topRows = rows.filter((r) => String(r.token_id) === topToken.key);
    const otherRows = rows.filter((r) => String(r.token_id) !== topToken.key);
    expect([topToken.totals.requests, otherTokens.totals.requests]).toEqual([topRows.length, otherRows.length]);
    expectWithinBound(
      topToken.totals.latency_p95_ms,
      nearestRank(
        topRows.map((r) => r.latency_ms),
        0.95,
      ),
    );
    expectWithinBound(
      otherTokens.totals.latency_p50_ms,
      nearestRank(
        otherRows.map((r) => r.latency_ms),
        0.5,
      ),
    );
    expectWithinBound(
      otherTokens.totals.latency_p95_ms,
      nearestRank(
        otherRows.map((r) => r.latency_ms),
        0.95,
      ),
    );
    const byChannel = await call(`/api/dashboard?${range}&group_by=channel`);
    // The requests refused after the model was disabled never reached a channel: '' is "no channel".
    expect(byChannel.body.groups.reduce((n: number, g: any) => n + g.totals.requests, 0)).toBe(25);
  });

  it.skipIf(skip)('lists auto-disabled channel models and disabled channels, with reasons and times', async () => {
    const d = await call('/api/dashboard');
    expect(d.status).toBe(200);
    const model = d.body.disabled.models.find((m: any) => m.model === 'sim-500');
    expect(model).toMatchObject({ reason: expect.stringMatching(/^auto-disabled after 3 failures/), channel_status: 'enabled' });
    expect(model.since).toBeGreaterThanOrEqual(started);
    const channels = (await call('/api/channels')).body.data;
    const id = channels[0].id;
    const before = Date.now();
    expect((await call(`/api/channels/${id}`, { method: 'PATCH', json: { status: 'disabled' } })).status).toBe(200);
    const after = await call('/api/dashboard');
    const ch = after.body.disabled.channels.find((c: any) => c.channel_id === id);
    expect(ch).toMatchObject({ name: channels[0].name, reason: 'disabled by an administrator' });
    expect(ch.since).toBeGreaterThanOrEqual(before);
    expect((await call(`/api/channels/${id}`, { method: 'PATCH', json: { status: 'enabled' } })).status).toBe(200);
  });

  it.skipIf(skip)('chooses the bucket from the range, and answers 400 naming the field, 403 to a non-admin', async () => {
    const now = Date.now();
    const bucketOf = async (span: number) => (await call(`/api/dashboard?from=${now - span}&to=${now}`)).body;
    expect((await bucketOf(3_600_000)).bucket).toBe('minute');
    const day = await bucketOf(86_400_000);
    expect(day.bucket).toBe('hour');
    expect(day.points.length).toBeLessThanOrEqual(25);
    const week = await bucketOf(7 * 86_400_000);
    expect(week).toMatchObject({ bucket: 'hour' });
    expect(week.points.length).toBeLessThanOrEqual(200);
    // The last week's totals still count this test's rows (hour rollups).
    expect(week.totals.requests).toBe(25);
    const month = await bucketOf(30 * 86_400_000);
    expect(month).toMatchObject({ bucket: 'day', totals: { requests: 25 } });

    const bad = async (query: string, field: string) => {
      const r = await call(`/api/dashboard?${query}`);
      expect(r.status, JSON.stringify(r.body)).toBe(400);
      expect(r.body.error.param).toBe(field);
      expect(r.body.error.message).toContain(`'${field}'`);
    };
    await bad('from=yesterday', 'from');
    await bad('to=2024-13-45T00:00:00Z', 'to');
    await bad(`from=${now}&to=${now - 1000}`, 'from');
    await bad(`from=${now - 201 * 86_400_000}&to=${now}`, 'from');
    await bad('group_by=country', 'group_by');
    await bad('groupBy=country', 'groupBy');
    await bad('top=0', 'top');
    await bad('users=1000', 'users');
    expect((await call('/api/dashboard', { token: plainKey })).status).toBe(403);
    expect((await call('/api/dashboard', { token: 'sk-nobody' })).status).toBe(401);
  });

  it.skipIf(skip)('pages by cursor without duplicates or gaps while rows are added, and filters', async () => {
    const snapshot = (await allRows()).map((r) => r.id);
    const seen: number[] = [];
    let cursor = '';
    const [ann] = users;
    for (let page = 0; ; page++) {
      const r = await call(`/api/logs?limit=4${cursor ? `&cursor=${cursor}` : ''}`);
      expect(r.status).toBe(200);
      // Requests served between pages are newer than every cursor: never on a later page.
      expect(await chat(ann!.key, 'sim-chat')).toBe(200);
      const ids = r.body.data.map((x: any) => x.id);
      if (page === 0) seen.push(...ids.filter((id: number) => snapshot.includes(id)));
      else seen.push(...ids);
      if (!r.body.next_cursor) break;
      cursor = r.body.next_cursor;
    }
    expect(seen).toEqual(snapshot);
    expect(new Set(seen).size).toBe(seen.length);

    // Totals: counted, capped at 10,000 (not reached here).
    const all = await call('/api/logs?limit=1');
    expect(all.body).toMatchObject({ total: snapshot.length + Math.ceil(snapshot.length / 4), total_capped: false });
    // Offset paging still works, in the same order.
    const off = await call('/api/logs?limit=2&offset=3');
    expect(off.body.data.map((x: any) => x.id)).toEqual((await call('/api/logs?limit=5')).body.data.slice(3).map((x: any) => x.id));

    const rows = await allRows();
    const target = rows.find((r) => r.model === 'sim-echo-prompt')!;
    const one = await call(`/api/logs?request_id=${target.request_id}`);
    expect(one.body).toMatchObject({ total: 1, next_cursor: null });
    expect(one.body.data.map((x: any) => x.id)).toEqual([target.id]);
    const filtered = async (q: string, pred: (r: any) => boolean) => {
      const r = await call(`/api/logs?limit=500&${q}`);
      expect(r.status, JSON.stringify(r.body)).toBe(200);
      const want = rows.filter(pred).map((x) => x.id);
      expect(want.length).toBeGreaterThan(0);
      expect(r.body.data.map((x: any) => x.id)).toEqual(want);
      expect(r.body.total).toBe(want.length);
    };
    await filtered(`user_id=${users[1]!.id}`, (r) => r.user_id === users[1]!.id);
    await filtered(`token_id=${target.token_id}&model=sim-echo-prompt`, (r) => r.token_id === target.token_id && r.model === 'sim-echo-prompt');
    await filtered(`channel_id=${target.channel_id}`, (r) => r.channel_id === target.channel_id);
    await filtered('status=4xx', (r) => r.status >= 400 && r.status < 500);
    await filtered('status=5xx', (r) => r.status >= 500);
    await filtered('status=error', (r) => r.status >= 400 || r.error !== null);
    await filtered('status=ok', (r) => r.status < 400 && r.error === null);
    const mid = rows[Math.floor(rows.length / 2)].created_at;
    await filtered(`from=${new Date(mid).toISOString()}`, (r) => r.created_at >= mid);
    await filtered(`to=${mid}`, (r) => r.created_at < mid);

    for (const [q, field] of [
      ['cursor=abc', 'cursor'],
      ['cursor=1_2&offset=5', 'offset'],
      ['status=3x', 'status'],
      ['from=soon', 'from'],
    ]) {
      const r = await call(`/api/logs?${q}`);
      expect(r.status).toBe(400);
      expect(r.body.error.param).toBe(field);
    }
  });
});
