// The signed-in chat page in Chromium against `kbchat start` (local-embed,
// local-extractive): a question sent with Enter streams its answer (Stop
// shows while it does), the answer cites its quote and the citation opens it
// on hover and on focus, the steps show the search with its scores, copy,
// feedback, regenerate, the chat's variables kept with it, and the chat list
// (new chat, open an old one, delete, server-side pages); Stop keeping a
// partial answer, a platform error in place, phone width, dark, a page
// translator. Screenshots: test-output/web/chat-*.png.
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { noBrowser, openPage, sideScroll } from './browser.js';
import { appWithKnowledge, asPage, holdChatStreams, lighthouseApp } from './chat-fixtures.js';
import { browserSuite, SHOTS, signIn } from './kbchat-start.js';
import { TRANSLATED_MARK as T, translateLikeChrome } from './page-translator.js';

if (noBrowser) console.warn(`[skip] the chat page browser tests: ${noBrowser}`);

describe.skipIf(Boolean(noBrowser))('the chat page', () => {
  const suite = browserSuite('chat');

  it('streams a cited answer, shows its quote and steps, regenerates, and keeps the chat', async () => {
    const { context, page, errors } = await openPage(suite.browser, {
      locale: 'en-US',
      viewport: { width: 1280, height: 900 },
      permissions: ['clipboard-read', 'clipboard-write'],
    });
    suite.onFail = page;
    await signIn(page, suite.k.url);
    const call = await asPage(page, suite.k.url);
    const { appId } = await appWithKnowledge(call);

    await page.goto(`${suite.k.url}/chat?appId=${appId}`);
    await page.getByRole('heading', { name: 'Lighthouse desk' }).waitFor();
    await page.getByText('Ask a question to begin.').waitFor();
    // The prompt's {{visitor}} is asked for.
    await page.getByLabel('visitor').fill('a sailor');

    // Enter sends; Shift+Enter is a new line in the question.
    const message = page.getByRole('textbox', { name: 'Message' });
    await message.fill('Who painted');
    await message.press('Shift+Enter');
    await message.pressSequentially('the lighthouse tower teal?');
    expect(await message.inputValue()).toBe('Who painted\nthe lighthouse tower teal?');
    await message.press('Enter');
    await page.getByRole('button', { name: 'Stop' }).waitFor();
    const answer = page.getByTestId('answer').last();
    await expect.poll(() => answer.textContent(), { timeout: 20_000 }).toContain('Marguerite Okonkwo');
    await page.getByRole('button', { name: 'Send' }).waitFor();
    expect(await page.getByRole('button', { name: 'Stop' }).count()).toBe(0);
    expect(await message.inputValue()).toBe('');
    // The chat's id is in the address once its first turn is stored.
    await expect.poll(() => new URL(page.url()).searchParams.get('chatId')).toMatch(/^[0-9a-f]{24}$/);
    const chatId = new URL(page.url()).searchParams.get('chatId');

    // The citation opens its quote on hover, and on keyboard focus.
    const cite = answer.getByRole('button', { name: 'Source 1' });
    await cite.hover();
    const popover = page.getByRole('dialog', { name: 'Source 1' });
    await popover.waitFor();
    expect(await popover.textContent()).toContain('keeper.md');
    expect(await popover.textContent()).toContain('Okonkwo');
    expect(await popover.textContent()).toMatch(/meaning 0\.\d{3} #1/);
    await page.screenshot({ path: join(SHOTS, 'chat-citation.png') });
    await page.mouse.move(5, 5);
    await popover.waitFor({ state: 'detached' });
    await cite.focus();
    await popover.waitFor();
    await page.keyboard.press('Escape');
    await popover.waitFor({ state: 'detached' });

    // The steps: the search with its mode, threshold, budget and scores, and the model call.
    // (A tap opens the quote; focus moving out of the answer closes it.)
    await cite.click();
    await popover.waitFor();
    await answer.getByRole('button', { name: 'Steps' }).click();
    await popover.waitFor({ state: 'detached' });
    const steps = answer.locator('.steps');
    await steps.waitFor();
    const stepsText = (await steps.textContent()) ?? '';
    expect(stepsText).toContain('Knowledge search');
    expect(stepsText).toMatch(/mode meaning \+ keywords, similarity ≥ 0, token budget 3000/);
    expect(stepsText).toMatch(/keeper\.md.*meaning 0\.\d{3} #1/);
    expect(stepsText).toMatch(/Model calllocal-extractive.*\d+ tokens in, \d+ out/);
    await page.screenshot({ path: join(SHOTS, 'chat-steps.png'), fullPage: true });
    await answer.getByRole('button', { name: 'Steps' }).click();
    await steps.waitFor({ state: 'detached' });

    // Copy.
    await answer.getByRole('button', { name: 'Copy' }).click();
    expect(await page.evaluate(() => navigator.clipboard.readText())).toContain('Marguerite Okonkwo');
    await answer.getByRole('button', { name: 'Copied' }).waitFor();

    // Feedback: stored where the platform has the route; its own message in place where it has not yet.
    const feedbackRoute = await call('/api/core/chat/feedback/updateUserFeedback', { appId, chatId, dataId: 'probe' }).then(
      () => true,
      (e: Error) => !/POST \/api\/core\/chat\/feedback\/updateUserFeedback not found/.test(e.message),
    );
    await answer.getByRole('button', { name: 'Helpful', exact: true }).click();
    if (feedbackRoute) await expect.poll(() => answer.getByRole('button', { name: 'Helpful', exact: true }).getAttribute('aria-pressed')).toBe('true');
    else await expect.poll(() => answer.getByRole('alert').textContent()).toContain('updateUserFeedback not found');

    await page.screenshot({ path: join(SHOTS, 'chat-desktop.png') });
    await page.emulateMedia({ colorScheme: 'dark' });
    await page.screenshot({ path: join(SHOTS, 'chat-dark.png') });
    await page.emulateMedia({ colorScheme: 'light' });

    // Regenerate: the last answer is asked again and replaces the old one, here and in the stored chat.
    await answer.getByRole('button', { name: 'Regenerate' }).click();
    await page.getByRole('button', { name: 'Stop' }).waitFor();
    await page.getByRole('button', { name: 'Send' }).waitFor({ timeout: 20_000 });
    await expect.poll(() => page.getByTestId('answer').count()).toBe(1);
    expect(await page.getByTestId('answer').last().textContent()).toContain('Okonkwo');
    const stored = await call<{ list: { obj: string }[] }>('/api/core/chat/getPaginationRecords', { appId, chatId });
    expect(stored.list.map((i) => i.obj)).toEqual(['Human', 'AI']);

    // The chat is in the list and opens again after a reload.
    const history = page.getByRole('complementary', { name: 'Chats' });
    await expect.poll(() => history.getByRole('listitem').count()).toBe(1);
    await page.reload();
    await expect.poll(() => page.getByTestId('answer').count()).toBe(1);
    expect(await page.locator('.msg.user').count()).toBe(1);
    // The chat's variables are stored with it: the form shows them again.
    expect(await page.getByLabel('visitor').inputValue()).toBe('a sailor');
    expect(await page.getByTestId('answer').getByRole('button', { name: 'Source 1' }).count()).toBe(1);

    // New chat: empty, a new id; a second chat comes first in the list (newest first).
    await page.getByRole('button', { name: 'New chat' }).click();
    await expect.poll(() => page.getByTestId('answer').count()).toBe(0);
    await expect.poll(() => new URL(page.url()).searchParams.get('chatId')).not.toBe(chatId);
    await message.fill('When does the harbour master ring the bell?');
    await message.press('Enter');
    await expect.poll(() => page.getByTestId('answer').last().textContent(), { timeout: 20_000 }).toContain('noon');
    await expect.poll(() => history.getByRole('listitem').count()).toBe(2);
    expect(await history.getByRole('listitem').first().textContent()).toContain('When does the harbour');

    // Open the old chat from the list, then delete it.
    await history.getByRole('button', { name: /^Who painted/ }).click();
    await expect.poll(() => new URL(page.url()).searchParams.get('chatId')).toBe(chatId);
    await expect.poll(() => page.getByTestId('answer').textContent()).toContain('Okonkwo');
    page.once('dialog', (d) => void d.accept());
    await history.getByRole('button', { name: /^Delete chat Who painted/ }).click();
    await expect.poll(() => history.getByRole('listitem').count()).toBe(1);
    expect(await history.textContent()).not.toContain('Who painted');
    await expect.poll(() => page.getByTestId('answer').count()).toBe(0);
    expect(errors).toEqual([]);
    await context.close();
  }, 120_000);

  it('stops an answer, shows the platform error in place, and fits a phone, light and dark', async () => {
    const { context, page, errors } = await openPage(suite.browser, { locale: 'en-US', viewport: { width: 375, height: 740 } });
    suite.onFail = page;
    await signIn(page, suite.k.url);
    const call = await asPage(page, suite.k.url);
    const appId = await lighthouseApp(call);

    // The chat list is behind a toggle at this width.
    await page.goto(`${suite.k.url}/chat?appId=${appId}`);
    const history = page.getByRole('complementary', { name: 'Chats' });
    await page.getByRole('heading', { name: 'Lighthouse desk' }).waitFor();
    expect(await history.isVisible()).toBe(false);
    await page.getByRole('button', { name: 'Chats' }).click();
    await history.waitFor({ state: 'visible' });
    await page.getByRole('button', { name: 'Chats' }).click();
    await history.waitFor({ state: 'hidden' });

    // A real answer at phone width.
    const message = page.getByRole('textbox', { name: 'Message' });
    await message.fill('Who painted the lighthouse tower teal?');
    await page.getByRole('button', { name: 'Send' }).click();
    await expect.poll(() => page.getByTestId('answer').last().textContent(), { timeout: 20_000 }).toContain('Okonkwo');
    await page.getByTestId('answer').last().getByRole('button', { name: 'Source 1' }).click();
    await page.getByRole('dialog', { name: 'Source 1' }).waitFor();
    const overflow = () => sideScroll(page);
    expect(await overflow()).toBeLessThanOrEqual(0);
    await page.screenshot({ path: join(SHOTS, 'chat-375.png'), fullPage: true });

    // Stop while the answer streams: what came stays, marked stopped.
    await holdChatStreams(page);
    await page.reload();
    await page.evaluate(() => ((window as unknown as { holdChat: boolean }).holdChat = true));
    await message.fill('hello');
    await message.press('Enter');
    await page.locator('.streaming').getByText('Partial answer').waitFor();
    await page.getByRole('button', { name: 'Stop' }).click();
    await page.getByRole('button', { name: 'Send' }).waitFor();
    const stopped = page.getByTestId('answer').last();
    expect(await stopped.textContent()).toContain('Partial answer');
    expect(await stopped.textContent()).toContain('Stopped');
    expect(await stopped.getByRole('alert').count()).toBe(0);
    // Regenerating the stopped answer (never stored) leaves the stored turn before it alone.
    const chatId = new URL(page.url()).searchParams.get('chatId');
    await stopped.getByRole('button', { name: 'Regenerate' }).click();
    await page.getByRole('button', { name: 'Stop' }).click();
    await page.getByRole('button', { name: 'Send' }).waitFor();
    const stored = await call<{ list: { obj: string; value: { text: { content: string } }[] }[] }>('/api/core/chat/getPaginationRecords', { appId, chatId });
    expect(stored.list.map((i) => i.obj)).toEqual(['Human', 'AI']);
    expect(stored.list[0]!.value[0]!.text.content).toBe('Who painted the lighthouse tower teal?');
    expect(await page.getByTestId('answer').count()).toBe(2);
    await page.evaluate(() => ((window as unknown as { holdChat: boolean }).holdChat = false));

    // The platform's own error, with its request id.
    await page.route('**/api/v1/chat/completions**', (route) =>
      route.fulfill({
        status: 502,
        headers: { 'content-type': 'application/json', 'x-request-id': 'req-123' },
        body: JSON.stringify({ code: 502, message: 'Connection error: the gateway is down' }),
      }),
    );
    await message.fill('again');
    await message.press('Enter');
    const alert = page.getByTestId('answer').last().getByRole('alert');
    await expect.poll(() => alert.textContent()).toContain('Connection error: the gateway is down');
    expect(await alert.textContent()).toContain('request id req-123');
    expect(await overflow()).toBeLessThanOrEqual(0);
    await page.emulateMedia({ colorScheme: 'dark' });
    await page.screenshot({ path: join(SHOTS, 'chat-phone-dark.png'), fullPage: true });
    expect(errors).toEqual([]);
    await context.close();
  }, 60_000);

  it('keeps working under a page translator: streaming, steps, stop, a new chat, the language switched', async () => {
    const { context, page, errors } = await openPage(suite.browser, { locale: 'en-US', viewport: { width: 1280, height: 900 } });
    suite.onFail = page;
    await signIn(page, suite.k.url);
    const call = await asPage(page, suite.k.url);
    const appId = await lighthouseApp(call);
    await translateLikeChrome(page);
    await holdChatStreams(page);
    await page.goto(`${suite.k.url}/chat?appId=${appId}`);
    await page.getByRole('heading', { name: `${T}Lighthouse desk` }).waitFor();

    const message = page.getByRole('textbox', { name: 'Message' });
    for (const question of ['Who painted the lighthouse tower teal?', 'When does the harbour master ring the bell?']) {
      await message.fill(question);
      await message.press('Enter');
      await page.getByRole('button', { name: `${T}Send` }).waitFor({ timeout: 20_000 });
    }
    await expect.poll(() => page.getByTestId('answer').count()).toBe(2);
    expect(await page.getByTestId('answer').first().textContent()).toContain('Okonkwo');
    expect(await page.getByTestId('answer').last().textContent()).toContain('noon');
    await page
      .getByTestId('answer')
      .last()
      .getByRole('button', { name: `${T}Steps` })
      .click();
    await page.getByText(`${T}Knowledge search`).waitFor();
    await page
      .getByTestId('answer')
      .last()
      .getByRole('button', { name: `${T}Steps` })
      .click();
    await page
      .getByTestId('answer')
      .last()
      .getByRole('button', { name: `${T}Regenerate` })
      .click();
    // At once: the old answer goes and Stop shows (nothing can be sent meanwhile).
    await page.getByRole('button', { name: `${T}Stop` }).waitFor();
    await page.getByRole('button', { name: `${T}Send` }).waitFor({ timeout: 20_000 });
    await expect.poll(() => page.getByTestId('answer').last().textContent()).toContain('noon');
    expect(await page.getByTestId('answer').count()).toBe(2);
    await page.evaluate(() => ((window as unknown as { holdChat: boolean }).holdChat = true));
    await message.fill('hello');
    await message.press('Enter');
    await page
      .locator('.streaming')
      .getByText(/Partial answer/)
      .waitFor();
    await page.getByRole('button', { name: `${T}Stop` }).click();
    await page.getByTestId('answer').last().getByText(`${T}Stopped`).waitFor();
    expect(await page.getByTestId('answer').count()).toBe(3);

    // The language switched while translated: the chat's own text follows.
    await page.getByRole('button', { name: `${T}中文` }).click();
    await page.getByRole('button', { name: `${T}新对话` }).click();
    await page.getByText(`${T}提一个问题开始吧。`).waitFor();
    await page.getByRole('button', { name: `${T}English` }).click();
    await page.getByText(`${T}Ask a question to begin.`).waitFor();
    expect(errors).toEqual([]);
    await context.close();
  }, 90_000);

  it('pages the chat list on the server, newest first', async () => {
    const { context, page, errors } = await openPage(suite.browser, { locale: 'en-US', viewport: { width: 1280, height: 900 } });
    suite.onFail = page;
    await signIn(page, suite.k.url);
    const call = await asPage(page, suite.k.url);
    const appId = await call<string>('/api/core/app/create', { name: 'Paging desk', model: 'local-extractive' });
    for (let i = 1; i <= 32; i++) {
      await call(`/api/v1/chat/completions?appId=${appId}`, { chatId: `paging-${i}`, messages: [{ role: 'user', content: `Question number ${i}` }] });
    }
    await page.goto(`${suite.k.url}/chat?appId=${appId}`);
    const history = page.getByRole('complementary', { name: 'Chats' });
    await expect.poll(() => history.getByRole('listitem').count()).toBe(30);
    expect(await history.getByRole('listitem').first().textContent()).toContain('Question number 32');
    expect(await history.getByText('Page 1 of 2').count()).toBe(1);
    await history.getByRole('button', { name: 'Next' }).click();
    await expect.poll(() => history.getByRole('listitem').allTextContents()).toEqual(['Question number 2×', 'Question number 1×']);
    await page.screenshot({ path: join(SHOTS, 'chat-history-pages.png') });
    // Deleting the last chats of page 2 goes back to page 1.
    for (const n of [2, 1]) {
      page.once('dialog', (d) => void d.accept());
      await history.getByRole('button', { name: `Delete chat Question number ${n}`, exact: true }).click();
      await expect.poll(() => history.getByText(`Question number ${n}`, { exact: true }).count()).toBe(0);
    }
    await expect.poll(() => history.getByRole('listitem').count()).toBe(30);
    expect(await history.getByRole('button', { name: 'Next' }).count()).toBe(0);
    expect(errors).toEqual([]);
    await context.close();
  }, 90_000);
});
