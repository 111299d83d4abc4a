// An application's share links in Chromium against `kbchat start`: made on the
// app's Share links page with a per-visitor limit, its public address opened in
// a fresh browser (no sign-in) where a visitor chats, its last use shown to the
// team (its chat log has the visitor's chat, not its own chat page), and, once deleted, the public page saying so instead of going blank.
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { noBrowser, openPage } from './browser.js';
import { browserSuite, SHOTS, signIn } from './kbchat-start.js';

if (noBrowser) console.warn(`[skip] share links browser tests: ${noBrowser}`);

describe.skipIf(Boolean(noBrowser))('share links in Chromium', () => {
  const suite = browserSuite('share-links');

  it('makes a link whose public page chats without sign-in, and stops it when deleted', async () => {
    const { context, page, errors } = await openPage(suite.browser, {
      viewport: { width: 1280, height: 900 },
      permissions: ['clipboard-read', 'clipboard-write'],
    });
    await signIn(page, suite.k.url);
    const me = (await (await page.request.get(`${suite.k.url}/api/auth/me`)).json()) as { data: { csrfToken: string } };
    const made = await page.request.post(`${suite.k.url}/api/core/app/create`, {
      headers: { 'x-csrf-token': me.data.csrfToken, 'content-type': 'application/json' },
      data: JSON.stringify({ name: 'Public desk / 公开 %E0', intro: 'Ask us anything', model: 'local-extractive' }),
    });
    const appId = ((await made.json()) as { data: string }).data;

    await page.goto(`${suite.k.url}/apps/${appId}`);
    await page.getByRole('link', { name: 'Share links' }).click();
    await page.getByRole('heading', { name: 'Share links' }).waitFor();
    await page.getByText('No share links yet.').waitFor();
    await page.getByLabel('Link name').fill('Website widget');
    await page.getByLabel(/Requests per minute/).fill('30');
    await page.getByRole('button', { name: 'Create share link' }).click();
    const row = page.getByRole('row').filter({ hasText: 'Website widget' });
    await row.waitFor();
    expect(await row.textContent()).toContain('30 per minute per visitor');
    expect(await row.textContent()).toContain('never');
    await row.getByRole('button', { name: 'Copy' }).click();
    const address = await page.evaluate(() => navigator.clipboard.readText());
    expect(address).toMatch(new RegExp(`^${suite.k.url}/chat/share\\?shareId=[\\w-]{24,}$`));
    await page.screenshot({ path: join(SHOTS, 'share-links.png'), fullPage: true });

    // A visitor in a fresh browser: no cookie, no sign-in.
    const visitor = await suite.browser.newContext({ viewport: { width: 375, height: 740 } });
    const pub = await visitor.newPage();
    pub.on('pageerror', (e) => errors.push(e.message));
    await pub.goto(address);
    await pub.getByRole('heading', { name: 'Public desk / 公开 %E0' }).waitFor();
    await pub.getByText('Ask us anything').waitFor();
    await pub.getByRole('textbox', { name: 'Message' }).fill('Are you open today?');
    await pub.getByRole('button', { name: 'Send' }).click();
    await pub.getByRole('button', { name: 'Send' }).waitFor();
    await expect.poll(() => pub.locator('[data-testid="answer"], .msg.assistant').count()).toBeGreaterThan(0);
    await pub.screenshot({ path: join(SHOTS, 'share-page-phone.png'), fullPage: true });

    // The team sees that it was used; its own chat page lists its own chats, not the visitor's.
    await page.reload();
    await expect.poll(() => row.textContent()).not.toContain('never');
    await page.goto(`${suite.k.url}/chat?appId=${appId}`);
    await page.getByText('No chats yet.').waitFor();
    // The chat log has it, from the share link, and opens it read-only.
    await page.goto(`${suite.k.url}/apps/${appId}`);
    await page.getByRole('link', { name: 'Chat log' }).click();
    const logRow = page.getByRole('row').filter({ hasText: 'Are you open today?' });
    await logRow.waitFor();
    expect(await logRow.textContent()).toContain('share link');
    expect(await logRow.textContent()).toContain('0 helpful, 0 not');
    await logRow.getByRole('button', { name: 'Are you open today?' }).click();
    await page.locator('.log-transcript').getByText('I could not find an answer').waitFor();
    await page.screenshot({ path: join(SHOTS, 'apps-chat-log.png'), fullPage: true });
    await page.goto(`${suite.k.url}/apps/${appId}/share`);

    // Deleted: the public page says so at once.
    await row.getByRole('button', { name: 'Delete “Website widget”' }).click();
    await row.getByRole('button', { name: 'Yes, delete' }).click();
    await page.getByText('No share links yet.').waitFor();
    await pub.reload();
    await expect.poll(() => pub.getByRole('alert').first().textContent()).toContain('share link not found');
    await pub.screenshot({ path: join(SHOTS, 'share-page-deleted.png'), fullPage: true });
    expect(errors).toEqual([]);
    await visitor.close();
    await context.close();
  }, 90_000);
});
