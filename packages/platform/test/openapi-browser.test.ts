// /docs in a real browser (Debian's Chromium): Swagger UI renders the
// platform's document, every request it makes goes to the platform itself
// (anything else is recorded and refused, as on a machine with no network),
// and the page's Content-Security-Policy blocks nothing it needs.
// Screenshot: test-output/web/docs-platform.png.
import { mkdirSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
const SHOTS = join(import.meta.dirname, '../../../test-output/web');
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launch, noBrowser, openPage } from '../../e2e/test/browser.js';
import { loadPlatformConfig, startPlatform } from '../src/index.js';

if (noBrowser) console.warn(`skipping the /docs browser test: ${noBrowser}`);

describe.skipIf(!!noBrowser)('/docs in a browser', () => {
  let platform: Awaited<ReturnType<typeof startPlatform>>;
  let browser: Browser;
  beforeAll(async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'kbchat-docs-browser-'));
    [platform, browser] = await Promise.all([
      startPlatform(loadPlatformConfig({}, { host: '127.0.0.1', port: 0, dataDir, databaseUrl: 'pglite:memory' }), () => {}),
      launch(),
    ]);
  });
  afterAll(async () => {
    await browser?.close();
    await platform?.close();
  });

  it('renders the document with nothing from outside the platform', async () => {
    const { context, page, errors } = await openPage(browser);
    const outside: string[] = [];
    const own: string[] = [];
    await context.route('**/*', (route) => {
      const url = route.request().url();
      if (url.startsWith(`${platform.url}/`) || url.startsWith('data:')) {
        own.push(url);
        return route.continue();
      }
      outside.push(url);
      return route.abort();
    });
    const refused: string[] = [];
    page.on('console', (m) => {
      if (/Content Security Policy|Refused to/i.test(m.text())) refused.push(m.text());
    });
    await page.goto(`${platform.url}/docs`);
    // A group of the document, and one operation in it, once the tag is opened.
    const tag = page.locator('.opblock-tag', { hasText: 'knowledge bases' });
    await tag.waitFor({ timeout: 15_000 });
    await tag.click();
    await page.locator('.opblock-summary-path', { hasText: '/api/core/dataset/create' }).first().waitFor({ timeout: 5_000 });
    expect(await page.locator('.info .title').textContent()).toContain('kbchat platform');
    expect(outside).toEqual([]);
    expect(refused).toEqual([]);
    expect(errors).toEqual([]);
    expect(own.some((u) => u.endsWith('/docs/json'))).toBe(true);
    mkdirSync(SHOTS, { recursive: true });
    await page.screenshot({ path: join(SHOTS, 'docs-platform.png'), fullPage: false });
    await context.close();
  });
});
