// One trace from an answer to the gateway, over HTTP: a real gateway in front
// of the upstream simulator, a platform on PGlite. The search reports the
// results its similarity threshold and token budget dropped (with the rule
// that dropped each), in searchTest's answer and in the chat's stored search
// record; every model call of a turn carries the gateway's request id, and
// GET /api/core/chat/modelCalls reads the channel and the cost that the
// gateway's own log rows hold for those ids.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROOT_TOKEN, startTestGateway, type TestGateway } from '../../gateway/test/helpers.js';
import { apiKeyRow } from '../src/keys/auth.js';
import { loadPlatformConfig, startPlatform, type RunningPlatform } from '../src/index.js';
import { apiCaller } from './api-caller.js';

const KEY = 'kbchat-test-chat-trace-key-0123456789';
const OTHER_TEAM_KEY = 'kbchat-test-chat-trace-other-team-0123456789';
// Units per 1M tokens: a priced model, so that every call of it costs something the test can compute.
const PRICE = { input_price: 30, output_price: 60 };

describe('the trace of an answer', () => {
  let gw: TestGateway;
  let p: RunningPlatform;
  let dir: string;
  let datasetId: string;
  const call = apiCaller(() => p.url, KEY);
  /** The gateway's own log row of a request id (its admin API, read directly). */
  const logRow = async (requestId: string) => ((await (await gw.api(`/api/logs?request_id=${requestId}`)).json()) as any).data[0];

  beforeAll(async () => {
    gw = await startTestGateway();
    expect((await gw.api('/api/prices/sim-chat', { method: 'PUT', json: PRICE })).status).toBe(200);
    dir = mkdtempSync(join(tmpdir(), 'kbchat-chat-trace-'));
    const configPath = join(dir, 'config.json');
    writeFileSync(
      configPath,
      JSON.stringify({
        llmModels: [{ model: 'sim-chat' }],
        vectorModels: [{ model: 'sim-embed-384', maxToken: 512 }],
        reRankModels: [{ model: 'sim-rerank' }],
      }),
    );
    p = await startPlatform(
      loadPlatformConfig(
        { INITIAL_API_KEY: KEY },
        { host: '127.0.0.1', port: 0, dataDir: dir, databaseUrl: 'pglite:memory', configPath, gatewayUrl: gw.url, gatewayToken: ROOT_TOKEN },
      ),
    );
    datasetId = (await call('/api/core/dataset/create', { name: 'volcanoes', vectorModel: 'sim-embed-384' })).body.data;
    // Full text ranks these by how often they say "volcano": graded BM25 scores, relative to the best.
    const text = [
      '# Etna\n\nEtna is a volcano. The volcano erupts often; volcano watchers love this volcano.',
      '# Vesuvius\n\nVesuvius is a volcano near Naples that buried Pompeii.',
      '# Fuji\n\nFuji is a volcano and the highest mountain of Japan.',
      '# Alps\n\nThe Alps have glaciers and no volcano at all, only granite peaks.',
    ].join('\n\n');
    const made = await call('/api/core/dataset/collection/create/text', { datasetId, name: 'volcanoes.md', text, chunkSize: 30 });
    const until = Date.now() + 30_000;
    for (;;) {
      const d = (await call(`/api/core/dataset/collection/trainingDetail?collectionId=${made.body.data.collectionId}`)).body.data;
      if (d.total >= 4 && d.done === d.total) break;
      if (d.failed > 0 || Date.now() > until) throw new Error(`indexing did not finish: ${JSON.stringify(d)}`);
      await new Promise((r) => setTimeout(r, 100));
    }
  }, 90_000);
  afterAll(async () => {
    await p?.close();
    await gw?.close();
  });

  it('searchTest reports the results the similarity threshold dropped, with the value it compared', async () => {
    const r = await call('/api/core/dataset/searchTest', { datasetId, text: 'volcano', searchMode: 'fullTextRecall', similarity: 0.99, limit: 5000 });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    const a = r.body.data;
    expect(a.list).toHaveLength(1);
    expect(a.list[0].q).toContain('Etna');
    expect(a.found).toBe(4);
    expect(a.dropped.map((d: any) => d.reason)).toEqual(['similarity', 'similarity', 'similarity']);
    for (const d of a.dropped) {
      expect(d.similarityValue).toBeLessThan(0.99);
      expect(d.similarityValue).toBeGreaterThan(0);
      expect(d.score[0]).toMatchObject({ type: 'fullText', index: expect.any(Number) });
      expect(d.tokens).toBeGreaterThan(0);
    }
    // In rank order, after the kept one (rank 0).
    expect(a.dropped.map((d: any) => d.score[0].index)).toEqual([1, 2, 3]);
    expect(a.dropped.at(-1).q).toContain('Alps');
    // Full text only: no model call.
    expect(a.modelCalls).toEqual([]);
  });

  it('searchTest reports the results the token budget dropped, and its embeddings call with the gateway request id', async () => {
    const r = await call('/api/core/dataset/searchTest', { datasetId, text: 'volcano', searchMode: 'mixedRecall', similarity: 0, limit: 1 });
    const a = r.body.data;
    // The first result always comes, even past the budget; the others are dropped by it.
    expect(a.list).toHaveLength(1);
    expect(a.limit).toBe(1);
    expect(a.dropped).toHaveLength(3);
    expect(a.dropped.every((d: any) => d.reason === 'limit')).toBe(true);
    expect(a.dropped[0].score.map((s: any) => s.type)).toEqual(expect.arrayContaining(['embedding', 'fullText', 'rrf']));
    expect(a.modelCalls).toHaveLength(1);
    expect(a.modelCalls[0]).toMatchObject({ step: 'embeddings', kind: 'embeddings', model: 'sim-embed-384', requestId: expect.any(String) });
    const row = await logRow(a.modelCalls[0].requestId);
    expect(row).toMatchObject({ request_id: a.modelCalls[0].requestId, endpoint: 'embeddings', model: 'sim-embed-384', status: 200 });
  });

  it("a chat turn records every model call with its request id, the search's dropped results are stored with the chat, and modelCalls reads channel and cost from the gateway's log", async () => {
    const made = await call('/api/core/app/create', {
      name: 'traced',
      model: 'sim-chat',
      datasets: [datasetId],
      search: { searchMode: 'fullTextRecall', similarity: 0.99, limit: 5000, usingReRank: false, queryExtension: { enabled: true, model: 'sim-chat' } },
    });
    const appId = made.body.data as string;
    const key = (await call('/api/support/openapi/create', { name: 'k', appId })).body.data as string;
    const res = await fetch(`${p.url}/api/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ chatId: 'trace-1', detail: true, stream: false, messages: [{ role: 'user', content: 'Tell me about the volcano' }] }),
    });
    expect(res.status).toBe(200);
    const answer = (await res.json()) as any;
    const steps = answer.responseData as any[];
    expect(steps.map((s) => s.moduleType)).toEqual(['queryExtension', 'datasetSearchNode', 'chatNode']);
    const search = steps[1];
    expect(search).toMatchObject({ similarity: 0.99, limit: 5000 });
    expect(search.dropped.length).toBeGreaterThan(0);
    expect(search.dropped.every((d: any) => d.reason === 'similarity')).toBe(true);

    const calls = steps.flatMap((s) => s.modelCalls ?? []);
    expect(calls.map((c: any) => c.step)).toEqual(['queryExtension', 'chatNode']);
    for (const c of calls)
      expect(c).toMatchObject({ kind: 'chat', model: 'sim-chat', requestId: expect.stringMatching(/\S/), runningTime: expect.any(Number) });
    // The query extension's id is on its record too (it was not kept before).
    expect(steps[0].requestId).toBe(calls[0].requestId);

    // Stored with the chat: an old chat still shows what was dropped.
    const storedAnswer = (await call('/api/core/chat/getPaginationRecords', { appId, chatId: 'trace-1' })).body.data.list.at(-1);
    const stored = storedAnswer.responseData;
    expect(stored[1].dropped).toEqual(search.dropped);
    expect(stored.flatMap((s: any) => s.modelCalls ?? [])).toEqual(calls);

    const ids = calls.map((c: any) => c.requestId);
    const traceQuery = `appId=${appId}&chatId=trace-1&dataId=${storedAnswer.dataId}`;
    const traced = await call(`/api/core/chat/modelCalls?${traceQuery}`);
    expect(traced.status, JSON.stringify(traced.body)).toBe(200);
    expect(traced.body.data.unavailable).toBeUndefined();
    const channels = ((await (await gw.api('/api/channels')).json()) as any).data as { id: number; name: string }[];
    expect(traced.body.data.calls.map((c: any) => c.requestId)).toEqual(ids);
    for (const c of traced.body.data.calls) {
      const row = await logRow(c.requestId);
      expect(c.channelId).toBe(row.channel_id);
      expect(c.channelName).toBe(channels.find((ch) => ch.id === row.channel_id)!.name);
      expect(c.costMicros).toBe(row.cost_micros);
      expect(c.cost).toBeGreaterThan(0);
      // The price set above: (input x 30 + output x 60) units per 1M tokens, in micro-units rounded up.
      expect(c.costMicros).toBe(Math.ceil(row.prompt_tokens * PRICE.input_price + row.completion_tokens * PRICE.output_price));
      expect(c.latencyMs).toBe(row.latency_ms);
      expect(c.model).toBe('sim-chat');
    }

    // The ids are the stored answer's: another team reaches neither the app nor its answers.
    await p.services.keys.insertTeam('othertraceteam0000000000', 'other');
    await p.services.keys.insertKey(apiKeyRow(OTHER_TEAM_KEY, { teamId: 'othertraceteam0000000000', appId: null, name: 'other', expiresAt: null }));
    expect((await call(`/api/core/chat/modelCalls?${traceQuery}`, undefined, 'GET', OTHER_TEAM_KEY)).status).toBe(404);
    // An application key is not the team's people; a share link's visitor has no key at all.
    expect((await call(`/api/core/chat/modelCalls?${traceQuery}`, undefined, 'GET', key)).status).toBe(403);
    expect((await fetch(`${p.url}/api/core/chat/modelCalls?${traceQuery}`)).status).toBe(401);
    expect((await call(`/api/core/chat/modelCalls?appId=${appId}&chatId=trace-1&dataId=nosuchanswer`)).status).toBe(404);
  });

  it('modelCalls: the missing field named in a 400', async () => {
    for (const [query, field] of [
      ['chatId=a&dataId=b', 'appId'],
      ['appId=a&dataId=b', 'chatId'],
      ['appId=a&chatId=b', 'dataId'],
    ]) {
      const bad = await call(`/api/core/chat/modelCalls?${query}`);
      expect(bad.status).toBe(400);
      expect(bad.body.message).toContain(field);
    }
  });

  it("says plainly when the platform's gateway token may not read the gateway's log", async () => {
    // A plain user's token: it may relay, but the admin API refuses it.
    const user = (await (
      await gw.api('/api/users', { method: 'POST', json: { username: 'plain-trace', password: 'plain-password-1', role: 'user', balance: 10 } })
    ).json()) as any;
    const token = (await (await gw.api('/api/tokens', { method: 'POST', json: { user_id: user.id, name: 'platform' } })).json()) as any;
    expect(token.key, JSON.stringify(token)).toMatch(/^sk-/);
    // It relays (so it is a working token), yet its log read is refused.
    expect((await gw.api('/v1/models', { token: token.key })).status).toBe(200);
    const { GatewayClient } = await import('../src/gateway-client/index.js');
    const { gatewayCalls } = await import('../src/chat/model-calls.js');
    const plain = new GatewayClient({ url: gw.url, token: token.key });
    try {
      const r = await gatewayCalls(plain, ['abc']);
      expect(r.calls).toEqual([]);
      expect(r.unavailable).toMatch(/administrators only.*GATEWAY_TOKEN/);
    } finally {
      await plain.close();
    }
  });
});
