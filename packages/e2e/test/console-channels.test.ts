// The console's channels page in Chromium against the real `kbchat gateway`
// with the upstream simulator (it wants SIM_KEY) as provider: a channel made
// in the form and tested is a green row with its latency, one with a wrong key
// shows the simulator's exact error, both still there after a reload; testing
// every channel gives a summary of what failed; an edit that leaves the key
// empty keeps it (read back from the API, and the channel still answers); the
// channel from OPENAI_API_KEY is marked so; an auto-disabled model says why and
// when it is tested again; a key pool made in the form (several keys, one a
// line) shows each key by its hint, the wrong one disabled with the upstream's
// reason while requests succeed, and enables it by hand; search, disable,
// delete; phone width, dark, Chinese.
// Screenshots: test-output/web/console-channels-*.png.
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { noBrowser, sideScroll } from './browser.js';
import { consoleSuite, ENV_MODELS, openConsole, SIM_KEY } from './console-suite.js';
import { SHOTS } from './kbchat-start.js';
import { translateLikeChrome } from './page-translator.js';

if (noBrowser) console.warn(`[skip] console channels browser tests: ${noBrowser}`);

const GOOD = 'sim good';
const WRONG = 'sim wrong key';
const FLAKY = 'sim overloaded';
const POOL = 'sim key pool';
/** A key the simulator refuses, long enough to be shown by a hint. */
const POOL_WRONG = 'sk-console-pool-wrong-9999';

