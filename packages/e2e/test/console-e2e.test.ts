// The walk through the gateway console, start to end, in one browser
// session against the real `kbchat gateway` with the upstream simulator as
// provider: root signs in and sees the balance of 200, sets 150 (the API says
// 150); a channel to the simulator tests green, one with a wrong key shows
// "Incorrect API key provided"; a token made in the page is used by the
// official openai client; that request is found in the logs by its id; a
// request that failed on the wrong key is replayed after the key is fixed in
// the page, the new answer beside the old error. Every page is screenshotted
// (test-output/web/console-e2e-*.png).
import { join } from 'node:path';
import OpenAI, { APIError } from 'openai';
import type { Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { noBrowser } from './browser.js';
import { consoleSuite, openConsole, SIM_KEY } from './console-suite.js';
import { SHOTS } from './kbchat-start.js';

if (noBrowser) console.warn(`[skip] console end-to-end browser test: ${noBrowser}`);

/** The wrong-key channel's own model: the simulator ignores what follows ':', so only that channel serves it. */
const WRONG_MODEL = 'sim-chat:wrong-key';

describe.skipIf(Boolean(noBrowser))('the gateway console, end to end', () => {
  const suite = consoleSuite('console-e2e');
  /** A page's screenshot once nothing on it is still loading (a shot of "Loading…" shows nothing). */
  const shot = async (page: Page, name: string) => {
    await expect.poll(() => page.getByText('Loading…').count(), { timeout: 30_000 }).toBe(0);
    await page.screenshot({ path: join(SHOTS, `console-e2e-${name}.png`), fullPage: true });
  };
  const channelRow = (page: Page, name: string) => page.getByRole('row').filter({ has: page.getByText(name, { exact: true }) });

  it('balance, channels, a token used by the openai client, the request in the logs, a failed request replayed', async () => {
    const { context, page, errors } = await openConsole(suite, { locale: 'en-US', viewport: { width: 1280, height: 900 } });
    await page.getByRole('heading', { name: 'Dashboard' }).waitFor();

    // Users: root's 200, set to 150, and the API agrees.
    await page.getByRole('link', { name: 'Users' }).click();
    const rootRow = page.getByRole('row').filter({ hasText: 'root' });
    await expect.poll(() => rootRow.getByTestId('balance').textContent()).toBe('200');
    await page.getByRole('button', { name: 'Edit balance of root' }).click();
    const balance = page.getByRole('form', { name: 'Balance of root' });
    await balance.getByLabel('Amount (units)').fill('150');
    await balance.getByRole('button', { name: 'Save' }).click();
    await expect.poll(() => rootRow.getByTestId('balance').textContent()).toBe('150');
    const rootUser = (await suite.api('/api/users')).data.find((u: any) => u.username === 'root');
    expect(rootUser.balance).toBe(150);
    await shot(page, 'users');

    // Channels: one to the simulator tests green; one with a wrong key shows the upstream's words.
    await page.getByRole('link', { name: 'Channels' }).click();
    const createChannel = async (name: string, key: string, models: string) => {
      await page.getByRole('button', { name: 'New channel' }).click();
      const form = page.getByRole('form', { name: 'New channel' });
      await form.getByLabel('Name').fill(name);
      await form.getByLabel('Provider type').selectOption('openai');
      await form.getByLabel('Base URL', { exact: true }).fill(`${suite.sim.url}/v1`);
      await form.getByLabel('Key').fill(key);
      await form.getByLabel('Models').fill(models);
      await form.getByRole('button', { name: 'Create channel' }).click();
      await page
        .getByRole('status')
        .filter({ hasText: `Saved “${name}”` })
        .waitFor();
    };
    await createChannel('simulator', SIM_KEY, 'sim-chat');
    await channelRow(page, 'simulator').getByRole('button', { name: 'Test all models of simulator' }).click();
    const green = channelRow(page, 'simulator').getByTestId('test-ok');
    await green.waitFor();
    expect(await green.evaluate((el) => getComputedStyle(el).color)).toBe('rgb(31, 138, 76)');
    await createChannel('wrong key', 'sk-not-the-simulator-key', WRONG_MODEL);
    await channelRow(page, 'wrong key').getByRole('button', { name: 'Test all models of wrong key' }).click();
    const refused = channelRow(page, 'wrong key').getByTestId('test-error');
    await refused.waitFor();
    expect(await refused.textContent()).toContain('Incorrect API key provided');
    await shot(page, 'channels');

    // Tokens: made in the page, shown once, used by the official client.
    await page.getByRole('link', { name: 'Tokens' }).click();
    await page.getByRole('button', { name: 'New token' }).click();
    await page.getByRole('form', { name: 'New token' }).getByLabel('Name').fill('openai client');
    await page.getByRole('button', { name: 'Create token' }).click();
    const key = (await page.getByTestId('new-key').textContent())!;
    await page.getByRole('row').filter({ hasText: 'openai client' }).waitFor();
    await shot(page, 'tokens');
    const client = new OpenAI({ apiKey: key, baseURL: `${suite.url}/v1`, maxRetries: 0 });
    const { data: answer, response } = await client.chat.completions
      .create({ model: 'sim-chat', messages: [{ role: 'user', content: 'hello from the console test' }] })
      .withResponse();
    expect(answer.choices[0]!.message.content).toContain('hello from the console test');
    const okId = response.headers.get('x-request-id')!;
    expect(okId).toBeTruthy();
    const failure = await client.chat.completions.create({ model: WRONG_MODEL, messages: [{ role: 'user', content: 'replay me' }] }).catch((e: unknown) => e);
    expect(failure).toBeInstanceOf(APIError);
    const failedId = (failure as APIError).requestID!;
    expect(failedId).toBeTruthy();

    // Logs: the client's request, found by its id over all rows.
    await page.getByRole('link', { name: 'Logs' }).click();
    await page.getByLabel('Request ID').fill(okId);
    await page.getByRole('button', { name: 'Find' }).click();
    await page.getByRole('heading', { name: `Request ${okId}` }).waitFor();
    const detail = await page.locator('main').textContent();
    expect(detail).toContain('openai client');
    expect(detail).toContain('sim-chat');
    await shot(page, 'log-detail');

    // The key is fixed in the page; the failed request, replayed, now answers beside its old error.
    await page.getByRole('link', { name: 'Channels' }).click();
    await page.getByRole('button', { name: 'Edit wrong key' }).click();
    const edit = page.getByRole('form', { name: 'Edit channel wrong key' });
    await edit.getByLabel('Key').fill(SIM_KEY);
    await edit.getByRole('button', { name: 'Save' }).click();
    await page.getByRole('status').filter({ hasText: 'Saved “wrong key”' }).waitFor();
    await page.getByRole('link', { name: 'Logs' }).click();
    await page.getByLabel('Request ID').fill(failedId);
    await page.getByRole('button', { name: 'Find' }).click();
    await page.getByRole('heading', { name: `Request ${failedId}` }).waitFor();
    expect(JSON.parse((await page.getByLabel('Request body kept for replay').textContent())!)).toMatchObject({ model: WRONG_MODEL });
    await page.getByRole('button', { name: 'Replay' }).click();
    const before = page.getByRole('article', { name: 'Before: the original request' });
    const after = page.getByRole('article', { name: 'Now: the replay' });
    await after.waitFor();
    expect(await before.textContent()).toContain('Incorrect API key provided');
    expect(await after.textContent()).toContain('Status 200');
    expect(await after.getByTestId('replay-answer').textContent()).toMatch(/^Echo: replay me/);
    await shot(page, 'replay');

    // The other pages, as they now stand.
    await page.getByRole('link', { name: 'Dashboard' }).click();
    await page.getByRole('heading', { name: 'Dashboard' }).waitFor();
    await page.getByText('Requests', { exact: true }).first().waitFor();
    await expect.poll(() => page.locator('.chart canvas').count(), { timeout: 30_000 }).toBeGreaterThan(0); // the charts are drawn
    await shot(page, 'dashboard');
    await page.getByRole('link', { name: 'Prices' }).click();
    await page.getByRole('heading', { name: 'Prices' }).waitFor();
    await page.getByTestId('model').getByText('sim-chat', { exact: true }).waitFor();
    await shot(page, 'prices');
    expect(errors).toEqual([]);
    await context.close();
  }, 180_000);
});
