// The application's chat log for its team, over HTTP with a real gateway in
// front of the upstream simulator: filters by feedback, source, share link,
// date and text (paged in SQL); the export of every message of the selected
// chats as CSV (BOM, quoted, formula-like cells neutralised) and JSON Lines,
// with each answer's tokens and the gateway's cost; the figures per hour; and
// an export of 100,000 messages in bounded memory.
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EXPORT_COLUMNS } from '@kbchat/contracts';
import { startPlatformFixture, type PlatformFixture } from './platform-fixture.js';

const KEY = 'kbchat-test-chat-log-key-0123456789';
const FORMULA = '=HYPERLINK("http://evil.example","win a prize")';

describe('chat log, export and figures', () => {
  let f: PlatformFixture;
  let appId: string;
  let appKey: string;
  let shareId: string;
  let started: number;

  const call = (path: string, json?: unknown, key?: string | null) => f.call(path, { json, key });
  const logs = async (filters: Record<string, unknown>) => {
    const r = await call('/api/core/app/getChatLogs', { appId, ...filters });
    expect(r.status, r.text).toBe(200);
    return (r.body.data.list as any[]).map((c) => c.chatId).sort();
  };
  const query = (params: Record<string, string | number>) =>
    new URLSearchParams({ appId, ...Object.fromEntries(Object.entries(params).map(([k, v]) => [k, String(v)])) });
  const exportJsonl = async (params: Record<string, string | number> = {}) => {
    const r = await call(`/api/core/app/exportChatLogs?${query({ format: 'jsonl', ...params })}`);
    expect(r.status, r.text).toBe(200);
    return r.text
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l));
  };

  beforeAll(async () => {
    f = await startPlatformFixture({ key: KEY, models: ['sim-chat'], config: { llmModels: [{ model: 'sim-chat' }], vectorModels: [] } });
    appId = (await call('/api/core/app/create', { name: 'Shop', model: 'sim-chat' })).body.data;
    appKey = (await call('/api/support/openapi/create', { name: 'shop key', appId })).body.data;
    shareId = (await call('/api/support/outLink/create', { appId, name: 'public' })).body.data;
    started = Date.now();
    const ask = (key: string | null, body: Record<string, unknown>, content: string) =>
      call('/api/v1/chat/completions', { ...body, messages: [{ role: 'user', content }] }, key);
    const visitor = { shareId, outLinkUid: 'visitor-1' };
    expect((await ask(appKey, { chatId: 'api-1', responseChatItemId: 'a1' }, 'How much is shipping to Oslo?')).status).toBe(200);
    expect((await ask(null, { ...visitor, chatId: 'share-1', responseChatItemId: 's1' }, FORMULA)).status).toBe(200);
    expect((await ask(appKey, { chatId: 'api-2', responseChatItemId: 'a2' }, "-2+3 and @SUM(A1) and +cmd|' /C calc'!A0")).status).toBe(200);
    await call('/api/core/chat/feedback/updateUserFeedback', { appId, chatId: 'api-1', dataId: 'a1', userBadFeedback: 'it is 12 EUR, not free' });
    await call('/api/core/chat/feedback/updateUserFeedback', { ...visitor, chatId: 'share-1', dataId: 's1', userGoodFeedback: 'yes' }, null);
  }, 60_000);
  afterAll(async () => {
    await f?.close();
  });

  it('filters chats by feedback, source, share link, date and text', async () => {
    expect(await logs({})).toEqual(['api-1', 'api-2', 'share-1']);
    expect(await logs({ feedback: 'good' })).toEqual(['share-1']);
    expect(await logs({ feedback: 'bad' })).toEqual(['api-1']);
    expect(await logs({ feedback: 'any' })).toEqual(['api-1', 'share-1']);
    expect(await logs({ source: 'share' })).toEqual(['share-1']);
    expect(await logs({ source: 'api' })).toEqual(['api-1', 'api-2']);
    expect(await logs({ shareId })).toEqual(['share-1']);
    expect(await logs({ searchText: 'oslo' })).toEqual(['api-1']);
    // The text is searched in answers too (the simulator echoes the question).
    expect(await logs({ searchText: 'SUM(A1)', source: 'api' })).toEqual(['api-2']);
    expect(await logs({ searchText: '100%_not_there' })).toEqual([]);
    expect(await logs({ dateStart: new Date(Date.now() + 60_000).toISOString() })).toEqual([]);
    expect(await logs({ dateStart: started - 1, dateEnd: Date.now() + 1 })).toEqual(['api-1', 'api-2', 'share-1']);
    // Filters page in SQL: the total is the filtered count.
    const page = await call('/api/core/app/getChatLogs', { appId, source: 'api', pageSize: 1 });
    expect(page.body.data).toMatchObject({ total: 2, list: [{ chatId: expect.any(String) }] });

    const bad = await call('/api/core/app/getChatLogs', { appId, feedback: 'meh' });
    expect(bad.status).toBe(400);
    expect(bad.body.message).toMatch(/'feedback'/);
    expect((await call('/api/core/app/getChatLogs', { appId, dateStart: 10, dateEnd: 5 })).body.message).toMatch(/'dateEnd'/);
    // A visitor (no key) reads no chat log.
    expect((await call('/api/core/app/getChatLogs', { appId, shareId }, null)).status).toBe(401);
  });

  it('exports every message as CSV a spreadsheet opens safely, and as JSON Lines, with tokens and the gateway cost', async () => {
    const res = await call(`/api/core/app/exportChatLogs?${query({})}`);
    expect(res.status, res.text).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/csv; charset=utf-8');
    expect(res.headers.get('content-disposition')).toMatch(/^attachment; filename="chat-log-.*\.csv"/);
    expect(res.text.charCodeAt(0)).toBe(0xfeff);
    const lines = res.text.slice(1).split('\r\n').filter(Boolean);
    expect(lines[0]).toBe(EXPORT_COLUMNS.map((c) => `"${c}"`).join(','));
    expect(lines).toHaveLength(1 + 6);
    // The formula is text: an apostrophe first, its quotes doubled.
    const formulaRow = lines.find((l) => l.includes('HYPERLINK'))!;
    expect(formulaRow).toContain(`"'=HYPERLINK(""http://evil.example"",""win a prize"")"`);
    expect(formulaRow.startsWith('"share-1","share","visitor-1"')).toBe(true);
    // Every cell that starts with - + or @ is prefixed, whatever follows.
    expect(lines.find((l) => l.includes('SUM(A1)'))).toContain(`"'-2+3 and @SUM(A1) and +cmd|' /C calc'!A0"`);
    expect(lines.some((l) => /(^|,)"[=+\-@]/.test(l))).toBe(false);

    // The gateway's cost is read from its log a moment after each answer.
    await expect.poll(async () => (await exportJsonl()).filter((m) => m.role === 'assistant').every((m) => m.cost > 0), { timeout: 15_000 }).toBe(true);
    const messages = await exportJsonl();
    expect(messages).toHaveLength(6);
    const answer = messages.find((m) => m.chatId === 'api-1' && m.role === 'assistant');
    expect(answer).toMatchObject({ source: 'api', visitor: '', feedback: 'bad: it is 12 EUR, not free', annotationId: '', model: 'sim-chat' });
    expect(answer.tokens).toBeGreaterThan(0);
    const logs = ((await (await f.gw.api(`/api/logs?from=${started - 1000}&limit=50`)).json()) as any).data as any[];
    expect(answer.cost).toBe(logs.filter((l) => l.model === 'sim-chat').map((l) => l.cost)[2]); // the first answer: the log is newest first
    expect(messages.find((m) => m.chatId === 'share-1' && m.role === 'assistant')).toMatchObject({ visitor: 'visitor-1', feedback: 'good' });
    expect(messages.find((m) => m.role === 'user' && m.chatId === 'share-1')).toMatchObject({ text: FORMULA, tokens: null, cost: null });
    // A chat's messages together, question before answer.
    expect(messages.map((m) => `${m.chatId}:${m.role}`)).toEqual([
      'api-1:user',
      'api-1:assistant',
      'share-1:user',
      'share-1:assistant',
      'api-2:user',
      'api-2:assistant',
    ]);
    // Filters select the chats.
    expect((await exportJsonl({ source: 'share' })).map((m) => m.chatId)).toEqual(['share-1', 'share-1']);
    expect(await exportJsonl({ dateStart: Date.now() + 60_000 })).toEqual([]);
    const bad = await call(`/api/core/app/exportChatLogs?${query({ format: 'xlsx' })}`);
    expect(bad.status).toBe(400);
    expect(bad.body.message).toMatch(/'format'/);
  });

  it('gives the figures per hour: chats, questions, visitors, feedback, annotation and uncited answers, tokens, cost, time to first text', async () => {
    // One answer from an annotation.
    await call('/api/core/app/annotation/create', { appId, question: 'Do you ship abroad?', answer: 'Yes, to all of Europe.' });
    await f.call('/api/core/app/update', { json: { appId, annotationReply: { enabled: true } }, method: 'PUT' });
    const hit = await call('/api/v1/chat/completions', { chatId: 'api-3', messages: [{ role: 'user', content: 'Do you ship abroad?' }] }, appKey);
    expect(hit.body.choices[0].message.content).toBe('Yes, to all of Europe.');

    const from = Math.floor(started / 3_600_000) * 3_600_000;
    const stats = async () => {
      const r = await call(`/api/core/app/stats?${query({ bucket: 'hour', from, to: from + 2 * 3_600_000 })}`);
      expect(r.status, r.text).toBe(200);
      return r.body.data;
    };
    await expect.poll(async () => (await stats()).totals.cost > 0, { timeout: 15_000 }).toBe(true);
    const s = await stats();
    expect(s.bucket).toBe('hour');
    expect(s.buckets.map((b: any) => b.start)).toEqual([new Date(from).toISOString(), new Date(from + 3_600_000).toISOString()]);
    expect(s.totals).toMatchObject({
      chats: 4,
      questions: 4,
      // The team (its API key) and one visitor.
      visitors: 2,
      goodFeedback: 1,
      badFeedback: 1,
      annotationAnswers: 1,
      // No datasets: every model answer cited nothing; the annotation's is not counted.
      uncitedAnswers: 3,
    });
    expect(s.totals.tokens).toBeGreaterThan(0);
    expect(s.totals.ttftP50Ms).toBeGreaterThanOrEqual(0);
    expect(s.totals.ttftP95Ms).toBeGreaterThanOrEqual(s.totals.ttftP50Ms);
    // The buckets add up to the totals.
    for (const k of ['chats', 'questions', 'goodFeedback', 'badFeedback', 'annotationAnswers', 'uncitedAnswers', 'tokens'] as const) {
      expect(s.buckets.reduce((n: number, b: any) => n + b[k], 0)).toBe(s.totals[k]);
    }
    // Days by default, the last 7.
    const days = (await call(`/api/core/app/stats?appId=${appId}`)).body.data;
    expect(days.bucket).toBe('day');
    expect(days.buckets.length).toBeGreaterThanOrEqual(7);
    expect(days.totals.questions).toBe(4);

    expect((await call(`/api/core/app/stats?${query({ bucket: 'week' })}`)).body.message).toMatch(/'bucket'/);
    expect((await call(`/api/core/app/stats?${query({ from: 100, to: 50 })}`)).body.message).toMatch(/'to'/);
    expect((await call(`/api/core/app/stats?${query({ bucket: 'hour', from: 0 })}`)).body.message).toMatch(/'from'.*at most 1000/);
    // Past what a date holds: refused by name, not a 500.
    const far = await call(`/api/core/app/stats?${query({ bucket: 'hour', from: '9000000000000000', to: '9000000003600000' })}`);
    expect(far.status).toBe(400);
    expect(far.body.message).toMatch(/'from'/);
    expect((await call('/api/core/app/getChatLogs', { appId, dateStart: '99999999999999999999' })).body.message).toMatch(/'dateStart'/);
    expect((await call(`/api/core/app/stats?appId=${appId}`, undefined, null)).status).toBe(401);
  });

  it('exports 100,000 messages in bounded memory: a batch at a time, never the whole log', async () => {
    const bigApp = (await call('/api/core/app/create', { name: 'Busy', model: 'sim-chat' })).body.data;
    const db = f.p.services.store.db;
    const team = f.p.services.rootTeamId;
    const CHATS = 1_000;
    const PER_CHAT = 100;
    // 400 characters a message: 100,000 of them are ~45 MB of CSV.
    const text = (i: number) => `Message ${i}: ${'the quick brown fox jumps over the lazy dog, '.repeat(9)}`.slice(0, 400);
    const now = Date.now();
    for (let c = 0; c < CHATS; c += 100) {
      const chats = await db
        .insertInto('chats')
        .values(
          Array.from({ length: 100 }, (_, j) => ({
            app_id: bigApp,
            team_id: team,
            chat_id: `big-${c + j}`,
            title: 't',
            created_at: now,
            updated_at: now,
            share_id: null,
            out_link_uid: null,
            variables: null,
          })),
        )
        .returning('id')
        .execute();
      const items = chats.flatMap(({ id }, j) =>
        Array.from({ length: PER_CHAT }, (_, k) => ({
          chat_pk: id,
          data_id: `d${k}`,
          role: (k % 2 ? 'assistant' : 'user') as 'user' | 'assistant',
          content: text((c + j) * PER_CHAT + k),
          response_data: null,
          created_at: now,
          user_good_feedback: null,
          user_bad_feedback: null,
          error: null,
          updated_at: null,
        })),
      );
      for (let i = 0; i < items.length; i += 2_500)
        await db
          .insertInto('chat_items')
          .values(items.slice(i, i + 2_500))
          .execute();
    }

    // What the heap holds live, after a full collection: garbage not yet collected says nothing about what is kept.
    setFlagsFromString('--expose-gc');
    const gc = runInNewContext('gc') as () => void;
    const live = () => (gc(), process.memoryUsage().heapUsed);
    const idle = live();
    let peak = idle;
    const sampler = setInterval(() => (peak = Math.max(peak, live())), 100);
    const res = await fetch(`${f.p.url}/api/core/app/exportChatLogs?appId=${bigApp}&format=csv`, { headers: { authorization: `Bearer ${KEY}` } });
    let bytes = 0;
    let lines = 0;
    for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
      bytes += chunk.length;
      for (const b of chunk) if (b === 10) lines++;
    }
    clearInterval(sampler);
    const growth = peak - idle;
    console.log(`exported ${lines - 1} messages, ${(bytes / 1e6).toFixed(1)} MB; live heap at most ${(growth / 1e6).toFixed(1)} MB above the start`);
    expect(lines - 1).toBe(CHATS * PER_CHAT);
    // Holding the log would take more than the file itself (rows, then the text); a batch at a time takes a small part of it.
    expect(growth).toBeLessThan(bytes / 5);
  }, 180_000);
});
