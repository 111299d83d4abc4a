// The platform's web app as a person meets it, in a real Chromium against a
// real platform (embedded store): / serves the built app, sign-in with the
// accessible names "Username", "Password" and "Sign in", a wrong password
// said in place, the knowledge bases of the team after sign-in, Chinese, a
// phone's width, dark mode, and sign-out. Screenshots go to test-output/web/.
import { mkdirSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadPlatformConfig, startPlatform, type RunningPlatform } from '@kbchat/platform';
import { launch, noBrowser, sideScroll } from './browser.js';

const KEY = 'kbchat-web-test-key-0123456789';
const ROOT_PASSWORD = 'web-test-root-password';
const SHOTS = join(import.meta.dirname, '../../../test-output/web');

if (noBrowser) console.warn(`[skip] web app browser tests: ${noBrowser}`);

describe.skipIf(Boolean(noBrowser))('the platform web app in Chromium', () => {
  let p: RunningPlatform;
  let browser: Browser;

  beforeAll(async () => {
    mkdirSync(SHOTS, { recursive: true });
    const dataDir = mkdtempSync(join(tmpdir(), 'kbchat-web-'));
    p = await startPlatform(loadPlatformConfig({ INITIAL_API_KEY: KEY, ROOT_PASSWORD }, { host: '127.0.0.1', port: 0, dataDir, databaseUrl: 'pglite:memory' }));
    await fetch(`${p.url}/api/core/dataset/create`, {
      method: 'POST',
      headers: { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'Handbook / 手册 %E0' }),
    });
    browser = await launch();
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
    await p?.close();
  });

  it("signs in, shows the team's knowledge bases, and signs out", async () => {
    const page = await browser.newPage({ locale: 'en-US' });
    const errors: string[] = [];
    page.on('pageerror', (e) => errors.push(e.message));
    await page.goto(`${p.url}/`);
    await page.getByLabel('Username').fill('root');
    await page.getByLabel('Password').fill('wrong password');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await expect.poll(() => page.getByRole('alert').textContent()).toContain('Wrong username or password');
    await page.screenshot({ path: join(SHOTS, 'signin-error.png') });

    await page.getByLabel('Password').fill(ROOT_PASSWORD);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { level: 1, name: 'Knowledge bases' }).waitFor();
    await page.getByText('Handbook / 手册 %E0').waitFor();
    await page.screenshot({ path: join(SHOTS, 'datasets.png') });

    // A reload keeps the session (the cookie), and the page still works.
    await page.reload();
    await page.getByText('Handbook / 手册 %E0').waitFor();
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByRole('button', { name: 'Sign in' }).waitFor();
    expect(errors).toEqual([]);
    await page.close();
  });

  it('speaks Chinese, fits a phone, and follows dark mode', async () => {
    const context = await browser.newContext({ locale: 'zh-CN', viewport: { width: 375, height: 740 }, colorScheme: 'dark' });
    const page = await context.newPage();
    await page.goto(`${p.url}/`);
    await page.getByLabel('用户名').fill('root');
    await page.getByLabel('密码').fill(ROOT_PASSWORD);
    await page.getByRole('button', { name: '登录' }).click();
    await page.getByRole('heading', { level: 1, name: '知识库' }).waitFor();
    const overflow = await sideScroll(page);
    expect(overflow).toBeLessThanOrEqual(0);
    const background = await page.evaluate(() => getComputedStyle(document.documentElement).backgroundColor);
    expect(background).toBe('rgb(22, 22, 24)');
    await page.screenshot({ path: join(SHOTS, 'datasets-zh-phone-dark.png') });
    // Every entry of the navigation on screen (none hidden past the edge without a cue).
    const links = page.getByRole('navigation', { name: 'main' }).getByRole('link');
    // Knowledge bases, Applications, Tools, API keys, Models and Team.
    expect(await links.count()).toBe(6);
    for (const box of await Promise.all((await links.all()).map((l) => l.boundingBox()))) expect(box!.x + box!.width).toBeLessThanOrEqual(375);

    // The chat's Send button says 发送 on one line.
    const appId = await page.evaluate(async () => {
      const me = await (await fetch('/api/auth/me')).json();
      const res = await fetch('/api/core/app/create', {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-csrf-token': me.data.csrfToken },
        body: JSON.stringify({ name: 'Phone chat', model: 'local-extractive' }),
      });
      return (await res.json()).data as string;
    });
    await page.goto(`${p.url}/chat?appId=${appId}`);
    const send = page.getByRole('button', { name: '发送' });
    await send.waitFor();
    expect(await send.locator('span').evaluate((s) => s.getClientRects().length)).toBe(1);
    await page.screenshot({ path: join(SHOTS, 'chat-zh-phone-dark.png') });
    // In English the entries are wider: the navigation wraps, each entry whole and on screen.
    await page.getByRole('button', { name: 'English' }).click();
    await page.getByRole('button', { name: 'Send' }).waitFor();
    for (const box of await Promise.all((await links.all()).map((l) => l.boundingBox()))) expect(box!.x + box!.width).toBeLessThanOrEqual(375);
    expect(await sideScroll(page)).toBeLessThanOrEqual(0);
    await page.screenshot({ path: join(SHOTS, 'chat-en-phone-dark.png') });
    await context.close();
  });
});
