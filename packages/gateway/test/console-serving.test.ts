// The gateway serves the console (console.html of packages/web's build) at its
// root and at the console's pages, with its hashed assets cached for a year,
// beside the relay on the same port and the same connections; where the
// console was not built, its pages say how to build it.
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, sep } from 'node:path';
import { Client } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadGatewayConfig } from '../src/index.js';
import { startTestGateway, type TestGateway } from './helpers.js';

const CONSOLE_HTML =
  '<!doctype html><html><head><script type="module" src="/assets/console-abc123.js"></script></head><body><div id="console"></div></body></html>';
const ASSET = `console.log(${JSON.stringify('x'.repeat(2000))});`;
const PAGES = ['/', '/dashboard', '/channels', '/users', '/tokens', '/redemptions', '/logs', '/prices'];

function chat(url: string) {
  return fetch(`${url}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: 'Bearer sk-test-root-token-0123456789', 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'sim-chat', messages: [{ role: 'user', content: 'hi' }] }),
  });
}

describe('the console at the gateway root', () => {
  let t: TestGateway;
  let webDir: string;
  beforeAll(async () => {
    // The web app's build, as `npm run build -w packages/web` lays it out.
    webDir = mkdtempSync(join(tmpdir(), 'kbchat-console-dist-'));
    mkdirSync(join(webDir, 'assets'));
    writeFileSync(join(webDir, 'console.html'), CONSOLE_HTML);
    writeFileSync(join(webDir, 'assets', 'console-abc123.js'), ASSET);
    t = await startTestGateway({ models: ['sim-chat'], config: { webDir } });
  });
  afterAll(async () => {
    await t?.close();
    rmSync(webDir, { recursive: true, force: true });
  });

  it('serves console.html at / and at every console page, not cached', async () => {
    for (const path of [...PAGES, '/dashboard?range=day', '/logs/20260101000000000abc', '/channels/3/edit', '/users/x%25E0%E6%B5%8B']) {
      const r = await fetch(`${t.url}${path}`);
      expect(r.status, path).toBe(200);
      expect(r.headers.get('content-type'), path).toBe('text/html; charset=utf-8');
      expect(r.headers.get('cache-control'), path).toBe('no-cache');
      // Framed by its own origin only: no other site can lay the console under a decoy.
      expect(r.headers.get('content-security-policy'), path).toBe("frame-ancestors 'self'");
      expect(await r.text(), path).toBe(CONSOLE_HTML);
    }
    const head = await fetch(`${t.url}/dashboard`, { method: 'HEAD' });
    expect(head.status).toBe(200);
  });

  it('serves the hashed assets immutable for a year, and nothing outside them', async () => {
    const asset = await fetch(`${t.url}/assets/console-abc123.js`);
    expect(asset.status).toBe(200);
    expect(asset.headers.get('cache-control')).toBe('public, max-age=31536000, immutable');
    expect(asset.headers.get('content-type')).toMatch(/javascript/);
    expect(await asset.text()).toBe(ASSET);
    expect((await fetch(`${t.url}/assets/nothing-here.js`)).status).toBe(404);
    expect([403, 404]).toContain((await fetch(`${t.url}/assets/..%2Fconsole.html`)).status);
    // Anything else is still the gateway's 404 envelope, not the console.
    const other = await fetch(`${t.url}/nothing-here`);
    expect(other.status).toBe(404);
    expect((await other.json()).error.code).toBe('not_found');
    expect((await fetch(`${t.url}/api/nothing-here`)).status).toBe(404);
  });

  it('keeps the relay working beside the pages, on the same connection both ways', async () => {
    const r = await chat(t.url);
    expect(r.status).toBe(200);
    expect((await r.json()).choices[0].message.content).toBeTruthy();
    const models = await t.api('/v1/models');
    expect(models.status).toBe(200);
    // One connection: a relay POST (the lean front), a page (Fastify), a relay POST again.
    const client = new Client(t.url, { pipelining: 1 });
    try {
      const post = () =>
        client.request({
          path: '/v1/chat/completions',
          method: 'POST',
          headers: { authorization: 'Bearer sk-test-root-token-0123456789', 'content-type': 'application/json' },
          body: JSON.stringify({ model: 'sim-chat', messages: [{ role: 'user', content: 'hi' }] }),
        });
      const first = await post();
      expect(first.statusCode).toBe(200);
      await first.body.json();
      const page = await client.request({ path: '/channels', method: 'GET' });
      expect(page.statusCode).toBe(200);
      expect(await page.body.text()).toBe(CONSOLE_HTML);
      const again = await post();
      expect(again.statusCode).toBe(200);
      expect(((await again.body.json()) as any).object).toBe('chat.completion');
    } finally {
      await client.close();
    }
  });
});

describe('the console where it was not built', () => {
  it('answers its pages with 503 and how to build it; the relay and the API still work', async () => {
    // An empty folder, then a build of the platform's app only (no console.html).
    const empty = mkdtempSync(join(tmpdir(), 'kbchat-no-console-'));
    const platformOnly = mkdtempSync(join(tmpdir(), 'kbchat-platform-only-'));
    writeFileSync(join(platformOnly, 'index.html'), '<!doctype html><div id="root"></div>');
    const t = await startTestGateway({ models: ['sim-chat'], config: { webDir: empty } });
    const u = await startTestGateway({ models: ['sim-chat'], config: { webDir: platformOnly }, simInstance: t.sim });
    try {
      for (const gw of [t, u]) {
        for (const path of [...PAGES, '/logs/abc']) {
          const r = await fetch(`${gw.url}${path}`);
          expect(r.status, path).toBe(503);
          expect(r.headers.get('content-type'), path).toBe('text/html; charset=utf-8');
          const text = await r.text();
          expect(text, path).toContain('npm run build -w packages/web');
          expect(text, path).toContain(`console.html`);
        }
        expect((await chat(gw.url)).status).toBe(200);
        expect((await gw.api('/api/auth/me')).status).toBe(200);
      }
    } finally {
      await u.close();
      await t.close();
      rmSync(empty, { recursive: true, force: true });
      rmSync(platformOnly, { recursive: true, force: true });
    }
  });

  it('looks for the build in packages/web/dist by default', () => {
    const webDir = loadGatewayConfig({}).webDir;
    expect(webDir.endsWith(['packages', 'web', 'dist'].join(sep))).toBe(true);
    // The folder `npm ci` builds: the platform's app is there already.
    expect(existsSync(join(webDir, 'index.html'))).toBe(true);
  });
});
