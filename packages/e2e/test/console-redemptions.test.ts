// The console's top-up codes in Chromium against the real `kbchat gateway`:
// root makes two codes on the page (shown once) and copies one; a plain user
// redeems it beside their balance and sees the balance grow; the same code
// again is refused; root's list shows it redeemed by that user; root disables
// the other code and the user's try is refused. Each step is checked against
// the admin API. Screenshots: console-codes-*.png.
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { noBrowser, openPage, sideScroll } from './browser.js';
import { consoleSuite, signInToConsole } from './console-suite.js';
import { SHOTS } from './kbchat-start.js';

if (noBrowser) console.warn(`[skip] console top-up codes browser tests: ${noBrowser}`);

/** The gateway's refusal (it adds the request's id after it). */
const REFUSED = "Invalid 'key': this code does not exist, was already used, or was disabled";
/** A code as the list shows it (the gateway's key hint). */
const hintOf = (key: string) => `${key.slice(0, 3)}...${key.slice(-4)}`;

describe.skipIf(Boolean(noBrowser))('the console: top-up codes', () => {
  const suite = consoleSuite('console-codes');

  it('root makes codes shown once; a plain user redeems one once; a disabled code is refused', async () => {
    const carol = await suite.api('/api/users', { json: { username: 'carol', password: 'carol-password', balance: 1 } });

    const admin = await openPage(suite.browser, {
      locale: 'en-US',
      viewport: { width: 1280, height: 900 },
      permissions: ['clipboard-read', 'clipboard-write'],
    });
    suite.onFail = admin.page;
    await signInToConsole(admin.page, suite.url);
    await admin.page.getByRole('navigation', { name: 'main' }).getByRole('link', { name: 'Top-up codes' }).click();
    await admin.page.getByRole('heading', { name: 'Top-up codes' }).waitFor();
    await admin.page.getByText('No top-up codes yet.').waitFor();

    const form = admin.page.getByRole('form', { name: 'New top-up codes' });
    await form.getByLabel('Name').fill('launch');
    await form.getByLabel('Amount per code (units)').fill('2.5');
    await form.getByLabel('How many (1 to 100)').fill('2');
    await form.getByRole('button', { name: 'Create codes' }).click();
    const shown = admin.page.getByTestId('new-code');
    await expect.poll(() => shown.count(), { timeout: 10_000 }).toBe(2);
    const [first, second] = (await shown.allTextContents()) as [string, string];
    expect(first).toMatch(/^kbr-/);
    expect(second).toMatch(/^kbr-/);
    expect(await admin.page.getByRole('status').textContent()).toContain('they will not be shown again');
    // The list is read again: both codes, by their hints only.
    const rowOf = (key: string) => admin.page.getByRole('row').filter({ hasText: hintOf(key) });
    await rowOf(first).waitFor();
    await rowOf(second).waitFor();
    expect(await admin.page.getByRole('table').textContent()).not.toContain(first);
    expect(await rowOf(first).getByTestId('code-status').textContent()).toBe('unused');
    const listed = (await suite.api('/api/redemptions')).data as Array<{ id: number; key_hint: string; status: string; quota: number }>;
    expect(listed.map((c) => [c.key_hint, c.status, c.quota]).sort()).toEqual(
      [
        [hintOf(first), 'unused', 2.5],
        [hintOf(second), 'unused', 2.5],
      ].sort(),
    );

    await admin.page.getByRole('listitem').filter({ hasText: first }).getByRole('button', { name: 'Copy' }).click();
    await expect.poll(() => admin.page.evaluate(() => navigator.clipboard.readText()), { timeout: 10_000 }).toBe(first);
    await admin.page.screenshot({ path: join(SHOTS, 'console-codes-created.png'), fullPage: true });
    // On a phone the codes wrap inside the panel: the page does not scroll sideways.
    await admin.page.setViewportSize({ width: 375, height: 780 });
    expect(await sideScroll(admin.page)).toBeLessThanOrEqual(0);
    await admin.page.screenshot({ path: join(SHOTS, 'console-codes-created-phone.png'), fullPage: true });
    await admin.page.setViewportSize({ width: 1280, height: 900 });

    // The plain user, on a phone: their balance, and the form beside it.
    const user = await openPage(suite.browser, {
      locale: 'en-US',
      viewport: { width: 375, height: 780 },
      permissions: ['clipboard-read', 'clipboard-write'],
    });
    suite.onFail = user.page;
    await signInToConsole(user.page, suite.url, 'carol', 'carol-password');
    await user.page.getByRole('heading', { name: 'Tokens' }).waitFor();
    expect(await user.page.getByRole('navigation', { name: 'main' }).getByRole('link').allTextContents()).toEqual(['Tokens']);
    const balance = user.page.getByTestId('own-balance');
    await expect.poll(() => balance.textContent(), { timeout: 10_000 }).toBe('Your balance: 1 units.');
    const redeem = user.page.getByRole('form', { name: 'Redeem a code' });
    /** The status of the gateway's answer to the redeem that `act` sends (a refusal reads the same each time). */
    const redeemAnswer = async (act: () => Promise<void>) => {
      const answered = user.page.waitForResponse((r) => new URL(r.url()).pathname === '/api/user/topup');
      await act();
      return (await answered).status();
    };
    // Pasted as a user pastes it: from the clipboard root's Copy filled.
    await user.page.evaluate((text) => navigator.clipboard.writeText(text), await admin.page.evaluate(() => navigator.clipboard.readText()));
    await redeem.getByLabel('Top-up code').focus();
    await user.page.keyboard.press('Control+V');
    expect(await redeem.getByLabel('Top-up code').inputValue()).toBe(first);
    await redeem.getByRole('button', { name: 'Redeem' }).click();
    await expect.poll(() => redeem.getByRole('status').textContent(), { timeout: 10_000 }).toBe('Added 2.5 units; your balance is now 3.5 units.');
    await expect.poll(() => balance.textContent(), { timeout: 10_000 }).toBe('Your balance: 3.5 units.');
    expect((await suite.api(`/api/users/${carol.id}`)).balance).toBe(3.5);
    expect(await sideScroll(user.page)).toBeLessThanOrEqual(0);
    await user.page.screenshot({ path: join(SHOTS, 'console-codes-redeemed-phone.png'), fullPage: true });

    // The same code again: refused in the gateway's words; nothing added.
    await redeem.getByLabel('Top-up code').fill(first);
    expect(await redeemAnswer(() => redeem.getByRole('button', { name: 'Redeem' }).click())).toBe(400);
    await expect.poll(() => redeem.getByRole('alert').textContent(), { timeout: 10_000 }).toContain(REFUSED);
    expect(await redeem.getByRole('status').count()).toBe(0);
    expect((await suite.api(`/api/users/${carol.id}`)).balance).toBe(3.5);
    await user.page.screenshot({ path: join(SHOTS, 'console-codes-refused-phone.png'), fullPage: true });

    // Root's list: the first code redeemed by carol, with no Disable any more; then the second disabled.
    suite.onFail = admin.page;
    // A reload of the page's own address (the gateway serves the console there) reads the list again.
    await admin.page.reload();
    await admin.page.getByRole('heading', { name: 'Top-up codes' }).waitFor();
    await expect.poll(() => rowOf(first).getByTestId('code-status').textContent(), { timeout: 10_000 }).toBe('redeemed');
    expect(await rowOf(first).getByTestId('redeemed-by').textContent()).toBe('carol');
    expect(
      await rowOf(first)
        .getByRole('button', { name: /^Disable/ })
        .count(),
    ).toBe(0);
    await rowOf(second)
      .getByRole('button', { name: `Disable code launch (${hintOf(second)})` })
      .click();
    await expect.poll(() => rowOf(second).getByTestId('code-status').textContent(), { timeout: 10_000 }).toBe('disabled');
    await rowOf(second)
      .getByRole('button', { name: `Enable code launch (${hintOf(second)})` })
      .waitFor();
    const secondRow = (
      (await suite.api('/api/redemptions?q=launch')).data as Array<{ key_hint: string; status: string; redeemed_by_username: string | null }>
    ).find((c) => c.key_hint === hintOf(second));
    expect(secondRow?.status).toBe('disabled');
    await admin.page.screenshot({ path: join(SHOTS, 'console-codes-list.png'), fullPage: true });

    suite.onFail = user.page;
    await redeem.getByLabel('Top-up code').fill(second);
    expect(await redeemAnswer(() => redeem.getByRole('button', { name: 'Redeem' }).click())).toBe(400);
    await expect.poll(() => redeem.getByRole('alert').textContent(), { timeout: 10_000 }).toContain(REFUSED);
    expect((await suite.api(`/api/users/${carol.id}`)).balance).toBe(3.5);
    expect(await balance.textContent()).toBe('Your balance: 3.5 units.');

    suite.onFail = admin.page;
    // Delete asks first, then the code is gone from the list and the API.
    await rowOf(second)
      .getByRole('button', { name: `Delete “launch (${hintOf(second)})”` })
      .click();
    await admin.page.getByRole('button', { name: 'Yes, delete' }).click();
    await expect.poll(() => rowOf(second).count(), { timeout: 10_000 }).toBe(0);
    expect(((await suite.api('/api/redemptions')).data as Array<{ key_hint: string }>).map((c) => c.key_hint)).toEqual([hintOf(first)]);
    // In Chinese, as a reader who switched sees it.
    await admin.page.getByRole('button', { name: '中文' }).click();
    await admin.page.getByRole('heading', { name: '充值码' }).waitFor();
    expect(await rowOf(first).getByTestId('code-status').textContent()).toBe('已兑换');
    await admin.page.screenshot({ path: join(SHOTS, 'console-codes-list-zh.png'), fullPage: true });

    expect(admin.errors).toEqual([]);
    expect(user.errors).toEqual([]);
    await user.context.close();
    await admin.context.close();
  }, 120_000);
});
