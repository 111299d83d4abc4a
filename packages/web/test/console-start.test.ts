// `kbchat start` (the real command: platform and gateway together, as a user
// runs it) serves the gateway's console at the gateway's port: sign in as
// root there and reach the Dashboard and Users pages, while the platform's
// port serves the platform's app. Screenshot: console-start-users.png.
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { noBrowser, openPage } from './browser.js';
import { browserSuite, ROOT_PASSWORD, SHOTS } from './kbchat-start.js';
import { signInToConsole } from './console-suite.js';

if (noBrowser) console.warn(`[skip] kbchat start console browser test: ${noBrowser}`);

describe.skipIf(Boolean(noBrowser))("kbchat start: the gateway's port serves the console", () => {
  const suite = browserSuite('console-start');

  it('signs root in to the console at the gateway port and shows its pages', async () => {
    const { context, page, errors } = await openPage(suite.browser, { locale: 'en-US', viewport: { width: 1280, height: 900 } });
    suite.onFail = page;
    await signInToConsole(page, suite.k.gatewayUrl, 'root', ROOT_PASSWORD);
    const nav = page.getByRole('navigation', { name: 'main' });
    expect(await nav.getByRole('link').allTextContents()).toEqual(['Dashboard', 'Channels', 'Users', 'Tokens', 'Logs', 'Prices']);
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
});
