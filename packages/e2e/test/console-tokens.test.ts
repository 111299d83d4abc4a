// The console's tokens page in Chromium against the real `kbchat gateway`
// with the simulator as provider: root creates a token (its key shown once),
// and the official `openai` client calls the gateway with it; edits (quota,
// models, disable) are read back from the API and take effect on the relay;
// the owner filter lives in the URL; a plain user signs in, sees only the
// Tokens page and only its own tokens. Screenshots: console-tokens-*.png.
import { join } from 'node:path';
import OpenAI from 'openai';
import { describe, expect, it } from 'vitest';
import { noBrowser, openPage, sideScroll } from './browser.js';
import { consoleSuite, openConsole, signInToConsole } from './console-suite.js';
import { SHOTS } from './kbchat-start.js';

if (noBrowser) console.warn(`[skip] console tokens browser tests: ${noBrowser}`);

describe.skipIf(Boolean(noBrowser))('the console: tokens', () => {
  const suite = consoleSuite('console-tokens');

  it('creates a token shown once, uses it with the openai client, edits and disables it (each read back)', async () => {
    const { context, page, errors } = await openConsole(suite, { locale: 'en-US', viewport: { width: 1280, height: 900 } });
    await page.getByRole('link', { name: 'Tokens' }).click();
    await page.getByRole('heading', { name: 'Tokens' }).waitFor();

    await page.getByRole('button', { name: 'New token' }).click();
    const form = page.getByRole('form', { name: 'New token' });
    await form.getByLabel('Name').fill('sdk');
    await form.getByLabel('Models').fill('sim-chat');
    await form.getByRole('button', { name: 'Create token' }).click();
    const key = (await page.getByTestId('new-key').textContent())!;
    expect(key).toMatch(/^sk-/);
    await page.screenshot({ path: join(SHOTS, 'console-tokens-created.png'), fullPage: true });
    const row = page.getByRole('row').filter({ hasText: 'sdk' });
    await row.waitFor();
    // The list shows only the hint, never the key.
    expect(await row.textContent()).not.toContain(key);
    expect(await row.textContent()).toContain(`${key.slice(0, 3)}...${key.slice(-4)}`);

    const client = new OpenAI({ apiKey: key, baseURL: `${suite.url}/v1`, maxRetries: 0 });
    const answer = await client.chat.completions.create({ model: 'sim-chat', messages: [{ role: 'user', content: 'hello console' }] });
    expect(answer.choices[0]!.message.content).toContain('hello console');
    // The token's model allow-list holds: another model is refused.
    await expect(client.embeddings.create({ model: 'sim-embed-8', input: 'x' })).rejects.toThrow(/sim-embed-8/);

    const [created] = (await suite.api('/api/tokens')).data.filter((x: any) => x.name === 'sdk');
    await page.getByRole('button', { name: 'Edit token sdk' }).click();
    const edit = page.getByRole('form', { name: 'Edit token sdk' });
    await edit.getByLabel('Quota (units)').fill('0.5');
    await edit.getByLabel('Models').fill('sim-chat, sim-embed-8');
    await edit.getByRole('button', { name: 'Save' }).click();
    expect(await page.getByRole('status').textContent()).toBe('Saved: token sdk as the gateway now holds it.');
    const saved = await suite.api(`/api/tokens/${created.id}`);
    expect(saved).toMatchObject({ quota_limit_micros: 500_000, models: ['sim-chat', 'sim-embed-8'] });
    await expect.poll(() => row.getByTestId('quota').textContent()).toMatch(/ of 0\.5$/);
    expect((await client.embeddings.create({ model: 'sim-embed-8', input: 'x' })).data[0]!.embedding).toHaveLength(8);

    // A bad quota is refused in place; nothing changes.
    await page.getByRole('button', { name: 'Edit token sdk' }).click();
    await page.getByLabel('Quota (units)').fill('-2');
    await page.getByRole('button', { name: 'Save' }).click();
    await page.getByText('Enter a quota in units (0 or more), or leave it empty.').waitFor();
    expect((await suite.api(`/api/tokens/${created.id}`)).quota_limit_micros).toBe(500_000);
    await page.getByRole('button', { name: 'Cancel' }).click();

    await page.getByRole('button', { name: 'Disable token sdk' }).click();
    await page.getByRole('button', { name: 'Enable token sdk' }).waitFor();
    expect((await suite.api(`/api/tokens/${created.id}`)).status).toBe('disabled');
    await expect(client.chat.completions.create({ model: 'sim-chat', messages: [{ role: 'user', content: 'x' }] })).rejects.toMatchObject({ status: 401 });
    await page.getByRole('button', { name: 'Enable token sdk' }).click();
    await page.getByRole('button', { name: 'Disable token sdk' }).waitFor();
    await page.screenshot({ path: join(SHOTS, 'console-tokens.png'), fullPage: true });
    expect(errors).toEqual([]);
    await context.close();
  }, 90_000);

  it('filters by owner in the URL; a plain user sees only the Tokens page and only its own tokens', async () => {
    const alice = await suite.api('/api/users', { json: { username: 'alice', password: 'alice-password' } });
    await suite.api('/api/tokens', { json: { user_id: alice.id, name: 'alice-ci' } });
    await suite.api('/api/tokens', { json: { name: 'root-only' } });

    const admin = await openPage(suite.browser, { locale: 'en-US', viewport: { width: 1280, height: 900 } });
    suite.onFail = admin.page;
    await signInToConsole(admin.page, suite.url);
    await admin.page.goto(`${suite.url}/tokens`);
    await admin.page.getByLabel(/^Owner/).selectOption({ label: 'alice' });
    await admin.page.getByText('alice-ci', { exact: true }).waitFor();
    await expect.poll(() => admin.page.getByText('root-only', { exact: true }).count()).toBe(0);
    expect(new URL(admin.page.url()).searchParams.get('user')).toBe(String(alice.id));
    await admin.page.reload();
    await admin.page.getByText('alice-ci', { exact: true }).waitFor();
    expect(await admin.page.getByText('root-only', { exact: true }).count()).toBe(0);
    // The owner filter searches users on the gateway by name.
    await admin.page.getByLabel('Find an owner by name').fill('ALI');
    await expect
      .poll(() =>
        admin.page
          .getByLabel(/^Owner/)
          .locator('option')
          .allTextContents(),
      )
      .toEqual(['Everyone', 'alice']);
    await admin.page.getByLabel('Find an owner by name').fill('');
    await expect
      .poll(() =>
        admin.page
          .getByLabel(/^Owner/)
          .locator('option')
          .allTextContents(),
      )
      .toEqual(['Everyone', 'root', 'alice']);
    // A hand-edited owner that is no id is dropped (everyone's tokens), not the API's 400 over the page.
    await admin.page.goto(`${suite.url}/tokens?user=%zz`);
    await admin.page.getByText('root-only', { exact: true }).waitFor();
    await admin.page.getByText('alice-ci', { exact: true }).waitFor();
    expect(await admin.page.getByRole('alert').count()).toBe(0);
    expect(await admin.page.getByLabel(/^Owner/).inputValue()).toBe('');
    await admin.context.close();

    const { page, context, errors } = await openPage(suite.browser, { locale: 'en-US', viewport: { width: 375, height: 780 }, colorScheme: 'dark' });
    suite.onFail = page;
    await signInToConsole(page, suite.url, 'alice', 'alice-password');
    await page.getByRole('heading', { name: 'Tokens' }).waitFor();
    const nav = page.getByRole('navigation', { name: 'main' });
    expect(await nav.getByRole('link').allTextContents()).toEqual(['Tokens']);
    await page.getByText('alice-ci', { exact: true }).waitFor();
    expect(await page.getByText('root-only', { exact: true }).count()).toBe(0);
    expect(await page.getByText('Your API tokens.', { exact: false }).count()).toBe(1);

    await page.getByRole('button', { name: 'New token' }).click();
    await page.getByLabel('Name').fill('alice-phone');
    await page.getByRole('button', { name: 'Create token' }).click();
    await page.getByTestId('new-key').waitFor();
    await page.getByText('alice-phone', { exact: true }).waitFor();
    expect((await suite.api(`/api/tokens?user_id=${alice.id}`)).data.map((x: any) => x.name)).toEqual(['alice-ci', 'alice-phone']);
    expect(await sideScroll(page)).toBeLessThanOrEqual(0);
    await page.screenshot({ path: join(SHOTS, 'console-tokens-plain-user-phone-dark.png'), fullPage: true });

    // Delete asks first, then deletes; the API agrees.
    await page.getByRole('button', { name: 'Delete “alice-ci”' }).click();
    await page.getByRole('button', { name: 'Yes, delete' }).click();
    await expect.poll(() => page.getByText('alice-ci', { exact: true }).count()).toBe(0);
    expect((await suite.api(`/api/tokens?user_id=${alice.id}`)).data.map((x: any) => x.name)).toEqual(['alice-phone']);
    // The admin pages are not there for a plain user.
    await page.goto(`${suite.url}/users`);
    await page.getByRole('alert').waitFor();
    expect(errors).toEqual([]);
    await context.close();
  }, 90_000);
});
