// Applications end to end over HTTP: a real gateway in front of the upstream
// simulator, a dataset indexed, an application bound to it, its key, and chat
// through the official openai client (stream, non-stream, chatId across
// turns), classification and extraction, errors, history and key rules.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROOT_TOKEN, startTestGateway, type TestGateway } from '../../gateway/test/helpers.js';
import { apiKeyRow, hashKey } from '../src/keys/auth.js';
import { loadPlatformConfig, startPlatform, type RunningPlatform } from '../src/index.js';
import { apiCaller } from './api-caller.js';

const KEY = 'kbchat-test-chat-e2e-key-0123456789';
const OTHER_TEAM_KEY = 'kbchat-test-other-team-key-0123456789';
const APP_KEY_MESSAGE = 'Key is error. You need to use the app key rather than the account key.';

describe('applications and chat end to end', () => {
  let gw: TestGateway;
  let p: RunningPlatform;
  let dir: string;
  let datasetId: string;
  const call = apiCaller(() => p.url, KEY);
  const makeApp = async (settings: Record<string, unknown>) => {
    const made = await call('/api/core/app/create', { name: 'helpdesk', ...settings });
    expect(made.status, JSON.stringify(made.body)).toBe(200);
    const appId = made.body.data as string;
    const key = (await call('/api/support/openapi/create', { name: 'app key', appId })).body.data as string;
    return { appId, key, client: new OpenAI({ apiKey: key, baseURL: `${p.url}/api/v1`, maxRetries: 0 }) };
  };
  const chatRaw = (key: string, body: unknown) =>
    fetch(`${p.url}/api/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });

  beforeAll(async () => {
    gw = await startTestGateway();
    dir = mkdtempSync(join(tmpdir(), 'kbchat-chat-e2e-'));
    const configPath = join(dir, 'config.json');
    writeFileSync(
      configPath,
      JSON.stringify({
        llmModels: [
          { model: 'sim-echo-prompt', customCQPrompt: 'Reply {"type": "tech"} and nothing else.\n{{question}}' },
          { model: 'sim-chat' },
          { model: 'sim-tools', toolChoice: true },
          { model: 'sim-500' },
          { model: 'sim-slow' },
        ],
        vectorModels: [{ model: 'sim-embed-384', defaultToken: 200, maxToken: 512 }],
        reRankModels: [{ model: 'sim-rerank' }],
        systemEnv: { vectorMaxProcess: 2 },
      }),
    );
    writeFileSync(join(dir, 'verify_abc123.txt'), 'verification-token-abc123');
    p = await startPlatform(
      loadPlatformConfig(
        { INITIAL_API_KEY: KEY },
        { host: '127.0.0.1', port: 0, dataDir: dir, databaseUrl: 'pglite:memory', configPath, gatewayUrl: gw.url, gatewayToken: ROOT_TOKEN, publicDir: dir },
      ),
    );
    datasetId = (await call('/api/core/dataset/create', { name: 'geo', vectorModel: 'sim-embed-384' })).body.data;
    const text =
      '# Volcanoes\n\nMount Etna is an active volcano on the east coast of Sicily.\n\n# Glaciers\n\nThe Aletsch glacier is the largest glacier in the Alps.';
    const made = await call('/api/core/dataset/collection/create/text', { datasetId, name: 'geo.md', text, chunkSize: 40 });
    const until = Date.now() + 30_000;
    for (;;) {
      const d = (await call(`/api/core/dataset/collection/trainingDetail?collectionId=${made.body.data.collectionId}`)).body.data;
      if (d.total > 0 && d.done === d.total) break;
      if (d.failed > 0 || Date.now() > until) throw new Error(`indexing did not finish: ${JSON.stringify(d)}`);
      await new Promise((r) => setTimeout(r, 100));
    }
    // A second team with its own general key: it must never reach the first team's data.
    await p.services.keys.insertTeam('otherteam00000000000000', 'other');
    await p.services.keys.insertKey(apiKeyRow(OTHER_TEAM_KEY, { teamId: 'otherteam00000000000000', appId: null, name: 'other', expiresAt: null }));
  }, 90_000);
  afterAll(async () => {
    await p?.close();
    await gw?.close();
  });

  it('creates, lists, updates and deletes applications, with 400s naming the field', async () => {
    const bad = await call('/api/core/app/create', { name: 'x', model: 'gpt-nowhere' });
    expect(bad.status).toBe(400);
    expect(bad.body.message).toMatch(/'model'.*gpt-nowhere/);
    const badDataset = await call('/api/core/app/create', { name: 'x', model: 'sim-chat', datasets: ['nope'] });
    expect(badDataset.body.message).toMatch(/'datasets'.*nope/);
    const badSearch = await call('/api/core/app/create', { name: 'x', model: 'sim-chat', search: { similarity: 3 } });
    expect(badSearch.status).toBe(400);
    expect(badSearch.body.message).toMatch(/search\.similarity/);

    const made = await call('/api/core/app/create', {
      name: 'first',
      model: 'sim-chat',
      systemPrompt: 'Be brief.',
      temperature: 0.3,
      maxToken: 500,
      datasets: [datasetId],
      search: { searchMode: 'embedding', similarity: 0.2, limit: 2000 },
    });
    const appId = made.body.data;
    const detail = (await call(`/api/core/app/detail?appId=${appId}`)).body.data;
    expect(detail).toMatchObject({
      name: 'first',
      model: 'sim-chat',
      systemPrompt: 'Be brief.',
      datasets: [datasetId],
      search: { searchMode: 'embedding', similarity: 0.2, limit: 2000, queryExtension: { enabled: false } },
    });
    const updated = await call('/api/core/app/update', { appId, name: 'renamed', search: { similarity: 0.5 } }, 'PUT');
    expect(updated.status).toBe(200);
    expect(updated.body.data).toMatchObject({ name: 'renamed', search: { searchMode: 'embedding', similarity: 0.5, limit: 2000 } });
    expect((await call('/api/core/app/update', { appId, temperature: 9 }, 'PUT')).body.message).toMatch(/'temperature'/);
    const list = (await call('/api/core/app/list', {})).body.data;
    expect(list.list.map((a: any) => a.id)).toContain(appId);
    expect((await call(`/api/core/app/detail?appId=${appId}`, undefined, 'GET', OTHER_TEAM_KEY)).status).toBe(404);
    expect((await call('/api/core/app/list', {}, 'POST', OTHER_TEAM_KEY)).body.data.total).toBe(0);

    const key = (await call('/api/support/openapi/create', { name: 'k', appId })).body.data as string;
    expect(key).toMatch(/^kbchat-/);
    const keys = (await call(`/api/support/openapi/list?appId=${appId}`)).body.data;
    expect(keys).toHaveLength(1);
    expect(JSON.stringify(keys)).not.toContain(key);
    expect((await call(`/api/core/app/del?appId=${appId}`, undefined, 'DELETE')).status).toBe(200);
    expect((await call(`/api/core/app/detail?appId=${appId}`)).status).toBe(404);
    // Its keys went with it.
    expect((await chatRaw(key, { messages: [{ role: 'user', content: 'hi' }] })).status).toBe(401);
  });

  it('answers from the knowledge base through the openai client, non-stream and stream, with real usage', async () => {
    const { client } = await makeApp({
      model: 'sim-echo-prompt',
      systemPrompt: 'You are a geography helper.',
      datasets: [datasetId],
      search: { searchMode: 'mixedRecall' },
    });
    const r = await client.chat.completions.create({ model: 'ignored', messages: [{ role: 'user', content: 'Which volcano is on Sicily?' }] });
    const answer = r.choices[0]!.message.content!;
    // sim-echo-prompt repeats the prompt: the quote and the system prompt reached the model.
    expect(answer).toContain('Mount Etna is an active volcano');
    expect(answer).toContain('You are a geography helper.');
    expect(answer).toContain('Question: Which volcano is on Sicily?');
    expect(r.usage!.prompt_tokens).toBeGreaterThan(20);
    expect(r.usage!.completion_tokens).toBeGreaterThan(20);
    expect(r.usage!.total_tokens).toBe(r.usage!.prompt_tokens + r.usage!.completion_tokens);

    const stream = await client.chat.completions.create({
      model: 'ignored',
      stream: true,
      stream_options: { include_usage: true },
      messages: [{ role: 'user', content: 'Which volcano is on Sicily?' }],
    });
    let text = '';
    let usage: OpenAI.CompletionUsage | undefined | null;
    let finish: string | null = null;
    for await (const chunk of stream) {
      text += chunk.choices[0]?.delta?.content ?? '';
      finish = chunk.choices[0]?.finish_reason ?? finish;
      if (chunk.usage) usage = chunk.usage;
    }
    expect(text).toBe(answer);
    expect(finish).toBe('stop');
    expect(usage?.prompt_tokens).toBe(r.usage!.prompt_tokens);
  });

  it('keeps a chat across turns with chatId, lists and deletes it', async () => {
    const { appId, key, client } = await makeApp({ model: 'sim-echo-prompt', datasets: [] });
    const body = (content: string) => ({ model: 'x', messages: [{ role: 'user' as const, content }], chatId: 'chat-1' });
    await client.chat.completions.create(body('My name is Ada.') as any);
    const second = await client.chat.completions.create(body('What is my name?') as any);
    // The stored first turn is in the second prompt.
    expect(second.choices[0]!.message.content).toContain('My name is Ada.');
    // Without chatId nothing is stored or loaded.
    const lone = await client.chat.completions.create({ model: 'x', messages: [{ role: 'user', content: 'Alone?' }] });
    expect(lone.choices[0]!.message.content).not.toContain('Ada');

    const histories = await call('/api/core/chat/getHistories', { offset: 0, pageSize: 10 }, 'POST', key);
    expect(histories.body.data.list.map((c: any) => c.chatId)).toEqual(['chat-1']);
    const records = (await call('/api/core/chat/getPaginationRecords', { appId, chatId: 'chat-1' })).body.data;
    expect(records.total).toBe(4);
    expect(records.list.map((i: any) => i.obj)).toEqual(['Human', 'AI', 'Human', 'AI']);
    expect(records.list[0].value[0].text.content).toBe('My name is Ada.');
    // Another team's general key cannot read it.
    expect((await call('/api/core/chat/getPaginationRecords', { appId, chatId: 'chat-1' }, 'POST', OTHER_TEAM_KEY)).status).toBe(404);
    expect((await call(`/api/core/chat/delHistory?chatId=chat-1`, undefined, 'DELETE', key)).status).toBe(200);
    expect((await call('/api/core/chat/getHistories', {}, 'POST', key)).body.data.total).toBe(0);
  });

  it('refuses a general key on the chat endpoint with the exact message, and unknown keys with 401', async () => {
    const general = new OpenAI({ apiKey: KEY, baseURL: `${p.url}/api/v1`, maxRetries: 0 });
    const err = await general.chat.completions.create({ model: 'x', messages: [{ role: 'user', content: 'hi' }] }).catch((e) => e);
    expect(err).toBeInstanceOf(OpenAI.PermissionDeniedError);
    expect(err.status).toBe(403);
    expect(err.message).toContain(APP_KEY_MESSAGE);
    const raw = await chatRaw(KEY, { messages: [{ role: 'user', content: 'hi' }] });
    expect(((await raw.json()) as any).message).toBe(APP_KEY_MESSAGE);
    expect((await chatRaw(OTHER_TEAM_KEY, { messages: [{ role: 'user', content: 'hi' }] })).status).toBe(403);
    expect((await chatRaw('kbchat-nope', { messages: [{ role: 'user', content: 'hi' }] })).status).toBe(401);
  });

  it('refuses expired and revoked keys at once', async () => {
    const { appId } = await makeApp({ model: 'sim-chat' });
    const past = await call('/api/support/openapi/create', { appId, expiredTime: Date.now() - 1000 });
    expect(past.status).toBe(400);
    expect(past.body.message).toMatch(/'expiredTime'/);
    const soon = (await call('/api/support/openapi/create', { appId, limit: { expiredTime: new Date(Date.now() + 400).toISOString() } })).body.data as string;
    expect((await chatRaw(soon, { messages: [{ role: 'user', content: 'hi' }] })).status).toBe(200);
    await new Promise((r) => setTimeout(r, 500));
    expect((await chatRaw(soon, { messages: [{ role: 'user', content: 'hi' }] })).status).toBe(401);
    const revoked = (await call('/api/support/openapi/create', { appId })).body.data as string;
    expect((await chatRaw(revoked, { messages: [{ role: 'user', content: 'hi' }] })).status).toBe(200);
    const listed = (await call(`/api/support/openapi/list?appId=${appId}`)).body.data as any[];
    const revokedRow = listed.find((k) => revoked.startsWith(k.apiKey.replace('…', '')) && k.limit.expiredTime === undefined)!;
    const id = revokedRow.id;
    // A use is recorded (to the minute): the key just opened a chat.
    expect(Date.now() - Date.parse(revokedRow.lastUsedTime)).toBeLessThan(60_000);
    expect((await call(`/api/support/openapi/delete?id=${id}`, undefined, 'DELETE', OTHER_TEAM_KEY)).status).toBe(404);
    expect((await call(`/api/support/openapi/delete?id=${id}`, undefined, 'DELETE')).status).toBe(200);
    expect((await chatRaw(revoked, { messages: [{ role: 'user', content: 'hi' }] })).status).toBe(401);
  });

  it('completes the question into several queries, searches them all, and records the step', async () => {
    const { key } = await makeApp({
      model: 'sim-chat',
      datasets: [datasetId],
      search: { queryExtension: { enabled: true, model: 'sim-echo-prompt', background: 'Geography of Europe' } },
    });
    const body = (await (await chatRaw(key, { detail: true, messages: [{ role: 'user', content: 'glacier in the Alps' }] })).json()) as any;
    const [ext, search] = body.responseData;
    expect(ext).toMatchObject({ moduleType: 'queryExtension', model: 'sim-echo-prompt' });
    expect(ext.queryExtensionResult.queries.length).toBeGreaterThanOrEqual(1);
    expect(ext.queryExtensionResult.queries.length).toBeLessThanOrEqual(5);
    expect(ext.inputTokens).toBeGreaterThan(0);
    expect(search.moduleType).toBe('datasetSearchNode');
    expect(search.queries).toEqual(['glacier in the Alps', ...ext.queryExtensionResult.queries.filter((q: string) => q !== 'glacier in the Alps')]);
    // The extra queries here are echoed prompt lines: they may outrank, but not hide, the match.
    expect(search.quoteList.some((q: any) => q.q.includes('Aletsch'))).toBe(true);
    // Every model call of the turn counts in usage.
    expect(body.usage.prompt_tokens).toBe(ext.inputTokens + body.responseData[2].inputTokens);
  });

  it('skips a dataset deleted after the app was made, naming it, and still answers', async () => {
    const doomed = (await call('/api/core/dataset/create', { name: 'doomed', vectorModel: 'sim-embed-384' })).body.data;
    const { key } = await makeApp({ model: 'sim-chat', datasets: [datasetId, doomed] });
    expect((await call(`/api/core/dataset/delete?id=${doomed}`, undefined, 'DELETE')).status).toBe(200);
    const res = await chatRaw(key, { detail: true, messages: [{ role: 'user', content: 'Where is Mount Etna?' }] });
    expect(res.status).toBe(200);
    const body = (await res.json()) as any;
    const search = body.responseData.find((r: any) => r.moduleType === 'datasetSearchNode');
    expect(search.error).toBe(`datasets no longer exist: ${doomed}`);
    expect(search.datasets).toEqual([datasetId]);
    expect(search.quoteList.some((q: any) => q.q.includes('Etna'))).toBe(true);
  });

  it('validates the chat body, naming the field', async () => {
    const { key } = await makeApp({ model: 'sim-chat' });
    const noMessages = await chatRaw(key, { messages: [] });
    expect(noMessages.status).toBe(400);
    expect(((await noMessages.json()) as any).message).toMatch(/'messages'/);
    const lastNotUser = await chatRaw(key, {
      messages: [
        { role: 'user', content: 'a' },
        { role: 'assistant', content: 'b' },
      ],
    });
    expect(((await lastNotUser.json()) as any).message).toMatch(/'messages\[1\]'/);
    const badStream = await chatRaw(key, { stream: 'yes', messages: [{ role: 'user', content: 'a' }] });
    expect(((await badStream.json()) as any).message).toMatch(/'stream'/);
  });

  it('classifies and extracts with tool calls (sim-tools), returning newVariables and responseData', async () => {
    const { client } = await makeApp({
      model: 'sim-chat',
      datasets: [datasetId],
      classify: {
        model: 'sim-tools',
        categories: [
          { id: 'billing', description: 'Invoices and payments', reply: 'Please write to billing@example.com.' },
          { id: 'geography', description: 'Questions about places' },
        ],
      },
      extract: { model: 'sim-tools', fields: [{ key: 'topic', description: 'what the question is about', type: 'string', required: true }] },
    });
    const fixed = (await client.chat.completions.create({
      model: 'x',
      messages: [{ role: 'user', content: 'question about billing' }],
      detail: true,
    } as any)) as any;
    expect(fixed.choices[0].message.content).toBe('Please write to billing@example.com.');
    expect(fixed.responseData[0]).toMatchObject({ moduleType: 'classifyQuestion', cqResult: 'billing', mode: 'toolChoice', model: 'sim-tools' });

    const before = Date.now();
    const routed = (await client.chat.completions.create({
      model: 'x',
      messages: [{ role: 'user', content: 'tell me about geography' }],
      detail: true,
    } as any)) as any;
    const types = routed.responseData.map((r: any) => r.moduleType);
    expect(types).toEqual(['classifyQuestion', 'datasetSearchNode', 'contentExtract', 'chatNode']);
    expect(routed.responseData[0].cqResult).toBe('geography');
    expect(routed.newVariables).toEqual({ topic: 'geography' });
    expect(routed.responseData[1].quoteList.length).toBeGreaterThan(0);
    expect(routed.responseData[3]).toMatchObject({ model: 'sim-chat' });
    expect(routed.responseData[3].inputTokens).toBeGreaterThan(0);
    // The trace leads to the gateway: the answer's call is the one its log has under that request id.
    await new Promise((r) => setTimeout(r, 150));
    const logged = ((await (await gw.api(`/api/logs?from=${before}&limit=500`)).json()) as any).data as { model: string; request_id: string }[];
    expect(logged.find((l) => l.request_id === routed.responseData[3].requestId)?.model).toBe('sim-chat');
    // sim-chat echoes the last user message: the quote prompt around the question.
    expect(routed.choices[0].message.content).toMatch(/^Echo: answer the question using only the quotes/);
  });

  it("classifies in prompt mode with the model's customCQPrompt (sim-echo-prompt)", async () => {
    const { key } = await makeApp({
      model: 'sim-chat',
      classify: {
        model: 'sim-echo-prompt',
        categories: [
          { id: 'tech', description: 'Technical problems', reply: 'Restart it.' },
          { id: 'other', description: 'Anything else' },
        ],
      },
    });
    const res = await chatRaw(key, { detail: true, messages: [{ role: 'user', content: 'my laptop is slow' }] });
    const body = (await res.json()) as any;
    expect(body.responseData[0]).toMatchObject({ moduleType: 'classifyQuestion', mode: 'prompt', cqResult: 'tech' });
    expect(body.choices[0].message.content).toBe('Restart it.');
  });

  it('streams FastGPT events with detail=true: flowNodeStatus, answer, [DONE], flowResponses', async () => {
    const { key } = await makeApp({ model: 'sim-chat', datasets: [datasetId] });
    const res = await chatRaw(key, { stream: true, detail: true, messages: [{ role: 'user', content: 'Where is the Aletsch glacier?' }] });
    expect(res.headers.get('content-type')).toMatch(/text\/event-stream/);
    const raw = await res.text();
    const events = [...raw.matchAll(/event: (\w+)\ndata: (.*)\n\n/g)].map((m) => ({ name: m[1]!, data: m[2]! }));
    expect(events[0]).toEqual({ name: 'flowNodeStatus', data: JSON.stringify({ status: 'running', name: 'Dataset search' }) });
    const answers = events.filter((e) => e.name === 'answer');
    const doneAt = events.findIndex((e) => e.data === '[DONE]');
    expect(doneAt).toBeGreaterThan(0);
    expect(events[doneAt + 1]!.name).toBe('flowResponses');
    const flow = JSON.parse(events[doneAt + 1]!.data);
    expect(flow.map((r: any) => r.moduleType)).toEqual(['datasetSearchNode', 'chatNode']);
    const text = answers
      .filter((e) => e.data !== '[DONE]')
      .map((e) => JSON.parse(e.data).choices[0].delta.content ?? '')
      .join('');
    expect(text).toMatch(/^Echo: answer the question using only the quotes/);
  });

  it("keeps the gateway's message and request id on model errors, stream and non-stream", async () => {
    const { key, client } = await makeApp({ model: 'sim-500' });
    const err = await client.chat.completions.create({ model: 'x', messages: [{ role: 'user', content: 'hi' }] }).catch((e) => e);
    expect(err.status).toBe(500);
    expect(err.message).toMatch(/\(request id: [\w-]+\)/);
    const gatewayRequestId = /\(request id: ([\w-]+)\)/.exec(err.message)![1]!;
    // The gateway's request id is the gateway's own: its log has that request.
    let logged: Response | undefined;
    for (let i = 0; i < 50 && logged?.status !== 200; i++) {
      await new Promise((r) => setTimeout(r, 20));
      logged = await gw.api(`/api/logs/${gatewayRequestId}`);
    }
    expect(logged!.status).toBe(200);
    // A failed model call hands its exact body to the logger; replayed against the gateway it fails the same way.
    const app = await p.services.apps.app({ keyId: 0, teamId: p.services.rootTeamId, appId: null }, (await p.services.keys.byHash(hashKey(key)))!.app_id!);
    const failures: { step: string; body?: string }[] = [];
    await expect(
      p.services.chat.run(
        { keyId: 0, teamId: p.services.rootTeamId, appId: app.id },
        app,
        { question: 'hi', history: [], variables: {}, stream: false, onModelFailure: (step, e) => failures.push({ step, body: e.requestBody }) },
        { status() {}, answer() {}, fastAnswer() {}, variables() {} },
      ),
    ).rejects.toThrow(/request id/);
    expect(failures).toHaveLength(1);
    expect(failures[0]!.step).toBe('answer');
    expect(JSON.parse(failures[0]!.body!)).toMatchObject({ model: 'sim-500', messages: [{ role: 'user', content: 'hi' }] });
    const replayed = await gw.api('/v1/chat/completions', { method: 'POST', json: JSON.parse(failures[0]!.body!) });
    expect(replayed.status).toBe(500);
    // Stream without detail: nothing was sent yet, so it is still a plain HTTP error.
    const s = await chatRaw(key, { stream: true, messages: [{ role: 'user', content: 'hi' }] });
    expect(s.status).toBe(500);
    expect(((await s.json()) as any).message).toMatch(/request id/);
    // With detail the events had started: the error is an event.
    const d = await chatRaw(key, { stream: true, detail: true, messages: [{ role: 'user', content: 'hi' }] });
    const raw = await d.text();
    expect(raw).toMatch(/event: error\ndata: .*request id/);
  });

  it('cancels the model call at the gateway when the chat client leaves', async () => {
    const { key } = await makeApp({ model: 'sim-slow' });
    for (const stream of [true, false]) {
      const leave = new AbortController();
      const pending = fetch(`${p.url}/api/v1/chat/completions`, {
        method: 'POST',
        signal: leave.signal,
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body: JSON.stringify({ stream, messages: [{ role: 'user', content: `slow ${stream}` }] }),
      }).catch((e) => e);
      await new Promise((r) => setTimeout(r, 300));
      leave.abort();
      expect(await pending).toBeInstanceOf(Error);
      // The gateway saw its client (the platform) leave long before sim-slow's 3 s answer.
      let rows: any[] = [];
      const until = Date.now() + 2_000;
      while (Date.now() < until && rows.length === 0) {
        await new Promise((r) => setTimeout(r, 50));
        rows = ((await (await gw.api('/api/logs?model=sim-slow')).json()) as any).data.filter((r: any) => r.is_stream === stream);
      }
      expect(rows[0]?.status).toBe(499);
      expect(rows[0].latency_ms).toBeLessThan(2_500);
    }
  });

  it('says "Connection error" naming the address when the gateway is unreachable', async () => {
    const configPath = join(dir, 'config.json');
    const down = await startPlatform(
      loadPlatformConfig(
        { INITIAL_API_KEY: KEY },
        {
          host: '127.0.0.1',
          port: 0,
          dataDir: mkdtempSync(join(tmpdir(), 'kbchat-chat-down-')),
          databaseUrl: 'pglite:memory',
          configPath,
          gatewayUrl: 'http://127.0.0.1:9',
          gatewayToken: ROOT_TOKEN,
          runWorker: false,
        },
      ),
    );
    try {
      const appId = (
        (await fetch(`${down.url}/api/core/app/create`, {
          method: 'POST',
          headers: { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' },
          body: JSON.stringify({ name: 'a', model: 'sim-chat' }),
        }).then((r) => r.json())) as any
      ).data;
      const key = (
        (await fetch(`${down.url}/api/support/openapi/create`, {
          method: 'POST',
          headers: { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' },
          body: JSON.stringify({ appId }),
        }).then((r) => r.json())) as any
      ).data;
      const res = await fetch(`${down.url}/api/v1/chat/completions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body: JSON.stringify({ messages: [{ role: 'user', content: 'hi' }] }),
      });
      expect(res.status).toBe(502);
      expect(((await res.json()) as any).message).toMatch(/^Connection error: http:\/\/127\.0\.0\.1:9/);
    } finally {
      await down.close();
    }
  });

  it('serves files of the public folder at /<name>, and nothing outside it', async () => {
    const res = await fetch(`${p.url}/verify_abc123.txt`);
    expect(res.status).toBe(200);
    expect(await res.text()).toBe('verification-token-abc123');
    expect(res.headers.get('content-type')).toMatch(/text\/plain/);
    expect((await fetch(`${p.url}/nothere.txt`)).status).toBe(404);
    expect((await fetch(`${p.url}/..%2Fconfig.json`)).status).toBe(404);
    expect((await fetch(`${p.url}/.hidden`)).status).toBe(404);
  });
});
