// Annotations end to end over HTTP, with a real gateway in front of the
// upstream simulator: made, listed, searched, changed and deleted for the
// team only; with annotationReply on, the same question (no model call at
// all) and a paraphrase above the similarity (one embeddings call, no chat
// call) are answered with the annotation's answer word for word, in stream
// and non-stream mode, recorded on the stored answer; a question below it
// goes to the model; matching survives a restart without embedding the
// annotations again; an app without a vector model matches by words; a share
// link's visitor never reads annotations; CSV import and export.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readSse } from '../../gateway/test/helpers.js';
import { apiKeyRow } from '../src/keys/auth.js';
import { startPlatformFixture, type PlatformFixture } from './platform-fixture.js';

const KEY = 'kbchat-test-annotations-key-0123456789';
const OTHER_TEAM_KEY = 'kbchat-test-annotations-other-0123456789';
const QUESTION = 'How do I reset my password?';
const ANSWER = 'Open Settings, then Security, then "Reset password". The link is valid for 30 minutes.';

describe('annotations', () => {
  let f: PlatformFixture;
  let appId: string;
  let plainAppId: string;
  let shareId: string;

  const call = (path: string, json?: unknown, opts: { method?: string; key?: string | null } = {}) => f.call(path, { json, ...opts });
  /** A chat turn with the app key of `app` (made once). */
  const appKeys = new Map<string, string>();
  const askWithKey = async (app: string, content: string, extra: Record<string, unknown> = {}) => {
    if (!appKeys.has(app)) appKeys.set(app, (await call('/api/support/openapi/create', { name: `key ${app}`, appId: app })).body.data);
    return call('/api/v1/chat/completions', { detail: true, messages: [{ role: 'user', content }], ...extra }, { key: appKeys.get(app)! });
  };
  const annotationRecord = (responseData: any[]) => responseData.find((r) => r.moduleType === 'annotationReply');

  beforeAll(async () => {
    f = await startPlatformFixture({
      key: KEY,
      models: ['sim-chat', 'sim-embed-384'],
      config: { llmModels: [{ model: 'sim-chat' }], vectorModels: [{ model: 'sim-embed-384' }] },
      onDisk: true,
    });
    const datasetId = (await call('/api/core/dataset/create', { name: 'Help centre', vectorModel: 'sim-embed-384' })).body.data;
    appId = (await call('/api/core/app/create', { name: 'Help', model: 'sim-chat', datasets: [datasetId] })).body.data;
    plainAppId = (await call('/api/core/app/create', { name: 'Plain', model: 'sim-chat' })).body.data;
    shareId = (await call('/api/support/outLink/create', { appId, name: 'public' })).body.data;
    await f.p.services.keys.insertTeam('otherannotationsteam0000', 'other');
    await f.p.services.keys.insertKey(apiKeyRow(OTHER_TEAM_KEY, { teamId: 'otherannotationsteam0000', appId: null, name: 'other', expiresAt: null }));
  }, 60_000);
  afterAll(async () => {
    await f?.close();
  });

  it('makes, lists, searches, changes and deletes annotations for the team only', async () => {
    const made = await call('/api/core/app/annotation/create', { appId: plainAppId, question: 'Where is the office?', answer: 'Main Street 1.' });
    expect(made.status, made.text).toBe(200);
    const id = made.body.data as string;
    await call('/api/core/app/annotation/create', { appId: plainAppId, question: 'When do you open?', answer: 'At nine.' });
    const list = await call(`/api/core/app/annotation/list?appId=${plainAppId}`);
    expect(list.body.data.total).toBe(2);
    expect(list.body.data.list[0]).toMatchObject({ question: 'When do you open?', answer: 'At nine.', hitCount: 0 });
    const searched = await call(`/api/core/app/annotation/list?appId=${plainAppId}&searchText=main%20street`);
    expect(searched.body.data.list.map((a: any) => a.id)).toEqual([id]);
    const paged = await call(`/api/core/app/annotation/list?appId=${plainAppId}&offset=1&pageSize=1`);
    expect(paged.body.data).toMatchObject({ total: 2, list: [{ id }] });

    const updated = await call('/api/core/app/annotation/update', { id, answer: 'Main Street 2, second floor.' }, { method: 'PUT' });
    expect(updated.body.data).toMatchObject({ id, question: 'Where is the office?', answer: 'Main Street 2, second floor.' });

    // Another team's key: the app and the annotation are not found; nothing changes.
    expect((await call(`/api/core/app/annotation/list?appId=${plainAppId}`, undefined, { key: OTHER_TEAM_KEY })).status).toBe(404);
    expect((await call('/api/core/app/annotation/update', { id, answer: 'hijacked' }, { method: 'PUT', key: OTHER_TEAM_KEY })).status).toBe(404);
    expect((await call(`/api/core/app/annotation/delete?id=${id}`, undefined, { method: 'DELETE', key: OTHER_TEAM_KEY })).status).toBe(404);
    expect((await call('/api/core/app/annotation/create', { appId: plainAppId, question: 'q', answer: 'a' }, { key: OTHER_TEAM_KEY })).status).toBe(404);
    // No key (a visitor): refused before anything is read.
    expect((await call(`/api/core/app/annotation/list?appId=${plainAppId}`, undefined, { key: null })).status).toBe(401);
    // An application key is the team's too, but annotations are managed with a general key or a session.
    const appKey = (await call('/api/support/openapi/create', { name: 'plain key', appId: plainAppId })).body.data;
    expect((await call(`/api/core/app/annotation/list?appId=${plainAppId}`, undefined, { key: appKey })).status).toBe(403);

    // Bad input names the field and changes nothing.
    const empty = await call('/api/core/app/annotation/create', { appId: plainAppId, question: '  ', answer: 'x' });
    expect(empty.status).toBe(400);
    expect(empty.body.message).toMatch(/'question'/);
    const half = await call('/api/core/app/annotation/create', { appId: plainAppId, question: 'q', answer: 'a', chatId: 'c1' });
    expect(half.body.message).toMatch(/'dataId'/);
    const noAnswer = await call('/api/core/app/annotation/create', { appId: plainAppId, question: 'q', answer: 'a', chatId: 'nope', dataId: 'nope' });
    expect(noAnswer.status).toBe(404);
    expect((await call('/api/core/app/annotation/update', { id, answer: '' }, { method: 'PUT' })).body.message).toMatch(/'answer'/);
    expect((await call(`/api/core/app/annotation/list?appId=${plainAppId}&pageSize=0`)).body.message).toMatch(/'pageSize'/);
    expect((await call(`/api/core/app/annotation/list?appId=${plainAppId}`)).body.data.list.find((a: any) => a.id === id).answer).toBe(
      'Main Street 2, second floor.',
    );

    expect((await call(`/api/core/app/annotation/delete?id=${id}`, undefined, { method: 'DELETE' })).status).toBe(200);
    expect((await call(`/api/core/app/annotation/delete?id=${id}`, undefined, { method: 'DELETE' })).status).toBe(404);
    expect((await call(`/api/core/app/annotation/list?appId=${plainAppId}`)).body.data.total).toBe(1);
  });

  it('answers the same question and a paraphrase word for word with no chat model call; a question below the similarity goes to the model', async () => {
    const annotationId = (await call('/api/core/app/annotation/create', { appId, question: QUESTION, answer: ANSWER })).body.data;
    // Off by default: the model answers.
    const before = await askWithKey(appId, QUESTION);
    expect(before.body.choices[0].message.content).not.toBe(ANSWER);
    const on = await call('/api/core/app/update', { appId, annotationReply: { enabled: true, similarity: 0.75 } }, { method: 'PUT' });
    expect(on.body.data.annotationReply).toEqual({ enabled: true, similarity: 0.75 });
    // Changing one field keeps the other.
    const kept = await call('/api/core/app/update', { appId, annotationReply: { enabled: true } }, { method: 'PUT' });
    expect(kept.body.data.annotationReply).toEqual({ enabled: true, similarity: 0.75 });
    expect((await call('/api/core/app/update', { appId, annotationReply: { similarity: 1.5 } }, { method: 'PUT' })).body.message).toMatch(
      /annotationReply\.similarity/,
    );

    // The same question (case and punctuation aside): no model call of any kind.
    let from = Date.now();
    const same = await askWithKey(appId, 'how do I reset my password', { chatId: 'same-1' });
    expect(same.status, same.text).toBe(200);
    expect(same.body.choices[0].message.content).toBe(ANSWER);
    expect(annotationRecord(same.body.responseData)).toMatchObject({ moduleType: 'annotationReply', annotationId, score: 1, used: true, method: 'exact' });
    expect(same.body.responseData.map((r: any) => r.moduleType)).toEqual(['annotationReply']);
    expect(await f.gatewayLogs(from)).toEqual([]);

    // A paraphrase, streamed: embeddings only (the annotation's vector, made now, and the question's), no chat.
    from = Date.now();
    const res = await fetch(`${f.p.url}/api/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${appKeys.get(appId)}`, 'content-type': 'application/json' },
      body: JSON.stringify({ stream: true, detail: true, chatId: 'para-1', messages: [{ role: 'user', content: 'how can I reset my password please' }] }),
    });
    const sse = await readSse(res);
    const text = sse.data
      .map((d) => JSON.parse(d))
      .map((j) => j.choices?.[0]?.delta?.content ?? '')
      .join('');
    expect(text).toBe(ANSWER);
    const logs = await f.gatewayLogs(from);
    expect(logs.map((l) => l.model)).toEqual(['sim-embed-384', 'sim-embed-384']);
    const stored = (await call('/api/core/chat/getPaginationRecords', { appId, chatId: 'para-1' })).body.data.list;
    const record = annotationRecord(stored[1].responseData);
    expect(record).toMatchObject({ annotationId, used: true, method: 'embedding', model: 'sim-embed-384' });
    expect(record.score).toBeGreaterThanOrEqual(0.75);
    expect(record.score).toBeLessThan(1);
    expect(stored[1].value[0].text.content).toBe(ANSWER);

    // Below the similarity: the chat runs as before (search and the model), the closest annotation recorded unused.
    from = Date.now();
    const other = await askWithKey(appId, 'What colour is the sky on Mars at noon?');
    expect(other.body.choices[0].message.content).not.toBe(ANSWER);
    expect(annotationRecord(other.body.responseData)).toMatchObject({ annotationId, used: false });
    expect(annotationRecord(other.body.responseData).score).toBeLessThan(0.75);
    expect(other.body.responseData.map((r: any) => r.moduleType)).toEqual(['annotationReply', 'datasetSearchNode', 'chatNode']);
    // One embeddings call for the annotation match (its vector is kept now), the search's own, and the chat.
    expect((await f.gatewayLogs(from)).map((l) => l.model)).toEqual(['sim-embed-384', 'sim-embed-384', 'sim-chat']);

    // Two answers given: the list counts them.
    const listed = (await call(`/api/core/app/annotation/list?appId=${appId}`)).body.data.list.find((a: any) => a.id === annotationId);
    expect(listed.hitCount).toBe(2);
  });

  it('matches after a restart without embedding the annotations again', async () => {
    await f.restart();
    const from = Date.now();
    const r = await askWithKey(appId, 'how can I reset my password please');
    expect(r.body.choices[0].message.content).toBe(ANSWER);
    // Only the question is embedded: the annotation's vector was kept in the store.
    expect((await f.gatewayLogs(from)).map((l) => l.model)).toEqual(['sim-embed-384']);
  });

  it('makes the vectors of a large import in the background, answering by words meanwhile', async () => {
    const bigApp = (
      await call('/api/core/app/create', { name: 'Big', model: 'sim-chat', datasets: (await call(`/api/core/app/detail?appId=${appId}`)).body.data.datasets })
    ).body.data;
    await call('/api/core/app/update', { appId: bigApp, annotationReply: { enabled: true, similarity: 0.75 } }, { method: 'PUT' });
    const rows = Array.from({ length: 300 }, (_, i) => `"Where is locker ${i} of hall ${i % 7}?","Locker ${i} is in hall ${i % 7}."`);
    expect((await call('/api/core/app/annotation/import', { appId: bigApp, csv: rows.join('\n') })).body.data.created).toBe(300);
    const first = await askWithKey(bigApp, 'where can I find locker 42 of hall 0');
    expect(annotationRecord(first.body.responseData)).toMatchObject({ method: 'words', error: expect.stringMatching(/vectors are being made \(300 to go\)/) });
    // Once made (five embeddings calls, in the background), a paraphrase is compared by meaning.
    await expect
      .poll(async () => annotationRecord((await askWithKey(bigApp, 'where can I find locker 42 of hall 0')).body.responseData).method, { timeout: 15_000 })
      .toBe('embedding');
  });

  it('matches by words where the app has no vector model, and an edit is matched at once', async () => {
    await call('/api/core/app/update', { appId: plainAppId, annotationReply: { enabled: true, similarity: 0.6 } }, { method: 'PUT' });
    const id = (await call('/api/core/app/annotation/create', { appId: plainAppId, question: 'What is the refund policy for shoes?', answer: 'Thirty days.' }))
      .body.data;
    let from = Date.now();
    const byKey = await askWithKey(plainAppId, 'refund policy for shoes, what is it');
    expect(byKey.body.choices[0].message.content).toBe('Thirty days.');
    expect(annotationRecord(byKey.body.responseData)).toMatchObject({ annotationId: id, method: 'words', used: true });
    expect(await f.gatewayLogs(from)).toEqual([]);
    // The question changed: the old wording no longer matches; the new one does.
    await call('/api/core/app/annotation/update', { id, question: 'Can I return boots?' }, { method: 'PUT' });
    from = Date.now();
    const old = await askWithKey(plainAppId, 'refund policy for shoes, what is it');
    expect(old.body.choices[0].message.content).not.toBe('Thirty days.');
    expect((await f.gatewayLogs(from)).map((l) => l.model)).toEqual(['sim-chat']);
    expect((await askWithKey(plainAppId, 'can I return boots')).body.choices[0].message.content).toBe('Thirty days.');
  });

  it("corrects a stored answer, shown with it to the team and never to a share link's visitor", async () => {
    const visitor = { shareId, outLinkUid: 'visitor-ann' };
    const asked = await call(
      '/api/v1/chat/completions',
      { ...visitor, chatId: 'v-ann', responseChatItemId: 'v-answer', messages: [{ role: 'user', content: 'Which plans include phone support?' }] },
      { key: null },
    );
    expect(asked.status, asked.text).toBe(200);
    const made = await call('/api/core/app/annotation/create', {
      appId,
      question: 'Which plans include phone support?',
      answer: 'Business and Enterprise.',
      chatId: 'v-ann',
      dataId: 'v-answer',
    });
    expect(made.status, made.text).toBe(200);
    const team = (await call('/api/core/chat/getPaginationRecords', { appId, chatId: 'v-ann' })).body.data.list;
    expect(team[1].annotation).toEqual({ id: made.body.data, question: 'Which plans include phone support?', answer: 'Business and Enterprise.' });
    const seen = await call('/api/core/chat/getPaginationRecords', { ...visitor, chatId: 'v-ann' }, { key: null });
    expect(seen.status).toBe(200);
    expect(seen.body.data.list[1].annotation).toBeUndefined();
    expect(seen.text).not.toContain('Business and Enterprise');
    // The visitor's next question is answered from it (the team's correction), and still reads no annotation.
    const again = await call(
      '/api/v1/chat/completions',
      { ...visitor, chatId: 'v-ann-2', messages: [{ role: 'user', content: 'which plans include phone support' }] },
      {
        key: null,
      },
    );
    expect(again.body.choices[0].message.content).toBe('Business and Enterprise.');
    expect((await call(`/api/core/app/annotation/list?appId=${appId}&shareId=${shareId}`, undefined, { key: null })).status).toBe(401);
    // Another team cannot link an annotation to this team's answer.
    const foreign = await call(
      '/api/core/app/annotation/create',
      { appId, question: 'x', answer: 'y', chatId: 'v-ann', dataId: 'v-answer' },
      { key: OTHER_TEAM_KEY },
    );
    expect(foreign.status).toBe(404);
  });

  it('imports question,answer rows from CSV, naming those left out, and exports them for a spreadsheet', async () => {
    const csvApp = (await call('/api/core/app/create', { name: 'CSV', model: 'sim-chat' })).body.data;
    await call('/api/core/app/annotation/create', { appId: csvApp, question: 'Already here?', answer: 'Yes.' });
    const csv = [
      'question,answer',
      '"What is the VAT number?","DE123456789"',
      'Already here?,duplicate',
      ',no question',
      '"Formula?","=HYPERLINK(""http://evil.example"",""click"")"',
      '"Multi-line?","first line',
      'second line"',
      '"What is the VAT number?","again"',
    ].join('\n');
    const imported = await call('/api/core/app/annotation/import', { appId: csvApp, csv });
    expect(imported.status, imported.text).toBe(200);
    expect(imported.body.data.created).toBe(3);
    expect(imported.body.data.skipped).toEqual([
      { row: 3, reason: 'the application already has this question' },
      { row: 4, reason: 'the question is empty' },
      { row: 7, reason: 'the application already has this question' },
    ]);
    const exported = await call(`/api/core/app/annotation/export?appId=${csvApp}`);
    expect(exported.status).toBe(200);
    expect(exported.headers.get('content-type')).toMatch(/^text\/csv/);
    expect(exported.headers.get('content-disposition')).toMatch(/^attachment; filename="annotations-/);
    expect(exported.text.charCodeAt(0)).toBe(0xfeff);
    const lines = exported.text.slice(1).split('\r\n');
    expect(lines[0]).toBe('"question","answer"');
    expect(lines[1]).toBe('"Already here?","Yes."');
    expect(lines[2]).toBe('"What is the VAT number?","DE123456789"');
    // A formula is written as text (apostrophe first), and reads back as it was written.
    expect(lines[3]).toBe('"Formula?","\'=HYPERLINK(""http://evil.example"",""click"")"');
    const copy = (await call('/api/core/app/create', { name: 'CSV copy', model: 'sim-chat' })).body.data;
    expect((await call('/api/core/app/annotation/import', { appId: copy, csv: exported.text })).body.data).toEqual({ created: 4, skipped: [] });
    const formula = (await call(`/api/core/app/annotation/list?appId=${copy}&searchText=formula`)).body.data.list[0];
    expect(formula.answer).toBe('=HYPERLINK("http://evil.example","click")');
    const multi = (await call(`/api/core/app/annotation/list?appId=${copy}&searchText=multi`)).body.data.list[0];
    expect(multi.answer).toBe('first line\nsecond line');
    expect((await call('/api/core/app/annotation/import', { appId: copy, csv: '' })).body.message).toMatch(/'csv'/);
  });
});
