// A chat that never loses a question, in Chromium against a real platform on
// a real gateway in front of the upstream simulator, whose answers take a few
// seconds (a word every 80 ms): reloading the page while an answer is being
// made reopens the chat, says the answer is still being made and shows it
// when it is done (chat page, share page, test pane); double-clicking Send
// neither stops nor sends twice; Stop keeps what was made, stored as
// stopped with its question; the view follows a long question to its answer.
// Screenshots: test-output/web/durable-*.png.
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { noBrowser, openPage } from './browser.js';
import { asPage, type Call } from './chat-fixtures.js';
import { SHOTS } from './kbchat-start.js';
import { signInRoot, simPlatformSuite } from './sim-platform.js';

const WORDS = 50;
const DELAY_MS = 80;

/** Waits until the answer being streamed has at least `n` words. */
async function untilWords(page: Page, n: number): Promise<void> {
  await expect.poll(async () => ((await page.locator('.msg.assistant.streaming').textContent()) ?? '').split(/\s+/).length).toBeGreaterThanOrEqual(n);
}

interface Item {
  obj: 'Human' | 'AI';
  value: { text: { content: string } }[];
  status: string;
}

if (noBrowser) console.warn(`[skip] the durable chat browser tests: ${noBrowser}`);

describe.skipIf(Boolean(noBrowser))('a chat that never loses a question, in Chromium', () => {
  const suite = simPlatformSuite({
    simModels: 'sim-chat',
    config: { llmModels: [{ model: 'sim-chat' }], vectorModels: [] },
    sim: { tokens: WORDS, tokenDelayMs: DELAY_MS },
  });

  const stored = (call: Call, appId: string, chatId: string) =>
    call<{ list: Item[] }>('/api/core/chat/getPaginationRecords', { appId, chatId }).then((r) => r.list);
  const text = (i: Item | undefined) => i?.value.map((v) => v.text.content).join('') ?? '';
  const chatIdOf = (page: Page) => new URL(page.url()).searchParams.get('chatId');

  async function signedIn(viewport = { width: 1366, height: 900 }) {
    const opened = await openPage(suite.browser, { locale: 'en-US', viewport });
    await signInRoot(opened.page, suite.p.url);
    const call = await asPage(opened.page, suite.p.url);
    return { ...opened, call };
  }

  it('reopens a chat reloaded while its answer is being made: the question is there, then the answer when it is done', async () => {
    const { context, page, errors, call } = await signedIn();
    const appId = await call<string>('/api/core/app/create', { name: 'Slow desk', model: 'sim-chat', intro: 'Ask the slow desk anything.' });
    await page.goto(`${suite.p.url}/chat?appId=${appId}`);
    // The signed-in chat page shows the application's introduction, as the share page does.
    await page.getByText('Ask the slow desk anything.').waitFor();
    await page.getByRole('textbox', { name: 'Message' }).fill('Which way to the lighthouse?');
    await page.getByRole('button', { name: 'Send' }).click();
    const answer = page.locator('.msg.assistant.streaming');
    await expect.poll(() => answer.textContent()).toMatch(/Echo: which/);
    // The chat is named in the address as soon as the platform has the question.
    const chatId = chatIdOf(page);
    expect(chatId).toMatch(/^[0-9a-f]{24}$/);

    await page.reload();
    // The question and the answer still being made.
    await page.locator('.msg.user', { hasText: 'Which way to the lighthouse?' }).waitFor();
    await page.getByRole('status').filter({ hasText: 'Still being answered' }).waitFor();
    await page.getByRole('complementary', { name: 'Chats' }).getByRole('button', { name: 'Which way to the lighthouse?', exact: true }).waitFor();
    await page.screenshot({ path: join(SHOTS, 'durable-reloaded.png') });
    // Send waits for it; Stop would stop it.
    expect(await page.getByRole('button', { name: 'Stop' }).count()).toBe(1);
    // The whole answer, once it is done, without another reload.
    await expect
      .poll(() => page.getByTestId('answer').last().textContent(), { timeout: WORDS * DELAY_MS + 10_000 })
      .toMatch(/Echo: which way to the lighthouse( which way to the lighthouse)+/);
    await page.getByRole('button', { name: 'Send' }).waitFor();
    expect(await page.getByRole('status').filter({ hasText: 'Still being answered' }).count()).toBe(0);
    const items = await stored(call, appId, chatId!);
    expect(items.map((i) => [i.obj, i.status])).toEqual([
      ['Human', 'done'],
      ['AI', 'done'],
    ]);
    expect(text(items[1]).split(' ').length).toBeGreaterThanOrEqual(WORDS - 1);
    // And in the application's chat log.
    const logs = await call<{ list: { chatId: string; messageCount: number }[] }>('/api/core/app/getChatLogs', { appId });
    expect(logs.list.find((c) => c.chatId === chatId)?.messageCount).toBe(2);
    await page.screenshot({ path: join(SHOTS, 'durable-finished.png') });
    expect(errors).toEqual([]);
    await context.close();
  });

  it('takes a double click on Send as one send: the answer is neither stopped nor asked twice', async () => {
    const { context, page, errors, call } = await signedIn();
    const appId = await call<string>('/api/core/app/create', { name: 'Double desk', model: 'sim-chat' });
    await page.goto(`${suite.p.url}/chat?appId=${appId}`);
    await page.getByRole('textbox', { name: 'Message' }).fill('Is the bell rung at noon?');
    await page.getByRole('button', { name: 'Send' }).dblclick();
    // Stop stands where Send was, disabled for a moment (a click then belongs to the Send), then ready.
    const stop = page.getByRole('button', { name: 'Stop' });
    expect(await stop.isDisabled()).toBe(true);
    await expect.poll(() => stop.isEnabled()).toBe(true);
    await page.getByRole('button', { name: 'Send' }).waitFor({ timeout: WORDS * DELAY_MS + 10_000 });
    const answer = page.getByTestId('answer').last();
    expect(await answer.textContent()).toMatch(/Echo: is the bell rung at noon( is the bell rung at noon)+/);
    expect(await answer.getByText('Stopped').count()).toBe(0);
    expect(await page.locator('.msg.user').count()).toBe(1);
    const items = await stored(call, appId, chatIdOf(page)!);
    expect(items.map((i) => [i.obj, i.status])).toEqual([
      ['Human', 'done'],
      ['AI', 'done'],
    ]);
    expect(errors).toEqual([]);
    await context.close();
  });

  it('keeps a stopped answer with its question, as stopped, here and after a reload', async () => {
    const { context, page, errors, call } = await signedIn();
    const appId = await call<string>('/api/core/app/create', { name: 'Stop desk', model: 'sim-chat' });
    await page.goto(`${suite.p.url}/chat?appId=${appId}`);
    await page.getByRole('textbox', { name: 'Message' }).fill('Tell me about the harbour');
    await page.getByRole('button', { name: 'Send' }).click();
    await expect.poll(() => page.locator('.msg.assistant.streaming').textContent()).toMatch(/Echo: tell/);
    await untilWords(page, 8); // a part of the answer, then Stop
    await page.getByRole('button', { name: 'Stop' }).click();
    const answer = page.getByTestId('answer').last();
    await answer.getByText('Stopped').waitFor();
    const shown = (await answer.locator('.markdown').textContent()) ?? '';
    expect(shown).toMatch(/^Echo: tell/);
    const items = await stored(call, appId, chatIdOf(page)!);
    expect(items.map((i) => [i.obj, i.status])).toEqual([
      ['Human', 'done'],
      ['AI', 'stopped'],
    ]);
    expect(text(items[0])).toBe('Tell me about the harbour');
    // What was stored is what was made before the stop: far less than the whole answer.
    expect(text(items[1]).split(' ').length).toBeLessThan(WORDS / 2);
    await page.reload();
    await page.getByTestId('answer').last().getByText('Stopped').waitFor();
    expect(await page.locator('.msg.user').textContent()).toBe('Tell me about the harbour');
    expect(errors).toEqual([]);
    await context.close();
  });

  it('follows a long question to its answer, in the test pane, and reopens the test chat after a reload', async () => {
    const { context, page, errors, call } = await signedIn();
    const appId = await call<string>('/api/core/app/create', { name: 'Pane desk', model: 'sim-chat' });
    await page.goto(`${suite.p.url}/apps/${appId}`);
    const pane = page.locator('.ap-test-pane');
    const question = Array.from({ length: 40 }, (_, i) => `Line ${i + 1} of a long question about the harbour.`).join('\n');
    await pane.getByRole('textbox', { name: 'Message' }).fill(question);
    await pane.getByRole('button', { name: 'Send' }).click();
    const streaming = pane.locator('.msg.assistant.streaming');
    await expect.poll(() => streaming.textContent()).toMatch(/Echo: line 1/);
    // The answer is in view: inside the chat's scroll area, below the long question, and in the window.
    const inView = () =>
      pane.locator('.chat-messages').evaluate((list) => {
        const answer = list.querySelector('.msg.assistant:last-child');
        if (!answer) return false;
        const a = answer.getBoundingClientRect();
        const l = list.getBoundingClientRect();
        return a.top >= l.top - 1 && a.top + 20 < l.bottom && a.top >= 0 && a.top + 20 < window.innerHeight;
      });
    await expect.poll(inView).toBe(true);
    await page.screenshot({ path: join(SHOTS, 'durable-long-question.png') });

    await page.reload();
    await pane.locator('.msg.user', { hasText: 'Line 40 of a long question' }).waitFor();
    await expect.poll(() => pane.getByTestId('answer').last().textContent(), { timeout: WORDS * DELAY_MS + 10_000 }).toMatch(/Echo: line 1/);
    await pane.getByRole('button', { name: 'Send' }).waitFor({ timeout: WORDS * DELAY_MS + 10_000 });
    await expect.poll(inView).toBe(true);
    // New chat starts another, which a reload then keeps empty.
    await pane.getByRole('button', { name: 'New chat' }).click();
    await pane.getByText('Ask a question to begin.').waitFor();
    await page.reload();
    await pane.getByText('Ask a question to begin.').waitFor();
    expect(errors).toEqual([]);
    await context.close();
  });

  it("reopens a share link's chat reloaded while its answer is being made, at phone width", async () => {
    const { context: admin, call } = await signedIn();
    const appId = await call<string>('/api/core/app/create', { name: 'Shared slow desk', model: 'sim-chat' });
    const shareId = await call<string>('/api/support/outLink/create', { appId, type: 'share', name: 'Front desk' });
    await admin.close();
    const { context, page, errors } = await openPage(suite.browser, { locale: 'en-US', viewport: { width: 375, height: 812 } });
    await page.goto(`${suite.p.url}/chat/share?shareId=${encodeURIComponent(shareId)}`);
    await page.getByRole('textbox', { name: 'Message' }).fill('Where is the ferry?');
    await page.getByRole('button', { name: 'Send' }).click();
    await expect.poll(() => page.locator('.msg.assistant.streaming').textContent()).toMatch(/Echo: where/);
    expect(chatIdOf(page)).toMatch(/^[0-9a-f]{24}$/);
    await page.reload();
    await page.locator('.msg.user', { hasText: 'Where is the ferry?' }).waitFor();
    await page.getByRole('status').filter({ hasText: 'Still being answered' }).waitFor();
    await page.screenshot({ path: join(SHOTS, 'durable-share-phone.png') });
    await expect
      .poll(() => page.getByTestId('answer').last().textContent(), { timeout: WORDS * DELAY_MS + 10_000 })
      .toMatch(/Echo: where is the ferry( where is the ferry)+/);
    // The visitor stops the next one: kept, as stopped.
    await page.getByRole('textbox', { name: 'Message' }).fill('And the last boat?');
    await page.getByRole('button', { name: 'Send' }).click();
    await expect.poll(() => page.locator('.msg.assistant.streaming').textContent()).toMatch(/Echo: and/);
    await untilWords(page, 8);
    await page.getByRole('button', { name: 'Stop' }).click();
    await page.getByTestId('answer').last().getByText('Stopped').waitFor();
    await page.reload();
    await page.getByTestId('answer').last().getByText('Stopped').waitFor();
    expect(await page.locator('.msg.user').allTextContents()).toEqual(['Where is the ferry?', 'And the last boat?']);
    expect(errors).toEqual([]);
    await context.close();
  });
});
