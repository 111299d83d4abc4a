// The platform serves the built web app at its root (no second server): the
// page at / and at every page of the app, the share page at /chat/share, its hashed assets cached for a year, and, where the app was not
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
      // Framed by its own origin only (the share links page previews the share page): no other site can lay it under a decoy.
      expect(page.headers.get('content-security-policy')).toBe("frame-ancestors 'self'");
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

      // The app's own pages (its router's paths) are the same page; the share page is its own.
      for (const path of [
        '/datasets',
        '/datasets/abc/collections/x%25E0%E6%B5%8B',
        '/apps/1',
        '/tools',
        '/tools/abc',
        '/chat?appId=1',
        '/keys',
        '/models',
        '/team',
      ]) {
        const r = await fetch(`${p.url}${path}`);
        expect(r.status, path).toBe(200);
        expect(await r.text(), path).toBe(html);
      }
      // A broken %-escape in a page's address: a page that says so (Fastify refuses it before any route); the API keeps its JSON.
      const broken = await fetch(`${p.url}/datasets/%E0%A4%A`, { headers: { accept: 'text/html,application/xhtml+xml' } });
      expect(broken.status).toBe(400);
      expect(broken.headers.get('content-type')).toMatch(/^text\/html/);
      const said = await broken.text();
      expect(said).toContain('This address is not valid');
      expect(said).toContain('/datasets/%E0%A4%A');
      expect(said).toContain('<a href="/">Open kbchat</a>');
      const api = await fetch(`${p.url}/api/core/dataset/detail/%E0%A4%A`, { headers: { accept: 'text/html' } });
      expect(api.status).toBe(400);
      expect(api.headers.get('content-type')).toMatch(/^application\/json/);
      const share = await fetch(`${p.url}/chat/share?shareId=abc`);
      expect(share.status).toBe(200);
      const shareHtml = await share.text();
      expect(shareHtml).not.toBe(html);
      expect(shareHtml).toMatch(/src="\/assets\/share-[^"]+\.js"/);
      // Anything else is still a 404, not the app.
      expect((await fetch(`${p.url}/nothing-here`)).status).toBe(404);
      expect((await fetch(`${p.url}/api/core/nothing`)).status).toBe(404);
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
      for (const path of ['/datasets/x', '/chat/share?shareId=abc']) expect((await fetch(`${p.url}${path}`)).status, path).toBe(503);
    } finally {
      await p.close();
    }
  });
});
