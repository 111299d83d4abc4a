// The public share page in Chromium against `kbchat start`: a real share
// link chatted on by two visitors (each sees only their own chats, feedback
// kept, a signed-in owner is a visitor there too), a deleted or expired link
// saying so, an unknown link's message from the platform, and the wire
// contract (a visitor id per browser, no cookie or CSRF token).
// Screenshots: test-output/web/share-*.png and chat-share-*.png.
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { noBrowser, openPage } from './browser.js';
import { asPage, lighthouseApp } from './chat-fixtures.js';
import { browserSuite, SHOTS, signIn } from './kbchat-start.js';

if (noBrowser) console.warn(`[skip] the share page browser tests: ${noBrowser}`);

describe.skipIf(Boolean(noBrowser))('the share page', () => {
  const suite = browserSuite('share');

  it('chats on a real share link: each visitor sees only their own chats, feedback is kept, a signed-in owner is a visitor there, a deleted link says so', async () => {
    const ownerContext = await suite.browser.newContext({ locale: 'en-US', viewport: { width: 1280, height: 900 } });
    const owner = await ownerContext.newPage();
    await signIn(owner, suite.k.url);
    const call = await asPage(owner, suite.k.url);
    const appId = await lighthouseApp(call);
    const shareId = await call<string>('/api/support/outLink/create', { appId, type: 'share', name: 'Front desk' });
    const visit = async () => {
      const { context, page, errors } = await openPage(suite.browser, { locale: 'en-US', viewport: { width: 1280, height: 900 } });
      await page.goto(`${suite.k.url}/chat/share?shareId=${encodeURIComponent(shareId)}`);
      await page.getByRole('heading', { name: 'Lighthouse desk' }).waitFor();
      return { context, page, errors, history: page.getByRole('complementary', { name: 'Chats' }) };
    };
    const a = await visit();
    suite.onFail = a.page;
    await a.page.getByLabel('visitor').fill('a sailor');
    const message = a.page.getByRole('textbox', { name: 'Message' });
    await message.fill('Who painted the lighthouse tower teal?');
    await message.press('Enter');
    const answer = a.page.getByTestId('answer');
    await expect.poll(() => answer.textContent(), { timeout: 20_000 }).toContain('Okonkwo');
    await answer.getByRole('button', { name: 'Source 1' }).hover();
    expect(await a.page.getByRole('dialog', { name: 'Source 1' }).textContent()).toContain('keeper.md');
    await expect.poll(() => a.history.getByRole('listitem').count()).toBe(1);
    await a.page.screenshot({ path: join(SHOTS, 'chat-share-real.png') });
    // The visitor's feedback is kept on the answer.
    await answer.getByRole('button', { name: 'Helpful', exact: true }).click();
    await expect.poll(() => answer.getByRole('button', { name: 'Helpful', exact: true }).getAttribute('aria-pressed')).toBe('true');

    // Another visitor (another suite.browser) sees none of it; the first still has it after a reload.
    const b = await visit();
    await b.history.getByText('No chats yet.').waitFor();
    // In Chinese, the page's own strings (the shell's and the chat's, all its entry loads) switch too.
    await b.page.getByRole('button', { name: '中文' }).click();
    await b.page.getByText('还没有对话。').waitFor();
    await b.page.getByRole('button', { name: '发送' }).waitFor();
    await b.page.getByRole('button', { name: 'English' }).click();
    await b.history.getByText('No chats yet.').waitFor();
    await a.page.reload();
    await a.history.getByRole('button', { name: /^Who painted/ }).click();
    await expect.poll(() => a.page.getByTestId('answer').textContent()).toContain('Okonkwo');
    expect(await a.page.getByTestId('answer').getByRole('button', { name: 'Helpful', exact: true }).getAttribute('aria-pressed')).toBe('true');
    a.page.once('dialog', (d) => void d.accept());
    await a.history.getByRole('button', { name: /^Delete chat Who painted/ }).click();
    await expect.poll(() => a.history.getByRole('listitem').count()).toBe(0);

    // The owner, signed in in this suite.browser, opens the link too: a visitor like any other (no cookie sent).
    const cookies: (string | undefined)[] = [];
    owner.on('request', async (r) => {
      if (r.url().includes('/api/v1/chat/completions') || r.url().includes('/api/core/chat/')) cookies.push((await r.allHeaders()).cookie);
    });
    await owner.goto(`${suite.k.url}/chat/share?shareId=${encodeURIComponent(shareId)}`);
    await owner.getByRole('textbox', { name: 'Message' }).fill('When does the harbour master ring the bell?');
    await owner.getByRole('textbox', { name: 'Message' }).press('Enter');
    await expect.poll(() => owner.getByTestId('answer').textContent(), { timeout: 20_000 }).toContain('noon');
    await expect.poll(() => owner.getByRole('complementary', { name: 'Chats' }).getByRole('listitem').count()).toBe(1);
    expect(cookies.length).toBeGreaterThan(1);
    expect(cookies.filter(Boolean)).toEqual([]);

    // A deleted link: the page says so, in place of the chat.
    const links = await call<{ id: string; shareId: string }[]>(`/api/support/outLink/list?appId=${appId}`);
    await call(`/api/support/outLink/delete?id=${links.find((l) => l.shareId === shareId)!.id}`, undefined, 'DELETE');
    await b.page.reload();
    await expect.poll(() => b.page.getByRole('alert').textContent()).toContain('share link not found');
    // An expired link: the platform's own message (403).
    const expiring = await call<string>('/api/support/outLink/create', { appId, name: 'Brief', limit: { expiredTime: Date.now() + 1500 } });
    await new Promise((r) => setTimeout(r, 1600));
    const refused = await b.page.request.get(`${suite.k.url}/api/support/outLink/init?shareId=${encodeURIComponent(expiring)}`);
    expect(refused.status()).toBe(403);
    await b.page.goto(`${suite.k.url}/chat/share?shareId=${encodeURIComponent(expiring)}`);
    await expect.poll(() => b.page.getByRole('alert').textContent()).toContain(((await refused.json()) as { message: string }).message);
    expect([...a.errors, ...b.errors]).toEqual([]);
    await a.context.close();
    await b.context.close();
    await ownerContext.close();
  }, 90_000);

  it("shows an unknown share link's message from the platform, not a blank page", async () => {
    const { context, page, errors } = await openPage(suite.browser, { locale: 'en-US', viewport: { width: 1280, height: 800 } });
    suite.onFail = page;
    const platform = await page.request.get(`${suite.k.url}/api/support/outLink/init?shareId=no-such-link`);
    expect(platform.status()).toBe(404);
    const { message } = (await platform.json()) as { message: string };
    await page.goto(`${suite.k.url}/chat/share?shareId=no-such-link`);
    const alert = page.getByRole('alert');
    await alert.waitFor();
    expect(await alert.textContent()).toContain(message);
    await page.screenshot({ path: join(SHOTS, 'chat-share-unknown.png') });
    // Nothing of the signed-in app came with it.
    expect(await page.getByRole('navigation', { name: 'main' }).count()).toBe(0);
    await page.goto(`${suite.k.url}/chat/share`);
    await page.getByText('This address has no share id.').waitFor();
    expect(errors).toEqual([]);
    await context.close();
  });

  it('chats on a share page as the contract says: its own visitor id per suite.browser, no cookie or CSRF token', async () => {
    // The platform's share routes, as the contract gives them (the backend is built beside this page).
    const sent: { body: Record<string, unknown>; headers: Record<string, string> }[] = [];
    const listed: Record<string, unknown>[] = [];
    const visitor = async (colorScheme: 'light' | 'dark') => {
      const context = await suite.browser.newContext({ locale: 'en-US', viewport: { width: 1280, height: 800 }, colorScheme });
      const page = await context.newPage();
      await page.route('**/api/support/outLink/init?**', (route) =>
        route.fulfill({ json: { code: 200, data: { app: { name: 'Harbour help', intro: 'Ask about the harbour.', variables: ['ship'] } } } }),
      );
      await page.route('**/api/core/chat/getHistories', (route) => {
        listed.push(route.request().postDataJSON());
        return route.fulfill({ json: { code: 200, data: { list: [], total: 0 } } });
      });
      await page.route('**/api/v1/chat/completions?**', (route) => {
        sent.push({ body: route.request().postDataJSON(), headers: route.request().headers() });
        const quote = {
          id: 'q1',
          q: 'The harbour master rings the bell at noon.',
          a: '',
          sourceName: 'harbour.md',
          score: [{ type: 'embedding', value: 0.71, index: 0 }],
        };
        const body = [
          'event: flowNodeStatus\ndata: {"status":"running","name":"Dataset search"}\n\n',
          'event: answer\ndata: {"choices":[{"delta":{"content":"At noon [1]."}}]}\n\n',
          'event: answer\ndata: [DONE]\n\n',
          `event: flowResponses\ndata: ${JSON.stringify([{ moduleName: 'Dataset search', moduleType: 'datasetSearchNode', runningTime: 0.1, quoteList: [quote] }])}\n\n`,
        ].join('');
        return route.fulfill({ status: 200, headers: { 'content-type': 'text/event-stream' }, body });
      });
      const errors: string[] = [];
      page.on('pageerror', (e) => errors.push(e.message));
      await page.goto(`${suite.k.url}/chat/share?shareId=${encodeURIComponent('sh/1 %')}`);
      await page.getByRole('heading', { name: 'Harbour help' }).waitFor();
      await page.getByText('Ask about the harbour.').waitFor();
      await page.getByLabel('ship').fill('Sea Lark');
      const message = page.getByRole('textbox', { name: 'Message' });
      await message.fill('When is the bell rung?');
      await message.press('Enter');
      const answer = page.getByTestId('answer');
      await expect.poll(() => answer.textContent()).toContain('At noon');
      await answer.getByRole('button', { name: 'Source 1' }).hover();
      expect(await page.getByRole('dialog', { name: 'Source 1' }).textContent()).toContain('harbour.md');
      const uid = await page.evaluate(() => localStorage.getItem('kbchat.outLinkUid.sh/1 %'));
      expect(errors).toEqual([]);
      return { context, page, uid };
    };

    const first = await visitor('light');
    await first.page.screenshot({ path: join(SHOTS, 'chat-share.png') });
    const second = await visitor('dark');
    await second.page.screenshot({ path: join(SHOTS, 'chat-share-dark.png') });
    expect(first.uid).toMatch(/^visitor-[0-9a-f]{24}$/);
    expect(second.uid).toMatch(/^visitor-[0-9a-f]{24}$/);
    expect(second.uid).not.toBe(first.uid);
    expect(sent.map((s) => s.body.outLinkUid)).toEqual([first.uid, second.uid]);
    for (const { body, headers } of sent) {
      expect(body).toMatchObject({
        shareId: 'sh/1 %',
        stream: true,
        detail: true,
        messages: [{ role: 'user', content: 'When is the bell rung?' }],
        variables: { ship: 'Sea Lark' },
      });
      expect(body.chatId).toMatch(/^[0-9a-f]{24}$/);
      expect(headers['x-csrf-token']).toBeUndefined();
    }
    expect(listed.every((b) => b.shareId === 'sh/1 %' && (b.outLinkUid === first.uid || b.outLinkUid === second.uid))).toBe(true);
    expect(listed.some((b) => b.outLinkUid === second.uid)).toBe(true);
    await first.context.close();
    await second.context.close();
  });
});
