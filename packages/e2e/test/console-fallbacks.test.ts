// A model's fallbacks in Chromium against the real `kbchat gateway` (the
// upstream simulator as its provider, whose sim-503 always answers 503): set
// on the Prices page (sim-503 → sim-chat), a chat request for sim-503 answers
// 200 from sim-chat, and the Logs page shows that row as sim-chat with
// "fallback for sim-503", in the list and in its detail; then removed. A
// phone in dark mode and Chinese. Screenshots: /tmp/console-fallbacks-*.png.
import type { Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { noBrowser, sideScroll } from './browser.js';
import { consoleSuite, openConsole, SIM_KEY } from './console-suite.js';

if (noBrowser) console.warn(`[skip] console fallbacks browser tests: ${noBrowser}`);

const SHOT = (name: string) => `/tmp/console-fallbacks-${name}.png`;

describe.skipIf(Boolean(noBrowser))('the console fallbacks in Chromium', () => {
  const suite = consoleSuite('fallbacks');

  const modelRow = (page: Page, model: string) => page.getByRole('row').filter({ has: page.getByTestId('model').getByText(model, { exact: true }) });

  it('sets sim-503’s fallback to sim-chat, which answers for it, and the log says so', async () => {
    // sim-503 is not among the environment's channel's models: a channel of its own.
    await suite.api('/api/channels', { json: { name: 'sim failing', type: 'openai', base_url: `${suite.sim.url}/v1`, key: SIM_KEY, models: ['sim-503'] } });
    const user = await suite.api('/api/users', { json: { username: 'fallback.ann', password: 'fallback-ann-password', balance: 50 } });
    const { key } = await suite.api('/api/tokens', { json: { user_id: user.id, name: 'ann laptop' } });
    const chat = () =>
      fetch(`${suite.url}/v1/chat/completions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'sim-503', messages: [{ role: 'user', content: 'answer for the failing model' }] }),
      });
    // Without fallbacks, sim-503's failure is the answer.
    const before = await chat();
    expect(before.status).toBe(503);
    await before.text();

    const { context, page, errors } = await openConsole(suite, { locale: 'en-US', viewport: { width: 1280, height: 900 } });
    await page.goto(`${suite.url}/prices`);
    await modelRow(page, 'sim-503').waitFor();
    expect(await modelRow(page, 'sim-503').getByTestId('fallbacks').count()).toBe(0);
    await page.getByRole('button', { name: 'Edit the fallbacks of sim-503' }).click();
    const form = page.getByRole('form', { name: 'Fallbacks of sim-503' });
    await form.getByLabel('Add a model').selectOption('sim-chat');
    expect(await form.getByTestId('fallback').allTextContents()).toEqual(['sim-chat']);
    await page.screenshot({ path: SHOT('editor'), fullPage: true });
    await form.getByRole('button', { name: 'Save' }).click();
    await expect
      .poll(() => page.getByRole('status').textContent(), { timeout: 10_000 })
      .toBe('Saved: when every channel of sim-503 fails, it is answered by sim-chat, tried in this order.');
    await expect.poll(() => modelRow(page, 'sim-503').getByTestId('fallbacks').textContent(), { timeout: 10_000 }).toBe('then sim-chat');
    expect((await suite.api('/api/fallbacks')).data).toEqual([{ model: 'sim-503', fallbacks: ['sim-chat'] }]);
    await page.screenshot({ path: SHOT('prices'), fullPage: true });

    // sim-chat answers for sim-503.
    const res = await chat();
    expect(res.status).toBe(200);
    const answer = (await res.json()) as { choices: { message: { content: string } }[] };
    expect(answer.choices[0]!.message.content).toMatch(/^Echo: answer for the failing model/);
    const id = res.headers.get('x-request-id')!;
    let logged: any;
    await expect.poll(async () => (logged = (await suite.api(`/api/logs?request_id=${id}`)).data[0]), { timeout: 10_000 }).toBeTruthy();
    expect(logged).toMatchObject({ model: 'sim-chat', requested_model: 'sim-503', status: 200 });

    await page.goto(`${suite.url}/logs`);
    const row = page.getByRole('row').filter({ has: page.getByRole('link', { name: new RegExp(`request ${id}$`) }) });
    await expect.poll(() => row.count(), { timeout: 10_000 }).toBe(1);
    const modelCell = row.getByRole('cell').nth(2);
    expect(await modelCell.textContent()).toContain('sim-chat');
    expect(await row.getByTestId('fallback-for').textContent()).toBe('fallback for sim-503');
    await page.screenshot({ path: SHOT('logs'), fullPage: true });
    await row.getByRole('cell').nth(5).click();
    await page.getByRole('heading', { level: 1, name: new RegExp(id) }).waitFor();
    const field = page.locator('.logs-fields > div').filter({ has: page.getByText('Model', { exact: true }) });
    expect(await field.getByRole('link').textContent()).toBe('sim-chat');
    expect(await field.getByTestId('fallback-for').textContent()).toBe('fallback for sim-503');
    await page.screenshot({ path: SHOT('log-detail'), fullPage: true });

    // Removed: the row says no more, and the API holds none.
    await page.goto(`${suite.url}/prices`);
    await page.getByRole('button', { name: 'Edit the fallbacks of sim-503' }).click();
    await form.getByRole('button', { name: 'Remove fallbacks' }).click();
    await expect
      .poll(() => page.getByRole('status').textContent(), { timeout: 10_000 })
      .toBe('Removed the fallbacks of sim-503: its failures are answered as they are.');
    await expect.poll(() => modelRow(page, 'sim-503').getByTestId('fallbacks').count(), { timeout: 10_000 }).toBe(0);
    expect((await suite.api('/api/fallbacks')).data).toEqual([]);
    expect(errors).toEqual([]);
    await context.close();
  }, 120_000);

  it('fits a phone in dark mode, and reads in Chinese', async () => {
    await suite.api('/api/fallbacks/sim-chat', { method: 'PUT', json: { fallbacks: ['sim-embed-8', 'sim-503'] } });
    const { context, page, errors } = await openConsole(suite, { locale: 'en-US', viewport: { width: 375, height: 800 }, colorScheme: 'dark' });
    await page.goto(`${suite.url}/prices`);
    await page.getByRole('button', { name: 'Edit the fallbacks of sim-chat' }).click();
    const form = page.getByRole('form', { name: 'Fallbacks of sim-chat' });
    expect(await form.getByTestId('fallback').allTextContents()).toEqual(['sim-embed-8', 'sim-503']);
    expect(await sideScroll(page)).toBeLessThanOrEqual(0);
    await page.screenshot({ path: SHOT('phone-dark'), fullPage: true });
    await page.getByRole('button', { name: '中文' }).click();
    await page.getByRole('form', { name: 'sim-chat 的备用模型' }).waitFor();
    expect(await modelRow(page, 'sim-chat').getByTestId('fallbacks').textContent()).toBe('然后 sim-embed-8 → sim-503');
    await page.setViewportSize({ width: 1280, height: 900 });
    await page.screenshot({ path: SHOT('zh'), fullPage: true });
    expect(errors).toEqual([]);
    await context.close();
  }, 90_000);
});
