// The console's dashboard in Chromium against the real `kbchat gateway` (the
// simulator as its provider): no traffic yet says so; then real requests (a
// user's token on the environment's channel, sim-chat; one to a model nobody
// serves; one to a channel whose upstream answers 500, then disabled) and the
// page's figures are the API's own (requests, errors, a user's spend, a
// group's row); range and group-by live in the address and survive a reload;
// a bad chosen range shows the gateway's message in place. Light, dark, phone,
// Chinese. Screenshots: test-output/web/console-dashboard-*.png.
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { noBrowser, sideScroll } from './browser.js';
import { consoleSuite, openConsole, SIM_KEY } from './console-suite.js';
import { SHOTS } from './kbchat-start.js';

if (noBrowser) console.warn(`[skip] console dashboard browser tests: ${noBrowser}`);

/** As the console shows units (gateway-api.ts formatUnits). */
const units = (n: number) => Number(n.toFixed(6)).toLocaleString('en-US', { maximumFractionDigits: 6 });
const DAY = 86_400_000;

describe.skipIf(Boolean(noBrowser))('the console dashboard in Chromium', () => {
  const suite = consoleSuite('dashboard');
  let userId = 0;
  let failingChannel = 0;

  const tile = (page: Page, id: string) => page.getByTestId(`total-${id}`).getByTestId('value');

  async function chat(key: string, model: string) {
    const res = await fetch(`${suite.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model, messages: [{ role: 'user', content: 'hello dashboard' }] }),
    });
    await res.text();
    return res.status;
  }

  it('says there is no traffic yet before any request', async () => {
    const { context, page, errors } = await openConsole(suite, { locale: 'en-US', viewport: { width: 1280, height: 900 } });
    await page.goto(`${suite.url}/dashboard`);
    await page.getByRole('heading', { name: 'Dashboard' }).waitFor();
    await page.getByTestId('no-traffic').waitFor();
    expect(await page.getByTestId('no-traffic').textContent()).toContain('No traffic yet');
    expect(await page.getByTestId('nothing-disabled').textContent()).toBe('No channel or channel model is disabled.');
    await page.screenshot({ path: join(SHOTS, 'console-dashboard-empty.png'), fullPage: true });
    expect(errors).toEqual([]);
    await context.close();
  }, 90_000);

  it("shows the API's figures for real traffic; range and group-by live in the address", async () => {
    const user = await suite.api('/api/users', { json: { username: 'dana', password: 'dana-password', balance: 50 } });
    userId = user.id;
    const { key } = await suite.api('/api/tokens', { json: { user_id: user.id, name: 'dana key' } });
    for (let i = 0; i < 3; i++) expect(await chat(key, 'sim-chat')).toBe(200);
    expect(await chat(key, 'sim-nobody-serves')).toBeGreaterThanOrEqual(400);
    const failing = await suite.api('/api/channels', {
      json: { name: 'sim-failing', type: 'openai', base_url: `${suite.sim.url}/v1`, key: SIM_KEY, models: ['sim-500'] },
    });
    failingChannel = failing.id;
    expect(await chat(key, 'sim-500')).toBe(500);
    await suite.api(`/api/channels/${failing.id}`, { method: 'PATCH', json: { status: 'disabled' } });
    // The logs are flushed in batches: wait until all five rows are written.
    await expect.poll(async () => (await suite.api('/api/logs?limit=1')).total, { timeout: 20_000 }).toBe(5);

    const { context, page, errors } = await openConsole(suite, { locale: 'en-US', viewport: { width: 1280, height: 900 } });
    await page.goto(`${suite.url}/dashboard`);
    await tile(page, 'requests').waitFor();
    const now = Date.now();
    const api = await suite.api(`/api/dashboard?from=${now - DAY}&to=${now}&group_by=model&top=8`);
    expect(api.totals).toMatchObject({ requests: 5, errors: 2 });
    expect(await tile(page, 'requests').textContent()).toBe(String(api.totals.requests));
    expect(await tile(page, 'errors').textContent()).toBe(String(api.totals.errors));
    expect(await tile(page, 'prompt-tokens').textContent()).toBe(api.totals.prompt_tokens.toLocaleString('en-US'));
    expect(await tile(page, 'completion-tokens').textContent()).toBe(api.totals.completion_tokens.toLocaleString('en-US'));
    expect(await tile(page, 'spend').textContent()).toBe(units(api.totals.cost));
    expect(api.totals.cost).toBeGreaterThan(0);

    // A group's row, and the user's place in the spend ranking, are the API's.
    const simChat = api.groups.find((g: any) => g.key === 'sim-chat');
    const groupRow = page.getByRole('row').filter({ has: page.getByTestId('group-name').getByText('sim-chat', { exact: true }) });
    expect(await groupRow.getByTestId('requests').textContent()).toBe(String(simChat.totals.requests));
    expect(await groupRow.getByTestId('spend').textContent()).toBe(units(simChat.totals.cost));
    const dana = api.top_users.find((u: any) => u.user_id === userId);
    expect(dana).toMatchObject({ username: 'dana', requests: 5 });
    const danaRow = page.getByRole('row').filter({ has: page.getByTestId('username').getByText('dana', { exact: true }) });
    expect(await danaRow.getByTestId('spend').textContent()).toBe(units(dana.cost));
    expect(await danaRow.getByTestId('requests').textContent()).toBe('5');

    // The disabled channel, named, linking to the channels page.
    const disabled = page.getByTestId('disabled-channel');
    expect(await disabled.textContent()).toContain('Disabled by an administrator.');
    expect(await disabled.getByRole('link').getAttribute('href')).toBe('/channels');
    expect(await disabled.getByRole('link').textContent()).toBe(`sim-failing #${failingChannel}`);
    // Four charts and the one by group, drawn.
    await expect.poll(() => page.locator('.chart canvas').count()).toBe(5);
    await page.screenshot({ path: join(SHOTS, 'console-dashboard-light.png'), fullPage: true });

    // Group by user: the address says so, the rows are users by name, and a reload keeps it.
    await page.getByLabel('Group by', { exact: true }).selectOption('user');
    await expect.poll(() => new URL(page.url()).searchParams.get('group_by')).toBe('user');
    const byUser = await suite.api(`/api/dashboard?from=${Date.now() - DAY}&to=${Date.now()}&group_by=user`);
    const danaGroup = byUser.groups.find((g: any) => g.key === String(userId));
    const danaGroupRow = page.getByRole('row').filter({ has: page.getByTestId('group-name').getByText('dana', { exact: true }) });
    await danaGroupRow.waitFor();
    expect(await danaGroupRow.textContent()).toContain(`#${userId}`);
    expect(await danaGroupRow.getByTestId('requests').textContent()).toBe(String(danaGroup.totals.requests));
    // p50 and p95 by user too, the API's own.
    expect(danaGroup.totals.latency_p50_ms).not.toBeNull();
    expect(await danaGroupRow.getByTestId('p50').textContent()).toBe(`${Number(danaGroup.totals.latency_p50_ms.toFixed(1)).toLocaleString('en-US')} ms`);
    expect(await danaGroupRow.getByTestId('p95').textContent()).toBe(`${Number(danaGroup.totals.latency_p95_ms.toFixed(1)).toLocaleString('en-US')} ms`);
    await page.getByLabel('Range', { exact: true }).selectOption('hour');
    await expect.poll(() => new URL(page.url()).searchParams.get('range')).toBe('hour');
    expect(new URL(page.url()).searchParams.get('group_by')).toBe('user');
    await page.reload();
    await tile(page, 'requests').waitFor();
    expect(await page.getByLabel('Range', { exact: true }).inputValue()).toBe('hour');
    expect(await page.getByLabel('Group by', { exact: true }).inputValue()).toBe('user');
    expect(await tile(page, 'requests').textContent()).toBe('5');
    expect(await page.getByTestId('covers').textContent()).toContain('per minute');
    await danaGroupRow.waitFor();

    // A chosen range: its ends in the address; one that ends before it starts is the gateway's 400, in place.
    await page.getByLabel('Range', { exact: true }).selectOption('custom');
    await expect.poll(() => new URL(page.url()).searchParams.get('range')).toBe('custom');
    const from = new URL(page.url()).searchParams.get('from')!;
    expect(Date.parse(new URL(page.url()).searchParams.get('to')!) - Date.parse(from)).toBe(DAY);
    await tile(page, 'requests').waitFor();
    expect(await page.getByTestId('covers').textContent()).toContain('per hour');
    await page.getByLabel('From', { exact: true }).fill('2030-01-02T00:00');
    await page.getByLabel('To', { exact: true }).fill('2030-01-01T00:00');
    await page.getByRole('button', { name: 'Show' }).click();
    await page.getByRole('alert').waitFor();
    expect(await page.getByRole('alert').textContent()).toContain("Invalid 'from': must be before 'to'");
    // The controls stay usable: back to the last week.
    await page.getByLabel('Range', { exact: true }).selectOption('week');
    await tile(page, 'requests').waitFor();
    expect(await tile(page, 'requests').textContent()).toBe('5');
    expect(errors).toEqual([]);
    await context.close();
  }, 120_000);

  it("a link with unreadable ends shows the gateway's message in place; the controls stay usable", async () => {
    const { context, page, errors } = await openConsole(suite, { locale: 'en-US', viewport: { width: 1280, height: 900 } });
    await page.goto(`${suite.url}/dashboard?range=custom&from=%E0&to=x`);
    await page.getByRole('alert').waitFor();
    // The gateway names the first field it cannot read ('to' here); never the browser's "Invalid time value".
    expect(await page.getByRole('alert').textContent()).toContain("Invalid 'to'");
    expect(await page.locator('main').textContent()).not.toContain('Invalid time value');
    await page.goto(`${suite.url}/dashboard?range=custom&from=%E0&to=2030-01-02T00:00:00.000Z`);
    await page.getByRole('alert').filter({ hasText: "Invalid 'from'" }).waitFor();
    // The range's fields are empty (not a crash), and the page is still the dashboard's.
    await page.getByRole('heading', { name: 'Dashboard' }).waitFor();
    expect(await page.getByLabel('From', { exact: true }).inputValue()).toBe('');
    await page.screenshot({ path: join(SHOTS, 'console-dashboard-bad-link.png'), fullPage: true });
    await page.getByLabel('From', { exact: true }).fill('2030-01-01T00:00');
    await page.getByLabel('To', { exact: true }).fill('2030-01-02T00:00');
    await page.getByRole('button', { name: 'Show' }).click();
    await page.getByTestId('covers').waitFor();
    await page.getByLabel('Range', { exact: true }).selectOption('week');
    await page.getByTestId('covers').waitFor();
    expect(await page.getByRole('alert').count()).toBe(0);
    expect(errors).toEqual([]);
    await context.close();
  }, 90_000);

  it('fits a phone in dark mode, and reads in Chinese', async () => {
    const { context, page, errors } = await openConsole(suite, { locale: 'en-US', viewport: { width: 375, height: 800 }, colorScheme: 'dark' });
    await page.goto(`${suite.url}/dashboard?range=day&group_by=channel`);
    await tile(page, 'requests').waitFor();
    await expect.poll(() => page.locator('.chart canvas').count()).toBe(5);
    expect(await sideScroll(page)).toBeLessThanOrEqual(0);
    // The charts take their colours from the dark theme's variables.
    const stroke = await page.evaluate(() => getComputedStyle(document.querySelector('.dashboard')!).getPropertyValue('--chart-requests').trim());
    expect(stroke).toBe('#6b9bff');
    await page.screenshot({ path: join(SHOTS, 'console-dashboard-phone-dark.png'), fullPage: true });

    await page.setViewportSize({ width: 1280, height: 900 });
    await page.screenshot({ path: join(SHOTS, 'console-dashboard-dark.png'), fullPage: true });
    await page.getByRole('button', { name: '中文' }).click();
    await page.getByRole('heading', { name: '仪表盘' }).waitFor();
    await page.getByText('按渠道', { exact: true }).waitFor();
    expect(await page.getByTestId('disabled-channel').textContent()).toContain('由管理员禁用。');
    await page.screenshot({ path: join(SHOTS, 'console-dashboard-zh.png'), fullPage: true });
    expect(errors).toEqual([]);
    await context.close();
  }, 90_000);
});
