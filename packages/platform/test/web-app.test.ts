// The platform serves the built web app at its root (no second server): the
// page at /, its hashed assets cached for a year, and, where the app was not
// built, a page at / that says so and how to build it, instead of a 404.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadPlatformConfig, startPlatform } from '../src/index.js';

async function platform(overrides: { webDir?: string } = {}) {
  const dataDir = mkdtempSync(join(tmpdir(), 'kbchat-web-serve-'));
  return startPlatform(loadPlatformConfig({}, { host: '127.0.0.1', port: 0, dataDir, databaseUrl: 'pglite:memory', ...overrides }), () => {});
}

describe('the web app at the platform root', () => {
  it('serves the page and its assets from packages/web/dist', async () => {
    const p = await platform();
    try {
      const page = await fetch(`${p.url}/`);
      expect(page.status).toBe(200);
      expect(page.headers.get('content-type')).toMatch(/^text\/html/);
      const html = await page.text();
      expect(html).toContain('<div id="root"></div>');
      const script = /src="(\/assets\/[^"]+\.js)"/.exec(html)?.[1];
      expect(script).toBeDefined();
      const asset = await fetch(`${p.url}${script}`);
      expect(asset.status).toBe(200);
      expect(asset.headers.get('cache-control')).toBe('public, max-age=31536000, immutable');
      expect((await asset.text()).length).toBeGreaterThan(1000);
      expect((await fetch(`${p.url}/assets/nothing-here.js`)).status).toBe(404);
      expect([403, 404]).toContain((await fetch(`${p.url}/assets/..%2F..%2Fpackage.json`)).status);
    } finally {
      await p.close();
    }
  });

  it('says how to build the app where it was not built', async () => {
    const p = await platform({ webDir: mkdtempSync(join(tmpdir(), 'kbchat-no-web-')) });
    try {
      const page = await fetch(`${p.url}/`);
      expect(page.status).toBe(503);
      expect(await page.text()).toContain('npm run build -w packages/web');
    } finally {
      await p.close();
    }
  });
});
