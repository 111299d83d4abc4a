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
    const rootBalance = async () => ((await adminGet('/api/users')).data as { username: string; balance: number }[]).find((u) => u.username === 'root')!.balance;

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
