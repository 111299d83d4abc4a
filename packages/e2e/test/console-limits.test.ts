// Rate limits and budgets in Chromium against the real `kbchat gateway` (the
// upstream simulator as its provider): a token limited to 2 requests a
// minute on the Tokens page answers 2 and refuses the third with 429; a
// user's budget set on the Users page shows in its row; a model's limits set
// on the Prices page and a group's on the Groups page show in their rows; an
// empty form removes them. A phone in
// dark mode and Chinese. Screenshots: /tmp/console-limits-*.png.
import type { Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { noBrowser, sideScroll } from './browser.js';
import { consoleSuite, openConsole } from './console-suite.js';

if (noBrowser) console.warn(`[skip] console limits browser tests: ${noBrowser}`);

const SHOT = (name: string) => `/tmp/console-limits-${name}.png`;

describe.skipIf(Boolean(noBrowser))('rate limits and budgets in the console, in Chromium', () => {
  const suite = consoleSuite('limits');
  const rowOf = (page: Page, text: string) => page.getByRole('row').filter({ hasText: text });

  it('limits a token to 2 a minute (the third request gets 429), budgets a user and limits a model', async () => {
    const user = await suite.api('/api/users', { json: { username: 'limits.bo', password: 'limits-bo-password', balance: 50 } });
    const { key } = await suite.api('/api/tokens', { json: { user_id: user.id, name: 'bo script' } });
    const { context, page, errors } = await openConsole(suite, { locale: 'en-US', viewport: { width: 1280, height: 900 } });

    await page.goto(`${suite.url}/tokens`);
    await rowOf(page, 'bo script').waitFor();
    expect(await rowOf(page, 'bo script').getByTestId('token-rate-limits').textContent()).toBe('No limits');
    await page.getByRole('button', { name: 'Limits of bo script' }).click();
    const form = page.getByRole('form', { name: 'Limits of bo script' });
    expect(await form.getByTestId('limits-counting').textContent()).toBe('Counted in this gateway process (embedded store: one process).');
    await form.getByLabel('Requests per minute').fill('2');
    await form.getByLabel('Budget (units)').fill('5');
    await form.getByRole('combobox').selectOption('day');
    await page.screenshot({ path: SHOT('token-editor'), fullPage: true });
    await form.getByRole('button', { name: 'Save limits' }).click();
    await expect.poll(() => page.getByRole('status').first().textContent(), { timeout: 10_000 }).toBe('Limits of bo script saved.');
    await expect.poll(() => rowOf(page, 'bo script').getByTestId('token-rate-limits').textContent(), { timeout: 10_000 }).toBe('2 RPM · 5 per day');
    await page.screenshot({ path: SHOT('tokens'), fullPage: true });

    const chat = async () => {
      const res = await fetch(`${suite.url}/v1/chat/completions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'sim-chat', messages: [{ role: 'user', content: 'hello' }] }),
      });
      await res.text();
      return res.status;
    };
    expect([await chat(), await chat(), await chat()]).toEqual([200, 200, 429]);

    await page.goto(`${suite.url}/users`);
    await page.getByRole('button', { name: 'Limits of limits.bo' }).click();
    const userForm = page.getByRole('form', { name: 'Limits of limits.bo' });
    await userForm.getByLabel('Budget (units)').fill('20');
    await userForm.getByRole('combobox').selectOption('month');
    await userForm.getByRole('button', { name: 'Save limits' }).click();
    await expect.poll(() => rowOf(page, 'limits.bo').getByTestId('user-rate-limits').textContent(), { timeout: 10_000 }).toBe('20 per month');
    await page.screenshot({ path: SHOT('users'), fullPage: true });

    await page.goto(`${suite.url}/prices`);
    await page.getByRole('button', { name: 'Limits of sim-chat' }).click();
    const modelForm = page.getByRole('form', { name: 'Limits of sim-chat' });
    // A model has no budget: only tokens and users do.
    expect(await modelForm.getByLabel('Budget (units)').count()).toBe(0);
    await modelForm.getByLabel('Tokens per minute').fill('100000');
    await modelForm.getByRole('button', { name: 'Save limits' }).click();
    await expect.poll(() => rowOf(page, 'sim-chat').getByTestId('model-rate-limits').textContent(), { timeout: 10_000 }).toBe('100,000 TPM');
    await page.screenshot({ path: SHOT('prices'), fullPage: true });
    const held = (await suite.api('/api/rate-limits')).data;
    expect(held).toContainEqual({ scope: 'model', subject: 'sim-chat', rpm: null, tpm: 100000, rpd: null, budget: null });
    expect(held).toContainEqual({ scope: 'user', subject: String(user.id), rpm: null, tpm: null, rpd: null, budget: { amount: 20, period: 'month' } });

    // Emptied: removed.
    await page.getByRole('button', { name: 'Limits of sim-chat' }).click();
    await modelForm.getByLabel('Tokens per minute').fill('');
    await modelForm.getByRole('button', { name: 'Save limits' }).click();
    await expect.poll(() => rowOf(page, 'sim-chat').getByTestId('model-rate-limits').count(), { timeout: 10_000 }).toBe(0);
    expect((await suite.api('/api/rate-limits')).data.some((r: { scope: string }) => r.scope === 'model')).toBe(false);

    // A group's limits bind all its callers together.
    await page.goto(`${suite.url}/groups`);
    await page.getByRole('button', { name: 'Limits of default' }).click();
    const groupForm = page.getByRole('form', { name: 'Limits of default' });
    await groupForm.getByLabel('Requests per day').fill('100000');
    await groupForm.getByRole('button', { name: 'Save limits' }).click();
    await expect.poll(() => rowOf(page, 'default').getByTestId('group-rate-limits').textContent()).toBe('100,000 RPD');
    await page.screenshot({ path: SHOT('groups'), fullPage: true });
    expect(await suite.api('/api/rate-limits/group/default', { method: 'DELETE' })).toMatchObject({ deleted: true });
    await page.goto(`${suite.url}/prices`);

    // A bad number is named, and nothing is sent.
    await page.getByRole('button', { name: 'Limits of sim-chat' }).click();
    await modelForm.getByLabel('Requests per day').fill('1.5');
    await modelForm.getByRole('button', { name: 'Save limits' }).click();
    await expect.poll(() => modelForm.getByRole('alert').textContent(), { timeout: 10_000 }).toContain('Requests per day: a whole number from 1, or empty');
    expect(errors).toEqual([]);
    await context.close();
  }, 120_000);

  it('fits a phone in dark mode, and reads in Chinese', async () => {
    const { context, page, errors } = await openConsole(suite, { locale: 'en-US', viewport: { width: 375, height: 800 }, colorScheme: 'dark' });
    await page.goto(`${suite.url}/tokens`);
    await page.getByRole('button', { name: 'Limits of bo script' }).click();
    const form = page.getByRole('form', { name: 'Limits of bo script' });
    expect(await form.getByLabel('Requests per minute').inputValue()).toBe('2');
    expect(await sideScroll(page)).toBeLessThanOrEqual(0);
    await page.screenshot({ path: SHOT('phone-dark'), fullPage: true });
    await page.getByRole('button', { name: '中文' }).click();
    await page.getByRole('form', { name: 'bo script 的限制' }).waitFor();
    await page.setViewportSize({ width: 1280, height: 900 });
    await page.screenshot({ path: SHOT('zh'), fullPage: true });
    expect(errors).toEqual([]);
    await context.close();
  }, 90_000);
});
