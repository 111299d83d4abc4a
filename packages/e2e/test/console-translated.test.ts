// The console's Dashboard, Prices and Tokens pages under a page translator
// (Chrome's: every text node swapped for <font> wrappers, page-translator.ts)
// against the real `kbchat gateway`: the pages keep working while React
// re-renders under the wrappers (a change of grouping redraws the dashboard, a
// saved price and a created, disabled token re-render their tables), every
// edit is read back from the API, and the page throws nothing.
// Screenshots: test-output/web/console-translated-*.png.
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { noBrowser } from './browser.js';
import { consoleSuite, openConsole } from './console-suite.js';
import { SHOTS } from './kbchat-start.js';
import { TRANSLATED_MARK, translateLikeChrome } from './page-translator.js';

if (noBrowser) console.warn(`[skip] console translator browser tests: ${noBrowser}`);

describe.skipIf(Boolean(noBrowser))('the console under a page translator', () => {
  const suite = consoleSuite('console-translated');

  it('Dashboard, Prices and Tokens keep working under the translator', async () => {
    const user = await suite.api('/api/users', { json: { username: 'tara', password: 'tara-password', balance: 20 } });
    const { key } = await suite.api('/api/tokens', { json: { user_id: user.id, name: 'tara key' } });
    const res = await fetch(`${suite.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'sim-chat', messages: [{ role: 'user', content: 'hello translator' }] }),
    });
    expect(res.status).toBe(200);
    await expect.poll(async () => (await suite.api('/api/logs?limit=1')).total, { timeout: 20_000 }).toBe(1);

    const { context, page, errors } = await openConsole(suite, { locale: 'en-US', viewport: { width: 1280, height: 900 } });
    await translateLikeChrome(page);

    // Dashboard: the figures, then a regrouping (the table and charts are rebuilt under the wrappers).
    await page.goto(`${suite.url}/dashboard`);
    await page.getByRole('heading', { name: `${TRANSLATED_MARK}Dashboard` }).waitFor();
    await expect.poll(() => page.getByTestId('total-requests').getByTestId('value').textContent()).toContain('1');
    await page.getByLabel('Group by', { exact: true }).selectOption('user');
    const taraRow = page.getByRole('row').filter({ has: page.getByTestId('group-name').getByText('tara') });
    await taraRow.waitFor();
    await page.getByLabel('Range', { exact: true }).selectOption('hour');
    await expect.poll(() => new URL(page.url()).searchParams.get('range')).toBe('hour');
    await taraRow.waitFor();
    await expect.poll(() => page.locator('.chart canvas').count(), { timeout: 30_000 }).toBe(5);
    await page.screenshot({ path: join(SHOTS, 'console-translated-dashboard.png'), fullPage: true });

    // Prices: set one by ratios; the API holds it and the row shows it.
    await page.getByRole('link', { name: 'Prices' }).click();
    await page.getByTestId('model').getByText('sim-chat', { exact: true }).waitFor();
    await page.getByRole('button', { name: 'Set a price for sim-chat' }).click();
    const form = page.getByRole('form', { name: 'Price of sim-chat' });
    await form.getByLabel('Model ratio').fill('0.5');
    await form.getByLabel('Completion ratio').fill('2');
    await form.getByRole('button', { name: 'Save' }).click();
    await page.getByRole('status').filter({ hasText: 'charges sim-chat 1 per 1M input tokens' }).waitFor();
    expect(await suite.api('/api/prices/sim-chat')).toMatchObject({ input_price: 1, output_price: 2 });
    await page.getByRole('button', { name: 'Edit the price of sim-chat' }).waitFor();
    await page.screenshot({ path: join(SHOTS, 'console-translated-prices.png'), fullPage: true });

    // Tokens: create one (its key shown once), disable it; the API agrees each time.
    await page.getByRole('link', { name: 'Tokens' }).click();
    await page.getByRole('button', { name: 'New token' }).click();
    await page.getByRole('form', { name: 'New token' }).getByLabel('Name').fill('translated');
    await page.getByRole('button', { name: 'Create token' }).click();
    expect(await page.getByTestId('new-key').textContent()).toMatch(/^sk-/);
    await page.getByRole('button', { name: 'Disable token translated' }).click();
    await page.getByRole('button', { name: 'Enable token translated' }).waitFor();
    const [made] = (await suite.api('/api/tokens')).data.filter((t: any) => t.name === 'translated');
    expect(made.status).toBe('disabled');
    await page.screenshot({ path: join(SHOTS, 'console-translated-tokens.png'), fullPage: true });
    expect(errors).toEqual([]);
    await context.close();
  }, 120_000);
});
