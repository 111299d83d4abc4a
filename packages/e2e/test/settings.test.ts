// The settings pages in Chromium against `kbchat start`: the setup checklist a
// new install shows (its first step gone as soon as a knowledge base is made),
// the models the gateway serves, API keys (shown once, working, deleted, and
// the base URL to use them with), and root adding a member who signs in and is
// removed.
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { noBrowser, sideScroll } from './browser.js';
import { TRANSLATED_MARK, translateLikeChrome } from './page-translator.js';
import { browserSuite, SHOTS, signIn } from './kbchat-start.js';

if (noBrowser) console.warn(`[skip] settings pages browser tests: ${noBrowser}`);

describe.skipIf(Boolean(noBrowser))('the settings pages in Chromium', () => {
  const suite = browserSuite('settings');

  it('shows the first steps, and the models the gateway serves', async () => {
    const page = await suite.browser.newPage();
    const errors: string[] = [];
    page.on('pageerror', (e) => errors.push(e.message));
    await signIn(page, suite.k.url);
    const checklist = page.getByRole('complementary', { name: 'Before you start' });
    await expect.poll(() => checklist.textContent()).toContain('Create your first knowledge base');
    // Both local models are served: the checklist names no missing model.
    expect(await checklist.textContent()).not.toContain('No chat model');

    // Making a knowledge base takes the first step off at once, not at the checklist's next 15 s read.
    await page.getByRole('navigation', { name: 'main' }).getByRole('link', { name: 'Knowledge bases' }).click();
    const create = page.getByRole('form', { name: 'New knowledge base' });
    await create.getByLabel('Name').fill('First steps');
    await create.getByRole('button', { name: 'Create knowledge base' }).click();
    await page.waitForURL(/\/datasets\/\w+$/);
    const made = Date.now();
    await expect.poll(() => page.getByText('Create your first knowledge base').count(), { timeout: 5_000, intervals: [100] }).toBe(0);
    expect(Date.now() - made).toBeLessThan(5_000);

    await page.getByRole('link', { name: 'Models' }).click();
    await page.getByRole('heading', { name: 'Models' }).waitFor();
    const rows = page.getByRole('row');
    await expect.poll(() => rows.count()).toBe(3); // header, local-extractive, local-embed
    for (const model of ['local-extractive', 'local-embed']) {
      const row = page.getByRole('row').filter({ hasText: model });
      expect(await row.textContent()).toContain('served');
      expect(await row.textContent()).not.toContain('not served');
    }
    await page.screenshot({ path: join(SHOTS, 'settings-models.png'), fullPage: true });
    expect(errors).toEqual([]);
    await page.close();
  });

  it('creates a key shown once that works, lists it, and deletes it', async () => {
    const context = await suite.browser.newContext({ permissions: ['clipboard-read', 'clipboard-write'] });
    const page = await context.newPage();
    await signIn(page, suite.k.url);
    await page.goto(`${suite.k.url}/keys`);
    await page.getByLabel('Key name').fill('CI key / 测试 %E0');
    await page.getByRole('button', { name: 'Create key' }).click();
    const shown = page.getByTestId('new-key');
    await shown.waitFor();
    const key = (await shown.textContent())!;
    expect(key).toMatch(/^\S{20,}$/);
    await page.getByRole('button', { name: 'Copy', exact: true }).click();
    expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(key);

    // The base URL to use it with: this platform's own address (the page's origin), and the API answers there.
    const baseUrl = `${suite.k.url}/api/v1`;
    const base = page.getByRole('region', { name: 'Base URL' });
    expect(await base.getByTestId('base-url').textContent()).toBe(baseUrl);
    await base.getByRole('button', { name: 'Copy URL' }).click();
    expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(baseUrl);
    // A general key at its /models: the chat API's own refusal (it wants an application key), not a 404.
    const models = await fetch(`${baseUrl}/models`, { headers: { authorization: `Bearer ${key}` } });
    expect(models.status).toBe(403);
    expect(JSON.stringify(await models.json())).toContain('app key');

    // The key works as a general key, and the list shows only its hint.
    const listed = await fetch(`${suite.k.url}/api/core/dataset/list`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: '{}',
    });
    expect(listed.status).toBe(200);
    const row = page.getByRole('row').filter({ hasText: 'CI key / 测试 %E0' });
    await row.waitFor();
    expect(await row.textContent()).not.toContain(key);
    expect(await row.textContent()).toContain('General');
    await page.screenshot({ path: join(SHOTS, 'settings-keys.png'), fullPage: true });

    // Shown once: a reload no longer has it.
    await page.reload();
    await row.waitFor();
    expect(await page.content()).not.toContain(key);

    await row.getByRole('button', { name: 'Delete “CI key / 测试 %E0”' }).click();
    await row.getByRole('button', { name: 'Yes, delete' }).click();
    await expect.poll(() => row.count()).toBe(0);
    const refused = await fetch(`${suite.k.url}/api/core/dataset/list`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: '{}',
    });
    expect(refused.status).toBe(401);
    await context.close();
  });

  it('lets root add a member who can sign in, and remove them', async () => {
    const page = await suite.browser.newPage();
    await signIn(page, suite.k.url);
    await page.getByRole('link', { name: 'Team' }).click();
    await page.getByLabel('Username').fill('alice');
    await page.getByLabel(/Initial password/).fill('short');
    await page.getByRole('button', { name: 'Add member' }).click();
    // The platform's own message, naming the field.
    await expect.poll(() => page.getByRole('alert').textContent()).toContain('password');
    await page.getByLabel(/Initial password/).fill('alice-password-1');
    await page.getByRole('button', { name: 'Add member' }).click();
    const row = page.getByRole('row').filter({ hasText: 'alice' });
    await row.waitFor();
    expect(await row.textContent()).toContain('member');
    await page.screenshot({ path: join(SHOTS, 'settings-team.png'), fullPage: true });

    // Alice signs in elsewhere, and sees no Team page.
    const other = await suite.browser.newContext();
    const alice = await other.newPage();
    await alice.goto(`${suite.k.url}/`);
    await alice.getByLabel('Username').fill('alice');
    await alice.getByLabel('Password').fill('alice-password-1');
    await alice.getByRole('button', { name: 'Sign in' }).click();
    await alice.getByRole('navigation', { name: 'main' }).waitFor();
    expect(await alice.getByRole('link', { name: 'Team' }).count()).toBe(0);

    await row.getByRole('button', { name: 'Delete “alice”' }).click();
    await row.getByRole('button', { name: 'Yes, delete' }).click();
    await expect.poll(() => row.count()).toBe(0);
    // Her session ended with her.
    await alice.reload();
    await alice.getByRole('button', { name: 'Sign in' }).waitFor();
    await other.close();
    await page.close();
  });

  it('keeps working while a page translator rewrites its text', async () => {
    const page = await suite.browser.newPage();
    const errors: string[] = [];
    page.on('pageerror', (e) => errors.push(e.message));
    await signIn(page, suite.k.url);
    await translateLikeChrome(page);
    await page.reload();
    await expect.poll(() => page.locator('font[data-translated]').count()).toBeGreaterThan(3);
    // Pages whose text changes under the translator's <font>s: switch pages, switch language, add and remove a key.
    for (const [name, path] of [
      ['Models', '/models'],
      ['API keys', '/keys'],
      ['Team', '/team'],
      ['Knowledge bases', '/datasets'],
      ['API keys', '/keys'],
    ] as const) {
      await page.getByRole('link', { name: `${TRANSLATED_MARK}${name}` }).click();
      await page.waitForURL(`${suite.k.url}${path}`);
    }
    await page.getByLabel(`${TRANSLATED_MARK}Key name`).fill('translated key');
    await page.getByRole('button', { name: `${TRANSLATED_MARK}Create key` }).click();
    const row = page.getByRole('row').filter({ hasText: 'translated key' });
    await row.waitFor();
    await row.getByRole('button', { name: /Delete/ }).click();
    await row.getByRole('button', { name: /Yes, delete/ }).click();
    await expect.poll(() => row.count()).toBe(0);
    await page.getByRole('button', { name: `${TRANSLATED_MARK}中文` }).click();
    await page.getByRole('heading', { name: `${TRANSLATED_MARK}API 密钥` }).waitFor();
    // No stale English left beside the Chinese: React replaced what it owns.
    expect(await page.getByRole('navigation', { name: 'main' }).textContent()).not.toContain('Models');
    await page.screenshot({ path: join(SHOTS, 'settings-translated.png'), fullPage: true });
    expect(errors).toEqual([]);
    await page.close();
  });

  it('fits a phone and follows dark mode', async () => {
    const context = await suite.browser.newContext({ viewport: { width: 375, height: 740 }, colorScheme: 'dark' });
    const page = await context.newPage();
    await signIn(page, suite.k.url);
    for (const path of ['/keys', '/models', '/team']) {
      await page.goto(`${suite.k.url}${path}`);
      await page.getByRole('heading', { level: 1 }).waitFor();
      const overflow = await sideScroll(page);
      expect(overflow, path).toBeLessThanOrEqual(0);
    }
    await page.screenshot({ path: join(SHOTS, 'settings-team-phone-dark.png'), fullPage: true });
    await context.close();
  });
});