describe.skipIf(Boolean(noBrowser))('the console: channels', () => {
  // Two failures in a row disable a channel model, so that the test can make one.
  const suite = consoleSuite('channels', { CHANNEL_DISABLE_THRESHOLD: '2' });
  const channelNamed = async (name: string) => ((await suite.api('/api/channels')).data as any[]).find((c) => c.name === name);
  const row = (page: Page, name: string) => page.getByRole('row').filter({ has: page.getByText(name, { exact: true }) });

  async function openChannels(viewport = { width: 1280, height: 900 }, colorScheme: 'light' | 'dark' = 'light') {
    const opened = await openConsole(suite, { locale: 'en-US', viewport, colorScheme });
    await opened.page.goto(`${suite.url}/channels`);
    await opened.page.getByRole('heading', { name: 'Channels' }).waitFor();
    return opened;
  }

  async function createInForm(page: Page, fields: { name: string; key: string; models: string }) {
    await page.getByRole('button', { name: 'New channel' }).click();
    const form = page.getByRole('form', { name: 'New channel' });
    await form.getByLabel('Name').fill(fields.name);
    await form.getByLabel('Provider type').selectOption('openai');
    await form.getByLabel('Base URL', { exact: true }).fill(`${suite.sim.url}/v1`);
    await form.getByLabel('Key').fill(fields.key);
    await form.getByLabel('Models').fill(fields.models);
    await form.getByRole('button', { name: 'Create channel' }).click();
    await page
      .getByRole('status')
      .filter({ hasText: `Saved “${fields.name}”` })
      .waitFor();
  }

  it('creates a channel to the simulator and tests it: a green row with its latency; a wrong key shows the upstream error', async () => {
    const { context, page, errors } = await openChannels();
    // The channel from OPENAI_API_KEY is marked, with when a change of the variable takes effect.
    const envRow = row(page, 'openai (from environment)');
    await envRow.getByText('from the environment').waitFor();
    expect(await envRow.textContent()).toContain('From OPENAI_API_KEY: a change of that variable takes effect at the next start.');

    await createInForm(page, { name: GOOD, key: SIM_KEY, models: 'sim-chat' });
    expect(await page.getByRole('status').textContent()).toBe(`Saved “${GOOD}”: the gateway now holds 1 model, key set.`);
    expect(await channelNamed(GOOD)).toMatchObject({ type: 'openai', base_url: `${suite.sim.url}/v1`, models: ['sim-chat'], key_set: true, source: 'admin' });
    await row(page, GOOD).getByText('not tested').waitFor();
    await row(page, GOOD)
      .getByRole('button', { name: `Test all models of ${GOOD}` })
      .click();
    const ok = row(page, GOOD).getByTestId('test-ok');
    await ok.waitFor();
    expect(await ok.textContent()).toMatch(/^\d+ ms$/);
    expect(await ok.evaluate((el) => getComputedStyle(el).color)).toBe('rgb(31, 138, 76)');
    const kept = (await channelNamed(GOOD)).last_tests;
    expect(kept).toMatchObject([{ model: 'sim-chat', ok: true, status: 200 }]);
    expect(await ok.textContent()).toBe(`${kept[0].latency_ms} ms`);

    await createInForm(page, { name: WRONG, key: 'sk-not-the-simulator-key', models: 'sim-chat' });
    await row(page, WRONG)
      .getByRole('button', { name: `Test sim-chat of ${WRONG}` })
      .click();
    const bad = row(page, WRONG).getByTestId('test-error');
    await bad.waitFor();
    expect(await bad.textContent()).toMatch(/^401: Incorrect API key provided: /);
    expect((await channelNamed(WRONG)).last_tests[0].error).toMatch(/^Incorrect API key provided/);
    await page.screenshot({ path: join(SHOTS, 'console-channels.png'), fullPage: true });

    // The results are the gateway's: a reload shows them again.
    await page.reload();
    await row(page, GOOD).getByTestId('test-ok').waitFor();
    expect(await row(page, WRONG).getByTestId('test-error').textContent()).toContain('Incorrect API key provided');
    expect(errors).toEqual([]);
    await context.close();
  }, 120_000);

  it('tests every channel at once and sums up what failed; a search is kept in the address', async () => {
    const { context, page, errors } = await openChannels();
    await page.getByRole('button', { name: 'Test all channels' }).click();
    const summary = page.getByRole('region', { name: 'Test of all channels' });
    await summary.getByRole('status').waitFor({ timeout: 60_000 });
    const tested = ENV_MODELS.length + 2;
    expect(await summary.getByRole('status').textContent()).toMatch(
      new RegExp(`^Tested ${tested} models on 3 channels in [\\d.]+ s: ${tested - 1} passed, 1 failed\\.$`),
    );
    const failures = await summary.getByRole('listitem').allTextContents();
    expect(failures).toHaveLength(1);
    expect(failures[0]).toContain(`${WRONG} (#${(await channelNamed(WRONG)).id}) · sim-chat`);
    expect(failures[0]).toContain('401: Incorrect API key provided');
    // Every row of the list shows its fresh result.
    for (const m of ENV_MODELS) await row(page, 'openai (from environment)').locator(`[data-model="${m}"]`).getByTestId('test-ok').waitFor();
    await page.screenshot({ path: join(SHOTS, 'console-channels-test-all.png'), fullPage: true });

    await page.getByRole('searchbox', { name: 'Search channels' }).fill('wrong');
    await page.getByRole('button', { name: 'Search', exact: true }).click();
    await page.getByText('Matching channels: 1').waitFor();
    expect(new URL(page.url()).search).toBe('?q=wrong');
    await page.reload();
    await page.getByText('Matching channels: 1').waitFor();
    expect(await page.getByRole('row').count()).toBe(2); // the head and one channel
    await row(page, WRONG).waitFor();
    expect(errors).toEqual([]);
    await context.close();
  }, 120_000);

  it('edits a channel: what the gateway holds is read back, and an empty key field keeps the key', async () => {
    const { context, page, errors } = await openChannels();
    await page.getByRole('button', { name: `Edit ${GOOD}` }).click();
    const form = page.getByRole('form', { name: `Edit channel ${GOOD}` });
    expect(await form.getByLabel('Key').inputValue()).toBe('');
    await form.getByText('A key is set and is never shown.').waitFor();
    await form.getByLabel('Priority').fill('5');
    await form.getByLabel('Weight').fill('3');
    await form.getByLabel('Models').fill('sim-chat\nalias-chat');
    await form.getByLabel('Model mapping').fill('{"alias-chat": "sim-chat"}');
    // Azure's API version is asked for Azure only.
    expect(await form.getByLabel('Azure API version').count()).toBe(0);
    await form.getByLabel('Provider type').selectOption('azure');
    await form.getByLabel('Azure API version').waitFor();
    await form.getByLabel('Provider type').selectOption('openai');
    await form.getByRole('button', { name: 'Save' }).click();
    await page
      .getByRole('status')
      .filter({ hasText: `Saved “${GOOD}”: the gateway now holds 2 models, key set.` })
      .waitFor();
    expect(await channelNamed(GOOD)).toMatchObject({
      priority: 5,
      weight: 3,
      models: ['sim-chat', 'alias-chat'],
      model_mapping: { 'alias-chat': 'sim-chat' },
      key_set: true,
      options: {},
    });
    const goodRow = row(page, GOOD);
    expect(await goodRow.locator('td').nth(2).textContent()).toBe('5');
    expect(await goodRow.locator('td').nth(3).textContent()).toBe('3');
    // The key it kept is the simulator's: the mapped model answers.
    await goodRow.getByRole('button', { name: `Test alias-chat of ${GOOD}` }).click();
    await goodRow.locator('[data-model="alias-chat"]').getByTestId('test-ok').waitFor();
    await goodRow.getByText('→ sim-chat').waitFor();

    // A bad mapping is refused in place, and nothing changes.
    await page.getByRole('button', { name: `Edit ${GOOD}` }).click();
    await form.getByLabel('Weight').fill('9');
    await form.getByLabel('Model mapping').fill('not json');
    await form.getByRole('button', { name: 'Save' }).click();
    expect(await form.getByRole('alert').textContent()).toContain('The model mapping must be a JSON object of names');
    expect((await channelNamed(GOOD)).weight).toBe(3);
    // The gateway's own refusal is shown with its message (the field named).
    await form.getByLabel('Model mapping').fill('');
    await form.getByLabel('Base URL', { exact: true }).fill('ftp://nowhere');
    await form.getByRole('button', { name: 'Save' }).click();
    await form.getByRole('alert').filter({ hasText: "Invalid 'base_url'" }).waitFor();
    await form.getByRole('button', { name: 'Cancel' }).click();
    expect(await channelNamed(GOOD)).toMatchObject({ weight: 3, base_url: `${suite.sim.url}/v1` });
    expect(errors).toEqual([]);
    await context.close();
  }, 120_000);

  it('says why a model was auto-disabled and when it is tested again; enables it; disables and deletes channels', async () => {
    const created = await suite.api('/api/channels', {
      json: { name: FLAKY, type: 'openai', base_url: `${suite.sim.url}/v1`, key: SIM_KEY, models: ['sim-503'] },
    });
    const { key } = await suite.api('/api/tokens', { json: { name: 'channels test' } });
    for (let i = 0; i < 2; i++) {
      const res = await fetch(`${suite.url}/v1/chat/completions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'sim-503', messages: [{ role: 'user', content: 'hi' }] }),
      });
      expect(res.status).toBe(503);
    }
    const disabled = (await suite.api(`/api/channels/${created.id}`)).disabled_models;
    expect(disabled).toMatchObject([
      { model: 'sim-503', failures: [{ error: 'The server is overloaded or not ready yet.' }, { error: 'The server is overloaded or not ready yet.' }] },
    ]);

    const { context, page, errors } = await openChannels();
    const flaky = row(page, FLAKY);
    await flaky.getByText('1 model auto-disabled').waitFor();
    await flaky.getByText('auto-disabled', { exact: true }).waitFor();
    // Times as the browser writes them (its clock format, not node's).
    const clock = (t: number) => page.evaluate((at) => new Date(at).toLocaleTimeString('en-US', { hour: '2-digit', minute: '2-digit', second: '2-digit' }), t);
    await flaky.getByText(`Tested again automatically at ${await clock(disabled[0].retest_at)}; enabled if it answers.`).waitFor();
    await flaky.getByText('Why: the failures that disabled it (2)').click();
    const failureLines = await Promise.all(disabled[0].failures.map(async (f: any) => `${await clock(f.at)}${f.error}`));
    expect(await flaky.locator('.ch-failures li').allTextContents()).toEqual(failureLines);
    await page.screenshot({ path: join(SHOTS, 'console-channels-disabled.png'), fullPage: true });
    await flaky.getByRole('button', { name: `Enable sim-503 of ${FLAKY}` }).click();
    await expect.poll(async () => (await suite.api(`/api/channels/${created.id}`)).disabled_models).toEqual([]);
    await flaky.getByText('auto-disabled', { exact: true }).waitFor({ state: 'detached' });

    await flaky.getByRole('button', { name: `Disable ${FLAKY}` }).click();
    await flaky.getByRole('button', { name: `Enable ${FLAKY}` }).waitFor();
    expect((await suite.api(`/api/channels/${created.id}`)).status).toBe('disabled');
    await page.getByLabel('Show').selectOption({ label: 'Disabled' });
    await page.getByText('Matching channels: 1').waitFor();

    await flaky.getByRole('button', { name: `Delete “${FLAKY}”` }).click();
    await flaky.getByRole('button', { name: 'Yes, delete' }).click();
    await page.getByText('No channel matches.').waitFor();
    expect(await channelNamed(FLAKY)).toBeUndefined();
    expect(errors).toEqual([]);
    await context.close();
  }, 120_000);

  it('makes a key pool in the form: the wrong key is disabled alone, with its reason, and enabled by hand', async () => {
    const { context, page, errors } = await openChannels();
    await page.getByRole('button', { name: 'New channel' }).click();
    const form = page.getByRole('form', { name: 'New channel' });
    await form.getByLabel('Name').fill(POOL);
    await form.getByLabel('Provider type').selectOption('openai');
    await form.getByLabel('Base URL', { exact: true }).fill(`${suite.sim.url}/v1`);
    await form.getByLabel('Key').fill(`${SIM_KEY}\n${POOL_WRONG}\n`);
    await form.getByText('Several keys, one a line, make a pool').waitFor();
    expect(await form.getByLabel('Pool order').inputValue()).toBe('round-robin');
    await form.getByLabel('Models').fill('pool-chat');
    await form.getByLabel('Model mapping').fill('{"pool-chat": "sim-chat"}');
    await page.screenshot({ path: join(SHOTS, 'console-channels-key-pool-form.png'), fullPage: true });
    await form.getByRole('button', { name: 'Create channel' }).click();
    await page
      .getByRole('status')
      .filter({ hasText: `Saved “${POOL}”` })
      .waitFor();
    const made = await channelNamed(POOL);
    expect(made.keys.map((k: any) => `${k.hint} ${k.status}`)).toEqual(['sk-...-key enabled', 'sk-...9999 enabled']);

    const { key } = await suite.api('/api/tokens', { json: { name: 'key pool test' } });
    for (let i = 0; i < 4; i++) {
      const res = await fetch(`${suite.url}/v1/chat/completions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'pool-chat', messages: [{ role: 'user', content: `hi ${i}` }] }),
      });
      expect(res.status).toBe(200);
    }
    await page.reload();
    const pool = row(page, POOL);
    await pool.getByText('1 of 2 keys disabled').waitFor();
    await pool.getByText('a pool of 2 keys, taken in turn:').waitFor();
    expect(await pool.locator('.ch-key').allTextContents()).toEqual([
      'sk-...-keyin use',
      expect.stringMatching(/^sk-\.\.\.9999disabled401: Incorrect API key provided: sk-con\*\*\*\*/),
    ]);
    expect(await pool.textContent()).not.toContain(POOL_WRONG);
    await pool.scrollIntoViewIfNeeded();
    await page.screenshot({ path: join(SHOTS, 'console-channels-key-pool.png'), fullPage: true });
    await pool.getByRole('button', { name: `Enable key sk-...9999 of ${POOL}` }).click();
    await expect.poll(async () => (await channelNamed(POOL)).keys[1].status, { timeout: 10_000 }).toBe('enabled');
    await pool.getByText('1 of 2 keys disabled').waitFor({ state: 'detached' });
    // The form says how many keys are kept, never which.
    await pool.getByRole('button', { name: `Edit ${POOL}` }).click();
    await page
      .getByRole('form', { name: `Edit channel ${POOL}` })
      .getByText('2 keys are set and are never shown.')
      .waitFor();
    expect(errors).toEqual([]);
    await context.close();
  }, 120_000);

  it('fits a phone in dark mode, in Chinese too, and keeps working under a page translator', async () => {
    const { context, page, errors } = await openChannels({ width: 375, height: 780 }, 'dark');
    await row(page, GOOD).getByTestId('test-ok').first().waitFor();
    const overflow = () => sideScroll(page);
    expect(await overflow()).toBeLessThanOrEqual(0);
    await page.screenshot({ path: join(SHOTS, 'console-channels-phone-dark.png'), fullPage: true });
    await page.getByRole('button', { name: `Edit ${GOOD}` }).click();
    await page.getByRole('form', { name: `Edit channel ${GOOD}` }).waitFor();
    expect(await overflow()).toBeLessThanOrEqual(0);
    await page.screenshot({ path: join(SHOTS, 'console-channels-phone-form.png'), fullPage: true });
    await page.getByRole('button', { name: '中文' }).click();
    await page.getByRole('heading', { name: '渠道', exact: true }).waitFor();
    await page.getByRole('form', { name: `编辑渠道 ${GOOD}` }).waitFor();
    expect(await overflow()).toBeLessThanOrEqual(0);
    await page.screenshot({ path: join(SHOTS, 'console-channels-phone-zh.png'), fullPage: true });
    // The translator replaces every text node; a test (whose results replace text) and the form still work.
    await translateLikeChrome(page);
    await page
      .getByRole('form', { name: `编辑渠道 ${GOOD}` })
      .getByRole('button', { name: '取消' })
      .click();
    await page.getByRole('form', { name: `编辑渠道 ${GOOD}` }).waitFor({ state: 'detached' });
    const goodRow = page.locator(`tr[data-channel-id="${(await channelNamed(GOOD)).id}"]`);
    const before = (await channelNamed(GOOD)).last_tests[0].tested_at;
    await goodRow.getByRole('button', { name: `测试 ${GOOD} 的全部模型` }).click();
    await expect.poll(async () => (await channelNamed(GOOD)).last_tests[0].tested_at).toBeGreaterThan(before);
    await goodRow
      .getByRole('button', { name: `测试 ${GOOD} 的全部模型` })
      .and(page.locator(':enabled'))
      .waitFor();
    // The row shows the fresh results once the list is read again.
    await expect.poll(() => goodRow.getByTestId('test-ok').count()).toBe(2);
    await goodRow.getByRole('button', { name: `编辑 ${GOOD}` }).click();
    await page.getByRole('form', { name: `编辑渠道 ${GOOD}` }).waitFor();
    expect(errors).toEqual([]);
    await context.close();
  }, 120_000);
});
