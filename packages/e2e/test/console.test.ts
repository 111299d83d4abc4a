// The gateway's console in Chromium against the real `kbchat gateway` (its own
// process, embedded store, the simulator as provider): root signs in with the cookie login
// (the session never reaches the page's script), sees the initial balance of
// 200, sets it to 150 and adds 25 and subtracts 5, each read back from the
// gateway's API; a wrong password says so in place; phone width, dark mode,
// Chinese and a page translator. Screenshots: test-output/web/console-*.png.
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { noBrowser, openPage, sideScroll } from './browser.js';
import { CONSOLE_ROOT_PASSWORD, consoleSuite, openConsole } from './console-suite.js';
import { SHOTS } from './kbchat-start.js';
import { TRANSLATED_MARK, translateLikeChrome } from './page-translator.js';

if (noBrowser) console.warn(`[skip] gateway console browser tests: ${noBrowser}`);

describe.skipIf(Boolean(noBrowser))('the gateway console in Chromium', () => {
  const suite = consoleSuite('console');
  const adminGet = (path: string) => suite.api(path);

  it("signs root in with a cookie, and edits root's balance: set, add, subtract, each read back from the API", async () => {
    const { context, page, errors } = await openPage(suite.browser, { locale: 'en-US', viewport: { width: 1280, height: 900 } });
    suite.onFail = page;
    await page.goto(`${suite.url}/users`);
    await page.getByLabel('Username').fill('root');
    await page.getByLabel('Password').fill('not-the-password');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('alert').waitFor();
    expect(await page.getByRole('alert').textContent()).toMatch(/password/i);

    await page.getByLabel('Password').fill(CONSOLE_ROOT_PASSWORD);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { name: 'Users' }).waitFor();
    expect(new URL(page.url()).pathname).toBe('/users');
    // The session is in an httpOnly cookie: the page's script cannot read it.
    const cookies = await context.cookies(suite.url);
    const session = cookies.find((c) => c.name === 'kbchat_gateway_session');
    expect(session).toMatchObject({ httpOnly: true, sameSite: 'Lax' });
    expect(await page.evaluate(() => document.cookie)).not.toContain('kbchat_gateway_session');

    const rootRow = page.getByRole('row').filter({ hasText: 'root' });
    expect(await rootRow.getByTestId('balance').textContent()).toBe('200');
    await page.screenshot({ path: join(SHOTS, 'console-users.png'), fullPage: true });

    const edit = async (mode: 'Set to' | 'Add' | 'Subtract', amount: string) => {
      await page.getByRole('button', { name: 'Edit balance of root' }).click();
      const form = page.getByRole('form', { name: 'Balance of root' });
      await form.getByLabel('How').selectOption({ label: mode });
      await form.getByLabel('Amount (units)').fill(amount);
      await form.getByRole('button', { name: 'Save' }).click();
      await page.getByRole('status').waitFor();
    };
    const rootBalance = async () =>
      ((await adminGet('/api/users')).data as { username: string; balance: number }[]).find((u) => u.username === 'root')!.balance;

    await edit('Set to', '150');
    expect(await page.getByRole('status').textContent()).toBe('Saved: the gateway now holds 150 for root.');
    await expect.poll(() => rootRow.getByTestId('balance').textContent()).toBe('150');
    expect(await rootBalance()).toBe(150);
    await edit('Add', '25.5');
    await expect.poll(() => rootRow.getByTestId('balance').textContent()).toBe('175.5');
    expect(await rootBalance()).toBe(175.5);
    await edit('Subtract', '5.5');
    await expect.poll(() => rootRow.getByTestId('balance').textContent()).toBe('170');
    expect(await rootBalance()).toBe(170);
    await page.screenshot({ path: join(SHOTS, 'console-balance-saved.png'), fullPage: true });

    // A bad amount is refused in place and changes nothing.
    await page.getByRole('button', { name: 'Edit balance of root' }).click();
    await page.getByLabel('Amount (units)').fill('lots');
    await page.getByRole('button', { name: 'Save' }).click();
    await page.getByText('Enter a number of units (0 or more).').waitFor();
    expect(await rootBalance()).toBe(170);

    // A reload keeps the session; signing out ends it.
    await page.reload();
    await page.getByRole('heading', { name: 'Users' }).waitFor();
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByRole('button', { name: 'Sign in' }).waitFor();
    await page.reload();
    await page.getByRole('button', { name: 'Sign in' }).waitFor();
    expect(errors).toEqual([]);
    await context.close();
  }, 60_000);

  it("disables and re-enables a user and makes it an admin, each read back from the API; on a phone each user's actions are in view", async () => {
    const created = await suite.api('/api/users', { json: { username: 'erin', password: 'erin-password', balance: 3 } });
    const erin = () => suite.api(`/api/users/${created.id}`);
    const { context, page, errors } = await openConsole(suite, { locale: 'en-US', viewport: { width: 1280, height: 900 } });
    await page.goto(`${suite.url}/users`);
    await page.getByRole('button', { name: 'Disable erin' }).click();
    await page.getByRole('button', { name: 'Enable erin' }).waitFor();
    expect((await erin()).status).toBe('disabled');
    // A disabled user cannot sign in.
    const login = await fetch(`${suite.url}/api/auth/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ username: 'erin', password: 'erin-password' }),
    });
    expect(login.status).toBeGreaterThanOrEqual(400);
    await page.getByRole('button', { name: 'Enable erin' }).click();
    await page.getByRole('button', { name: 'Disable erin' }).waitFor();
    expect((await erin()).status).toBe('enabled');

    // The role button names its user: root's own row has none.
    await page.getByRole('button', { name: 'Make erin an admin' }).click();
    await page.getByRole('button', { name: 'Make erin a plain user' }).waitFor();
    expect((await erin()).role).toBe('admin');
    const erinRow = page.getByRole('row').filter({ hasText: 'erin' });
    expect(await erinRow.textContent()).toContain('admin');
    expect(await page.getByRole('button', { name: /^Make root/ }).count()).toBe(0);
    await page.getByRole('button', { name: 'Make erin a plain user' }).click();
    await page.getByRole('button', { name: 'Make erin an admin' }).waitFor();
    expect((await erin()).role).toBe('user');

    // A phone: the page does not scroll sideways, and erin's actions lie inside the viewport (a card, not a cell off to the right).
    await page.setViewportSize({ width: 375, height: 780 });
    expect(await sideScroll(page)).toBeLessThanOrEqual(0);
    for (const name of ['Edit balance of erin', 'Disable erin', 'Make erin an admin']) {
      const box = (await page.getByRole('button', { name }).boundingBox())!;
      expect(box.x).toBeGreaterThanOrEqual(0);
      expect(box.x + box.width).toBeLessThanOrEqual(375);
    }
    expect(await page.locator('.users-table').evaluate((el) => el.scrollWidth - el.clientWidth)).toBeLessThanOrEqual(0);
    await page.screenshot({ path: join(SHOTS, 'console-users-phone.png'), fullPage: true });
    await page.getByRole('button', { name: 'Disable erin' }).click();
    await page.getByRole('button', { name: 'Enable erin' }).waitFor();
    expect((await erin()).status).toBe('disabled');
    expect(errors).toEqual([]);
    await context.close();
  }, 60_000);

  it('fits a phone in dark mode, in Chinese, under a page translator', async () => {
    const { context, page, errors } = await openConsole(suite, { locale: 'en-US', viewport: { width: 375, height: 780 }, colorScheme: 'dark' });
    await page.goto(`${suite.url}/users`);
    await page.getByRole('heading', { name: 'Users' }).waitFor();
    expect(await sideScroll(page)).toBeLessThanOrEqual(0);
    await page.screenshot({ path: join(SHOTS, 'console-phone-dark.png'), fullPage: true });
    await page.getByRole('button', { name: '中文' }).click();
    await page.getByRole('heading', { name: '用户' }).waitFor();
    await translateLikeChrome(page);
    await page.reload();
    // The translator rewrote the text; the page still works: its heading is the translated text, the editor opens.
    await page.getByRole('heading', { name: `${TRANSLATED_MARK}用户` }).waitFor();
    await page.getByRole('button', { name: '编辑 root 的余额' }).click();
    await page.getByRole('form', { name: 'root 的余额' }).waitFor();
    await page.screenshot({ path: join(SHOTS, 'console-phone-zh.png'), fullPage: true });
    expect(errors).toEqual([]);
    await context.close();
  }, 60_000);
});
