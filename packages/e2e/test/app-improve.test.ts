// Improving an application's answers, in Chromium against a real platform on
// a real gateway in front of the upstream simulator (it answers "Echo: …"):
// the chat log filtered (source, feedback, days, text) with its export following the filters,
// a chat opened and one answer improved into an annotation shown on it; the
// annotations page lists it, turns annotation reply on, and the same question
// asked through the API is then answered with the annotation word for word
// (marked "From annotation" in the log); a CSV import with a skipped row, an
// edit and a delete; the figures page with its totals and charts.
// Screenshots: /tmp/app-improve-*.png and test-output/web/app-improve-*.png.
import { copyFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { noBrowser, openPage, sideScroll } from './browser.js';
import { asPage } from './chat-fixtures.js';
import { SHOTS } from './kbchat-start.js';
import { signInRoot, simPlatformSuite } from './sim-platform.js';

const QUESTION = 'Which pier does the ferry to Lantern Island leave from?';
const OTHER = 'What time does the harbour bell ring?';
const BETTER = 'The Lantern Island ferry leaves from pier 4, every hour on the hour.';
const POLL = { timeout: 10_000 };

/** A full-page screenshot, kept where the brief's reviewer and the project's test output both look. */
async function shot(page: Page, name: string): Promise<void> {
  const path = `/tmp/app-improve-${name}.png`;
  await page.screenshot({ path, fullPage: true });
  copyFileSync(path, join(SHOTS, `app-improve-${name}.png`));
}

interface Completion {
  choices: { message: { content: string } }[];
  responseData: { moduleType: string; used?: boolean; annotationId?: string }[];
}

if (noBrowser) console.warn(`[skip] the answer-improving browser tests: ${noBrowser}`);

describe.skipIf(Boolean(noBrowser))("improving an application's answers, in Chromium", () => {
  const suite = simPlatformSuite({ simModels: 'sim-chat', config: { llmModels: [{ model: 'sim-chat' }], vectorModels: [] } });

  it('filters the chat log, improves an answer into an annotation that then answers, imports annotations and shows the figures', async () => {
    const { context, page, errors } = await openPage(suite.browser, { locale: 'en-US', viewport: { width: 1280, height: 900 } });
    await signInRoot(page, suite.p.url);
    const call = await asPage(page, suite.p.url);
    const appId = await call<string>('/api/core/app/create', { name: 'Harbour desk', model: 'sim-chat' });
    const me = (await (await page.request.get(`${suite.p.url}/api/auth/me`)).json()) as { data: { csrfToken: string } };
    /** A question through the chat API with the session, as a script of the team's would ask it. */
    const ask = async (content: string, chatId: string): Promise<Completion> => {
      const res = await page.request.post(`${suite.p.url}/api/v1/chat/completions?appId=${appId}`, {
        headers: { 'x-csrf-token': me.data.csrfToken, 'content-type': 'application/json' },
        data: JSON.stringify({ chatId, stream: false, detail: true, messages: [{ role: 'user', content }] }),
      });
      expect(res.status(), await res.text()).toBe(200);
      return (await res.json()) as Completion;
    };

    // One chat in the web app, one more through the API.
    await page.goto(`${suite.p.url}/chat?appId=${appId}`);
    await page.getByRole('textbox', { name: 'Message' }).fill(QUESTION);
    await page.getByRole('button', { name: 'Send' }).click();
    await expect.poll(() => page.getByTestId('answer').last().textContent(), POLL).toMatch(/^Echo: which pier/i);
    await page.getByRole('button', { name: 'Send' }).waitFor();
    const first = (await ask(OTHER, 'bell-chat')).choices[0]!.message.content;
    expect(first).toMatch(/^Echo: what time/i);

    // The bell chat's answer judged helpful, as a reader of it would.
    const bell = await call<{ list: { dataId: string; obj: string }[] }>('/api/core/chat/getPaginationRecords', { appId, chatId: 'bell-chat' });
    const bellAnswer = bell.list.find((i) => i.obj === 'AI')!.dataId;
    await call('/api/core/chat/feedback/updateUserFeedback', { appId, chatId: 'bell-chat', dataId: bellAnswer, userGoodFeedback: 'yes' });

    // The chat log, from the settings page's link: both chats, then filtered.
    await page.goto(`${suite.p.url}/apps/${appId}`);
    await page.getByRole('link', { name: 'Chat log' }).click();
    await page.getByRole('heading', { name: 'Chat log' }).waitFor();
    const rows = page.getByRole('row');
    const ferryRow = rows.filter({ hasText: QUESTION });
    const bellRow = rows.filter({ hasText: OTHER });
    await ferryRow.waitFor();
    await bellRow.waitFor();
    await page.getByLabel('From', { exact: true }).selectOption({ label: 'API' });
    await page.getByText('No chat matches these filters.').waitFor();
    expect(await ferryRow.count()).toBe(0);
    await page.getByLabel('From', { exact: true }).selectOption({ label: 'web app' });
    await ferryRow.waitFor();
    await page.getByLabel('Feedback', { exact: true }).selectOption({ label: 'Judged helpful' });
    await expect.poll(() => ferryRow.count(), POLL).toBe(0);
    expect(await bellRow.count()).toBe(1);
    // Opened, the chat shows the feedback its answer got.
    await bellRow.getByRole('button', { name: OTHER }).click();
    await page.locator('.log-transcript').getByText('Judged helpful', { exact: true }).waitFor();
    await bellRow.getByRole('button', { name: OTHER }).click();
    await page.getByLabel('Feedback', { exact: true }).selectOption({ label: 'All chats' });
    await ferryRow.waitFor();
    // Days in the reader's calendar: none of the chats is from tomorrow, both are from today.
    const day = (offset: number) =>
      page.evaluate((ms) => {
        const d = new Date(Date.now() + ms);
        return `${d.getFullYear()}-${String(d.getMonth() + 1).padStart(2, '0')}-${String(d.getDate()).padStart(2, '0')}`;
      }, offset * 86_400_000);
    await page.getByLabel('From date').fill(await day(1));
    await page.getByText('No chat matches these filters.').waitFor();
    await page.getByLabel('From date').fill(await day(0));
    await page.getByLabel('To date').fill(await day(0));
    await ferryRow.waitFor();
    expect(await bellRow.count()).toBe(1);
    await page.getByLabel('Search the chats').fill('lantern island');
    await expect.poll(() => bellRow.count(), POLL).toBe(0);
    expect(await ferryRow.count()).toBe(1);
    await page.getByText('1 chat', { exact: true }).waitFor();
    // The export selects what the list shows: its link carries the filters.
    const csvHref = await page.getByRole('link', { name: 'Export CSV' }).getAttribute('href');
    expect(csvHref).toContain('searchText=lantern+island');
    expect(csvHref).toMatch(/dateStart=\d+&dateEnd=\d+/);
    const csv = await (await page.request.get(`${suite.p.url}${csvHref}`)).text();
    expect(csv).toContain(QUESTION);
    expect(csv).not.toContain(OTHER);
    const jsonl = await (await page.request.get(`${suite.p.url}${await page.getByRole('link', { name: 'Export JSON Lines' }).getAttribute('href')}`)).text();
    expect(
      jsonl
        .trim()
        .split('\n')
        .map((l) => (JSON.parse(l) as { role: string }).role),
    ).toEqual(['user', 'assistant']);
    await shot(page, 'log-filtered');

    // Opened: the answer improved, saved as an annotation tied to it, and shown on it.
    await ferryRow.getByRole('button', { name: QUESTION }).click();
    const transcript = page.locator('.log-transcript');
    await transcript.getByTestId('answer').waitFor();
    expect(await transcript.getByText('Annotated', { exact: true }).count()).toBe(0);
    await transcript.getByRole('button', { name: 'Improve this answer' }).click();
    const improve = page.getByRole('form', { name: 'Improve this answer' });
    expect(await improve.getByLabel('Question').inputValue()).toBe(QUESTION);
    expect(await improve.getByLabel('Answer').inputValue()).toMatch(/^Echo: which pier/i);
    await shot(page, 'improve-form');
    await improve.getByLabel('Answer').fill(BETTER);
    await improve.getByRole('button', { name: 'Save' }).click();
    await transcript.getByText('Annotated', { exact: true }).waitFor();
    await transcript.getByText(BETTER).waitFor();
    await expect.poll(() => improve.count(), POLL).toBe(0);
    expect(await transcript.getByRole('button', { name: 'Edit the annotation' }).count()).toBe(1);
    await shot(page, 'annotated');

    // The annotations page lists it, tied to the chat; annotation reply goes on.
    await page.getByRole('link', { name: 'Annotations' }).click();
    await page.getByRole('heading', { name: 'Annotations' }).waitFor();
    const ferryNote = page.getByRole('article', { name: QUESTION });
    await ferryNote.getByText(BETTER).waitFor();
    expect(await ferryNote.textContent()).toContain('from a chat');
    const reply = page.getByRole('form', { name: 'Annotation reply' });
    expect(await reply.getByLabel('Answer from annotations').isChecked()).toBe(false);
    expect(await reply.getByLabel('Minimum similarity').inputValue()).toBe('0.9');
    await reply.getByLabel('Answer from annotations').check();
    await reply.getByRole('button', { name: 'Save' }).click();
    await reply.getByRole('status').filter({ hasText: 'Saved.' }).waitFor();
    const detail = await call<{ annotationReply: { enabled: boolean; similarity: number } }>(`/api/core/app/detail?appId=${appId}`);
    expect(detail.annotationReply).toEqual({ enabled: true, similarity: 0.9 });

    // The same question through the API: the annotation's answer, word for word.
    const again = await ask(QUESTION, 'ferry-again');
    expect(again.choices[0]!.message.content).toBe(BETTER);
    expect(again.responseData.find((r) => r.moduleType === 'annotationReply')).toMatchObject({ used: true });
    await page.reload();
    await expect.poll(() => ferryNote.textContent(), POLL).toContain('Answered 1 time');

    // A CSV: one row made, one left out with its reason; then edited and deleted in place.
    await page.getByLabel('Import from CSV').setInputFiles({
      name: 'desk.csv',
      mimeType: 'text/csv',
      buffer: Buffer.from('question,answer\n"How long is the crossing?","About 40 minutes, weather permitting."\n"Is there a café on board?",\n'),
    });
    const imported = page.getByRole('status').filter({ hasText: 'Imported' });
    await imported.waitFor();
    expect(await imported.textContent()).toContain('Imported 1 annotation; 1 row skipped.');
    expect(await imported.getByRole('listitem').allTextContents()).toEqual([expect.stringMatching(/^Row 3: ./)]);
    const crossing = page.getByRole('article', { name: 'How long is the crossing?' });
    await crossing.getByText('About 40 minutes, weather permitting.').waitFor();
    await page.getByText('2 annotations', { exact: true }).waitFor();
    await shot(page, 'annotations');
    await crossing.getByRole('button', { name: 'Edit “How long is the crossing?”' }).click();
    const edit = page.getByRole('form', { name: 'Edit “How long is the crossing?”' });
    await edit.getByLabel('Answer').fill('About 35 minutes.');
    await edit.getByRole('button', { name: 'Save' }).click();
    await crossing.getByText('About 35 minutes.').waitFor();
    await page.getByLabel('Search the annotations').fill('crossing');
    await expect.poll(() => ferryNote.count(), POLL).toBe(0);
    await crossing.getByRole('button', { name: 'Delete “How long is the crossing?”' }).click();
    await crossing.getByRole('button', { name: 'Yes, delete' }).click();
    await page.getByText('No annotation matches.').waitFor();
    const exported = await (await page.request.get(`${suite.p.url}${await page.getByRole('link', { name: 'Export CSV' }).getAttribute('href')}`)).text();
    expect(exported).toContain(BETTER);
    expect(exported).not.toContain('crossing');

    // The log marks the answer that came from the annotation.
    await page.getByRole('link', { name: 'Chat log' }).click();
    const fromApi = page.getByRole('row').filter({ hasText: QUESTION }).first();
    await fromApi.getByRole('button', { name: QUESTION }).click();
    await page.locator('.log-transcript').getByText('From annotation', { exact: true }).waitFor();
    expect(await page.locator('.log-transcript').getByTestId('answer').textContent()).toContain(BETTER);

    // The figures: three questions, one answered from the annotation, and the charts drawn.
    await page.getByRole('link', { name: 'Figures' }).click();
    await page.getByRole('heading', { name: 'Figures' }).waitFor();
    const tile = (key: string) => page.getByTestId(key).locator('.dash-value');
    await expect.poll(() => tile('stats.questions').textContent(), POLL).toBe('3');
    expect(await tile('stats.annotationAnswers').textContent()).toBe('1');
    await expect.poll(() => page.locator('.chart canvas').count(), POLL).toBe(5);
    await page.getByLabel('Per', { exact: true }).selectOption('hour');
    await expect.poll(() => page.getByTestId('stats-covers').textContent(), POLL).toContain('per hour');
    expect(await tile('stats.questions').textContent()).toBe('3');
    await shot(page, 'stats');

    // At phone width the log's filters wrap: the page does not scroll sideways.
    await page.setViewportSize({ width: 375, height: 740 });
    await page.getByRole('link', { name: 'Chat log' }).click();
    await page.getByLabel('Search the chats').waitFor();
    expect(await sideScroll(page)).toBeLessThanOrEqual(0);
    await shot(page, 'log-phone');
    expect(errors).toEqual([]);
    await context.close();
  }, 120_000);
});
