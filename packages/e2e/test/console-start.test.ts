// `kbchat start` (the real command: platform and gateway together, as a user
// runs it) serves the gateway's console at the gateway's port: sign in as
// root there and reach the Dashboard and Users pages, while the platform's
// port serves the platform's app. The platform's own token is named on the
// Tokens page and asks before it is disabled or deleted; no page logs a
// console error (the icon answers on both ports). Screenshots:
// console-start-users.png, console-start-platform-token.png.
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { noBrowser, openPage } from './browser.js';
import { browserSuite, ROOT_PASSWORD, SHOTS, signIn } from './kbchat-start.js';
import { signInToConsole } from './console-suite.js';

/** The admin API with a root session, as a script calls it. */
async function rootApi(gatewayUrl: string): Promise<<T = any>(path: string) => Promise<T>> {
  const login = await fetch(`${gatewayUrl}/api/auth/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ username: 'root', password: ROOT_PASSWORD }),
  });
  const { session } = (await login.json()) as { session: string };
  return async (path) => (await fetch(`${gatewayUrl}${path}`, { headers: { authorization: `Bearer ${session}` } })).json();
}

if (noBrowser) console.warn(`[skip] kbchat start console browser test: ${noBrowser}`);

describe.skipIf(Boolean(noBrowser))("kbchat start: the gateway's port serves the console", () => {
  const suite = browserSuite('console-start');

  it('signs root in to the console at the gateway port and shows its pages', async () => {
    const { context, page, errors } = await openPage(suite.browser, { locale: 'en-US', viewport: { width: 1280, height: 900 } });
    suite.onFail = page;
    await signInToConsole(page, suite.k.gatewayUrl, 'root', ROOT_PASSWORD);
    const nav = page.getByRole('navigation', { name: 'main' });
    expect(await nav.getByRole('link').allTextContents()).toEqual(['Dashboard', 'Channels', 'Users', 'Tokens', 'Top-up codes', 'Logs', 'Prices', 'Groups']);
    await page.getByRole('heading', { name: 'Dashboard' }).waitFor();
    await nav.getByRole('link', { name: 'Users' }).click();
    await page.getByRole('row').filter({ hasText: 'root' }).getByTestId('balance').waitFor();
    await page.screenshot({ path: join(SHOTS, 'console-start-users.png'), fullPage: true });
    // The platform's own port is the platform's app, not the console.
    const platformPage = await (await fetch(`${suite.k.url}/`)).text();
    const consolePage = await (await fetch(`${suite.k.gatewayUrl}/`)).text();
    expect(consolePage).not.toBe(platformPage);
    expect(errors).toEqual([]);
    await context.close();
  }, 120_000);

  it("names the platform's token, and disabling or deleting it asks first, saying that chat and indexing stop", async () => {
    const api = await rootApi(suite.k.gatewayUrl);
    const tokens = (await api('/api/tokens')).data as Array<{ id: number; name: string; status: string; platform: boolean }>;
    const platform = tokens.find((t) => t.platform)!;
    expect(platform, JSON.stringify(tokens)).toBeDefined();
    expect(tokens.filter((t) => t.platform)).toHaveLength(1);
    const statusOf = async () => (await api(`/api/tokens/${platform.id}`)).status;

    const { context, page, errors } = await openPage(suite.browser, { locale: 'en-US', viewport: { width: 1280, height: 900 } });
    suite.onFail = page;
    await signInToConsole(page, suite.k.gatewayUrl, 'root', ROOT_PASSWORD);
    await page.getByRole('navigation', { name: 'main' }).getByRole('link', { name: 'Tokens' }).click();
    const row = page.getByRole('row').filter({ hasText: platform.name });
    await row.getByText('Platform token').waitFor();
    expect(await row.textContent()).toContain('The platform calls the gateway with this token: every chat answer and all indexing go through it.');

    // Disable asks, saying what stops; Cancel leaves it enabled.
    await row.getByRole('button', { name: `Disable token ${platform.name}` }).click();
    const ask = page.getByRole('alertdialog', { name: `Disable token ${platform.name}` });
    expect(await ask.textContent()).toContain(
      `Disable “${platform.name}”, the platform’s token?Chat and indexing stop: the gateway refuses every call the platform makes until the token is enabled again.`,
    );
    await page.screenshot({ path: join(SHOTS, 'console-start-platform-token.png'), fullPage: true });
    await ask.getByRole('button', { name: 'Cancel' }).click();
    await ask.waitFor({ state: 'detached' });
    expect(await statusOf()).toBe('enabled');
    // Confirmed, it is disabled; enabling again does not ask.
    await row.getByRole('button', { name: `Disable token ${platform.name}` }).click();
    await ask.getByRole('button', { name: 'Disable: stop chat and indexing' }).click();
    await row.getByRole('button', { name: `Enable token ${platform.name}` }).waitFor();
    expect(await statusOf()).toBe('disabled');
    await row.getByRole('button', { name: `Enable token ${platform.name}` }).click();
    await row.getByRole('button', { name: `Disable token ${platform.name}` }).waitFor();
    expect(await statusOf()).toBe('enabled');

    // Delete asks too; Cancel keeps it.
    await row.getByRole('button', { name: `Delete “${platform.name}”` }).click();
    const del = page.getByRole('alertdialog', { name: `Delete “${platform.name}”` });
    expect(await del.textContent()).toContain(`Delete “${platform.name}”, the platform’s token?Chat and indexing stop`);
    await del.getByRole('button', { name: 'Cancel' }).click();
    await del.waitFor({ state: 'detached' });
    expect(await statusOf()).toBe('enabled');
    expect(errors).toEqual([]);
    await context.close();
  }, 120_000);

  it('no page logs a console error: both ports answer the icon the pages link', async () => {
    for (const base of [suite.k.url, suite.k.gatewayUrl]) {
      for (const path of ['/favicon.ico', '/favicon.svg']) {
        const res = await fetch(`${base}${path}`);
        expect(res.status, `${base}${path}`).toBe(200);
        expect(res.headers.get('content-type')).toBe('image/svg+xml');
        expect(await res.text()).toMatch(/^<svg /);
      }
    }
    // Signed in to both (the sign-in pages' own "who am I" answers 401, which Chromium logs), then each page loaded afresh.
    const { context, page: signing, errors } = await openPage(suite.browser, { locale: 'en-US', viewport: { width: 1280, height: 900 } });
    await signIn(signing, suite.k.url);
    await signInToConsole(signing, suite.k.gatewayUrl, 'root', ROOT_PASSWORD);
    await signing.close();
    const page = await context.newPage();
    suite.onFail = page;
    page.on('pageerror', (e) => errors.push(e.message));
    const consoleErrors: string[] = [];
    page.on('console', (m) => m.type() === 'error' && consoleErrors.push(`${page.url()}: ${m.text()}`));
    const icons: string[] = [];
    page.on('response', (r) => /\/favicon\.(ico|svg)$/.test(r.url()) && icons.push(`${r.status()} ${r.url()}`));
    for (const [base, path, heading] of [
      [suite.k.url, '/datasets', 'Knowledge bases'],
      [suite.k.url, '/keys', 'API keys'],
      [suite.k.gatewayUrl, '/', 'Dashboard'],
      [suite.k.gatewayUrl, '/logs', 'Logs'],
    ]) {
      await page.goto(`${base}${path}`);
      await page.getByRole('heading', { name: heading, level: 1 }).waitFor();
      // The browser fetches the icon on its own time: each page's load has asked for it before the next.
      await expect.poll(() => icons.filter((i) => i.includes(base)).length, { timeout: 10_000 }).toBeGreaterThanOrEqual(1);
    }
    expect(icons.filter((i) => !i.startsWith('200 '))).toEqual([]);
    expect(consoleErrors).toEqual([]);
    expect(errors).toEqual([]);
    await context.close();
  }, 120_000);
});
