// A question, once sent, is never lost: a stored chat's question and a
// 'running' answer are written before any model is called; a client that
// leaves does not stop the answer (it is finished and stored), unless the
// operator chose CHAT_ON_DISCONNECT=stop (then it is stored as stopped with
// what was made); the asker's stop keeps what was made, here or through
// another process; a failure is stored with its error; an answer whose
// process died reads as interrupted. Against a real gateway and the upstream
// simulator, whose sim-chat streams a word every 60 ms.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROOT_TOKEN, startTestGateway, type TestGateway } from '../../gateway/test/helpers.js';
import { loadPlatformConfig, startPlatform, type RunningPlatform } from '../src/index.js';

const KEY = 'kbchat-test-chat-durable-key-0123456789';
const WORDS = 40;
const DELAY_MS = 60;

interface Item {
  dataId: string;
  obj: 'Human' | 'AI';
  value: { text: { content: string } }[];
  status: string;
  error?: { message: string; code: string; requestId?: string };
}

describe('a question once sent is never lost', () => {
  let gw: TestGateway;
  let p: RunningPlatform;
  let stopping: RunningPlatform;
  let appId: string;
  /** Application keys by appId: the chat endpoint takes an application's own key. */
  const appKeys = new Map<string, string>();
  let dir: string;

  const post = async (platform: RunningPlatform, path: string, json: unknown) => {
    const res = await fetch(`${platform.url}${path}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' },
      body: JSON.stringify(json),
    });
    const body = (await res.json()) as any;
    if (!res.ok) throw new Error(`${path}: ${res.status} ${body.message}`);
    return body.data;
  };
  const records = (platform: RunningPlatform, chatId: string): Promise<Item[]> =>
    post(platform, '/api/core/chat/getPaginationRecords', { appId, chatId }).then((d) => d.list);
  const text = (i: Item | undefined) => i?.value.map((v) => v.text.content).join('') ?? '';

  /** Starts a streamed turn on a chat and resolves once its first answer piece has arrived; `leave` aborts the client. */
  const newApp = async (platform: RunningPlatform, model: string) => {
    const id = await post(platform, '/api/core/app/create', { name: model, model, datasets: [] });
    appKeys.set(id, await post(platform, '/api/support/openapi/create', { appId: id }));
    return id;
  };
  const startTurn = async (platform: RunningPlatform, chatId: string, question: string, answerId: string) => {
    const leave = new AbortController();
    const res = await fetch(`${platform.url}/api/v1/chat/completions`, {
      method: 'POST',
      signal: leave.signal,
      headers: { authorization: `Bearer ${appKeys.get(appId)}`, 'content-type': 'application/json' },
      body: JSON.stringify({ chatId, stream: true, detail: true, responseChatItemId: answerId, messages: [{ role: 'user', content: question }] }),
    });
    expect(res.status).toBe(200);
    const reader = res.body!.getReader();
    let seen = '';
    while (!seen.includes('event: answer')) seen += new TextDecoder().decode((await reader.read()).value);
    const rest = (async () => {
      for (;;) {
        const { done, value } = await reader.read();
        if (done) return seen;
        seen += new TextDecoder().decode(value);
      }
    })().catch(() => seen);
    return { leave: () => leave.abort(), rest };
  };

  const until = async <T>(read: () => Promise<T>, ok: (v: T) => boolean, ms = 10_000): Promise<T> => {
    const end = Date.now() + ms;
    for (;;) {
      const v = await read();
      if (ok(v) || Date.now() > end) return v;
      await new Promise((r) => setTimeout(r, 100));
    }
  };

  beforeAll(async () => {
    gw = await startTestGateway({ models: ['sim-chat', 'sim-500'], sim: { tokens: WORDS, tokenDelayMs: DELAY_MS } });
    dir = mkdtempSync(join(tmpdir(), 'kbchat-chat-durable-'));
    const configPath = join(dir, 'config.json');
    writeFileSync(configPath, JSON.stringify({ llmModels: [{ model: 'sim-chat' }, { model: 'sim-500' }], vectorModels: [] }));
    const config = (env: Record<string, string>) =>
      loadPlatformConfig(
        { INITIAL_API_KEY: KEY, ...env },
        {
          host: '127.0.0.1',
          port: 0,
          dataDir: mkdtempSync(join(dir, 'p-')),
          databaseUrl: 'pglite:memory',
          configPath,
          gatewayUrl: gw.url,
          gatewayToken: ROOT_TOKEN,
          runWorker: false,
        },
      );
    [p, stopping] = await Promise.all([startPlatform(config({}), () => {}), startPlatform(config({ CHAT_ON_DISCONNECT: 'stop' }), () => {})]);
    appId = await newApp(p, 'sim-chat');
  }, 60_000);
  afterAll(async () => {
    await p?.close();
    await stopping?.close();
    await gw?.close();
  });

  it('stores the question and a running answer at once; a client that leaves still gets its answer finished and stored', async () => {
    const turn = await startTurn(p, 'left-1', 'where did the keeper go', 'answer-left-1');
    // While it is being made: in the history, in the chat log, and as a running answer.
    const histories = await post(p, '/api/core/chat/getHistories', { appId });
    expect(histories.list.map((h: any) => h.chatId)).toContain('left-1');
    const logs = await post(p, '/api/core/app/getChatLogs', { appId });
    expect(logs.list.find((c: any) => c.chatId === 'left-1')?.messageCount).toBe(2);
    const running = await records(p, 'left-1');
    expect(running.map((i) => [i.obj, i.status])).toEqual([
      ['Human', 'done'],
      ['AI', 'running'],
    ]);
    expect(text(running[0])).toBe('where did the keeper go');
    expect(running[1]!.dataId).toBe('answer-left-1');

    turn.leave();
    const done = await until(
      () => records(p, 'left-1'),
      (r) => r[1]?.status !== 'running',
      WORDS * DELAY_MS + 10_000,
    );
    expect(done[1]!.status).toBe('done');
    expect(text(done[1])).toMatch(/^Echo: where did the keeper go/);
    expect(text(done[1]).split(' ').length).toBeGreaterThanOrEqual(WORDS - 1);
  });

  it('shows a running answer growing while it is made', async () => {
    const turn = await startTurn(p, 'grow-1', 'tell me a long story', 'answer-grow-1');
    const partial = await until(
      () => records(p, 'grow-1'),
      (r) => text(r[1]).length > 0,
      5_000,
    );
    expect(partial[1]!.status).toBe('running');
    expect(text(partial[1])).toMatch(/^Echo:/);
    await turn.rest;
    const done = await records(p, 'grow-1');
    expect(done[1]!.status).toBe('done');
    expect(text(done[1]).length).toBeGreaterThan(text(partial[1]).length);
  });

  it("stops at its asker's request: the stream ends, what was made is stored as stopped with its question", async () => {
    const turn = await startTurn(p, 'stop-1', 'count the ships', 'answer-stop-1');
    const started = Date.now();
    expect(await post(p, '/api/core/chat/item/stop', { appId, chatId: 'stop-1', dataId: 'answer-stop-1' })).toEqual({ stopped: true, status: 'stopped' });
    const streamed = await turn.rest;
    // The stream ends at once with what was made, long before the whole answer (WORDS × DELAY_MS).
    expect(Date.now() - started).toBeLessThan((WORDS * DELAY_MS) / 2);
    expect(streamed).toContain('[DONE]');
    const stored = await records(p, 'stop-1');
    expect(stored.map((i) => [i.obj, i.status])).toEqual([
      ['Human', 'done'],
      ['AI', 'stopped'],
    ]);
    expect(text(stored[1])).toMatch(/^Echo: /);
    expect(text(stored[1]).split(' ').length).toBeLessThan(WORDS / 2);
    // Asked again, or for an answer that is not running: nothing changes; an unknown answer is a 404.
    expect(await post(p, '/api/core/chat/item/stop', { appId, chatId: 'stop-1', dataId: 'answer-stop-1' })).toEqual({ stopped: false, status: 'stopped' });
    await expect(post(p, '/api/core/chat/item/stop', { appId, chatId: 'stop-1', dataId: 'no-such-answer' })).rejects.toThrow(/404/);
    await expect(post(p, '/api/core/chat/item/stop', { appId, chatId: 'stop-1' })).rejects.toThrow(/400 .*'dataId'/);
  });

  it('stops within a heartbeat when the stop reaches the store through another process', async () => {
    const turn = await startTurn(p, 'stop-2', 'name the harbours', 'answer-stop-2');
    // Another platform process marks it stopped in the shared store; this one is not told.
    const { team_id: teamId } = await p.services.store.db.selectFrom('chats').select('team_id').where('chat_id', '=', 'stop-2').executeTakeFirstOrThrow();
    const started = Date.now();
    expect(await p.services.chatHistory.requestStop({ teamId, appId, chatId: 'stop-2' }, 'answer-stop-2')).toBeTypeOf('number');
    await turn.rest;
    expect(Date.now() - started).toBeLessThan(2_000);
    const stored = await records(p, 'stop-2');
    expect(stored[1]!.status).toBe('stopped');
    expect(text(stored[1]).split(' ').length).toBeLessThan(WORDS);
  });

  it('with CHAT_ON_DISCONNECT=stop, a client that leaves stops the answer, stored as stopped with what was made', async () => {
    const stopAppId = await newApp(stopping, 'sim-chat');
    const saved = appId;
    appId = stopAppId;
    try {
      const turn = await startTurn(stopping, 'left-2', 'sing the tide song', 'answer-left-2');
      turn.leave();
      const stored = await until(
        () => records(stopping, 'left-2'),
        (r) => r[1]?.status !== 'running',
        5_000,
      );
      expect(stored.map((i) => [i.obj, i.status])).toEqual([
        ['Human', 'done'],
        ['AI', 'stopped'],
      ]);
      expect(text(stored[1]).split(' ').length).toBeLessThan(WORDS / 2);
    } finally {
      appId = saved;
    }
  });

  it('refuses an answer id the chat already has (409), and leaves that answer alone', async () => {
    await (
      await startTurn(p, 'twice-1', 'first ask', 'answer-twice')
    ).rest;
    const again = await fetch(`${p.url}/api/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${appKeys.get(appId)}`, 'content-type': 'application/json' },
      body: JSON.stringify({ chatId: 'twice-1', responseChatItemId: 'answer-twice', messages: [{ role: 'user', content: 'second ask' }] }),
    });
    expect(again.status).toBe(409);
    expect(((await again.json()) as any).message).toMatch(/'responseChatItemId'.*answer-twice/);
    const stored = await records(p, 'twice-1');
    expect(stored.map((i) => [i.obj, i.status])).toEqual([
      ['Human', 'done'],
      ['AI', 'done'],
    ]);
    expect(text(stored[1])).toMatch(/^Echo: first ask/);
  });

  it('stores a failed answer with its error and request id, after its question', async () => {
    const failingApp = await newApp(p, 'sim-500');
    const res = await fetch(`${p.url}/api/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${appKeys.get(failingApp)}`, 'content-type': 'application/json' },
      body: JSON.stringify({ chatId: 'fail-1', stream: false, messages: [{ role: 'user', content: 'will this fail' }] }),
    });
    expect(res.status).toBeGreaterThanOrEqual(500);
    const requestId = res.headers.get('x-request-id');
    const stored: Item[] = (await post(p, '/api/core/chat/getPaginationRecords', { appId: failingApp, chatId: 'fail-1' })).list;
    expect(stored.map((i) => [i.obj, i.status])).toEqual([
      ['Human', 'done'],
      ['AI', 'failed'],
    ]);
    expect(stored[1]!.error?.message).toMatch(/internal upstream failure/);
    expect(stored[1]!.error?.requestId).toBe(requestId);
    // A question the model cannot read is refused before anything is stored.
    const long = await fetch(`${p.url}/api/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${appKeys.get(failingApp)}`, 'content-type': 'application/json' },
      body: JSON.stringify({ chatId: 'fail-2', messages: [{ role: 'user', content: 'word '.repeat(20_000) }] }),
    });
    expect(long.status).toBe(400);
    expect((await post(p, '/api/core/chat/getHistories', { appId: failingApp })).list.map((h: any) => h.chatId)).toEqual(['fail-1']);
  });

  it('reads an answer whose process died (no heartbeat for 30 s) as interrupted, and leaves it out of the next turn', async () => {
    await (
      await startTurn(p, 'dead-1', 'first question', 'answer-dead-1')
    ).rest;
    // As if the process making this answer had died: still running, its heartbeat long gone.
    await p.services.store.db
      .updateTable('chat_items')
      .set({ status: 'running', content: '', updated_at: Date.now() - 60_000 })
      .where('data_id', '=', 'answer-dead-1')
      .execute();
    const stored = await records(p, 'dead-1');
    expect(stored[1]!.status).toBe('interrupted');
    const next = await (await startTurn(p, 'dead-1', 'second question', 'answer-dead-2')).rest;
    // The model read the first question, and no empty answer after it.
    const steps = JSON.parse(/event: flowResponses\ndata: (.+)/.exec(next)![1]!);
    expect(steps[0].historyPreview).toEqual([
      { obj: 'Human', value: 'first question' },
      { obj: 'Human', value: 'second question' },
    ]);
    expect((await records(p, 'dead-1')).map((i) => i.status)).toEqual(['done', 'interrupted', 'done', 'done']);
  });
});
