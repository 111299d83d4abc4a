// The embed script (GET /embed.js) on another site's page, in Chromium against
// `kbchat start`: the host page is served by this test on another origin
// (another port; see HOST_NAME), with its own styled heading and button. The bubble opens the share link's page in a panel
// where a visitor asks and gets a cited answer; Escape closes it and gives the
// focus back; the host page's button still works and its styles are unchanged.
// Two tags make one bubble, window.kbchat opens and closes it, the tag's
// options place, open, translate and colour it. A link for other sites shows
// no bubble, and its page refuses to be framed here (frame-ancestors). The
// script itself: an ETag, a 304, under 10 KB gzipped, a classic script.
// Screenshots: test-output/web/embed-*.png.
import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { Script } from 'node:vm';
import { gzipSync } from 'node:zlib';
import type { ConsoleMessage, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { noBrowser, openPage, sideScroll } from './browser.js';
import { asPage, lighthouseApp, type Call } from './chat-fixtures.js';
import { browserSuite, SHOTS, signIn } from './kbchat-start.js';

if (noBrowser) console.warn(`[skip] the embed script browser tests: ${noBrowser}`);

const VIEWPORT = { width: 1280, height: 800 };
const UI = { timeout: 10_000 };
/**
 * The host page's address: another site than the platform's (localhost, not
 * 127.0.0.1), as an operator's site is. There Chromium, like a browser that
 * blocks third-party cookies, refuses the framed share page its
 * localStorage: the page must start without it.
 */
const HOST_NAME = 'localhost';

/** Another site's page: its own look (rules that would reach a careless widget's elements too), a button that counts, and `tags`. */
function hostPage(tags: string): string {
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Harbour news</title>
<style>
  body { margin: 24px; font-family: Georgia, serif; background: #fdf6e3; line-height: 1.7; }
  h1 { color: rgb(120, 20, 60); font-size: 40px; letter-spacing: 2px; text-transform: uppercase; }
  button { background: rgb(20, 120, 60); color: #fff; border: 3px solid #000; border-radius: 0; padding: 10px 24px; font-size: 18px; }
  div, iframe { margin: 7px; border: 2px dashed red; }
  * { box-sizing: content-box; }
</style></head>
<body><h1>Harbour news</h1><p>Clicked <output id="count">0</output> times.</p>
<button id="host-btn" type="button" onclick="document.getElementById('count').textContent = String(++window.clicks)">Host action</button>
<script>window.clicks = 0;</script>
${tags}
</body></html>`;
}

/** The host page's look: computed styles and boxes of its heading, button and body. */
function hostLook(page: Page) {
  return page.evaluate(() => {
    const props = [
      'color',
      'background-color',
      'font-family',
      'font-size',
      'font-weight',
      'letter-spacing',
      'line-height',
      'margin-top',
      'padding-left',
      'border-top-width',
    ];
    const of = (selector: string) => {
      const el = document.querySelector(selector)!;
      const r = el.getBoundingClientRect();
      return { ...Object.fromEntries(props.map((p) => [p, getComputedStyle(el).getPropertyValue(p)])), box: [r.x, r.y, r.width, r.height] };
    };
    return { h1: of('h1'), button: of('#host-btn'), body: of('body'), scrollHeight: document.documentElement.scrollHeight };
  });
}

/** The element of the shadow root that has the focus (the bubble's button, the panel's iframe), or what has it outside. */
function focused(page: Page): Promise<string | undefined> {
  return page.evaluate(() => {
    const host = document.querySelector('kbchat-embed');
    const active = document.activeElement === host ? host?.shadowRoot?.activeElement : document.activeElement;
    return active ? `${active.tagName.toLowerCase()}${active.getAttribute('aria-label') ? `[${active.getAttribute('aria-label')}]` : ''}` : undefined;
  });
}

describe.skipIf(Boolean(noBrowser))('the embed script on another site', () => {
  const suite = browserSuite('embed');
  const pages = new Map<string, string>();
  let server: Server;
  let hostUrl: string;
  let call: Call;
  let shareId: string;
  let appId: string;
  let owner: Awaited<ReturnType<typeof openPage>> | undefined;
  const tag = (attrs: string, id = shareId) => `<script src="${suite.k.url}/embed.js" data-share-id="${id}" ${attrs} defer></script>`;

  beforeAll(async () => {
    server = createServer((req, res) => {
      const html = pages.get(new URL(req.url ?? '/', 'http://host').pathname);
      res.writeHead(html ? 200 : 404, { 'content-type': 'text/html; charset=utf-8' }).end(html ?? 'not found');
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    hostUrl = `http://${HOST_NAME}:${(server.address() as AddressInfo).port}`;
    // The team's page, signed in, whose session makes the links (open until the last test).
    owner = await openPage(suite.browser);
    await signIn(owner.page, suite.k.url);
    call = await asPage(owner.page, suite.k.url);
    appId = await lighthouseApp(call);
    shareId = await call<string>('/api/support/outLink/create', { appId, name: 'Website bubble' });
  }, 120_000);
  afterAll(async () => {
    await owner?.context.close();
    await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
  });

  it('opens the chat in a panel on another site, answers with a citation, closes on Escape, and leaves the page as it was', async () => {
    pages.set('/plain', hostPage(''));
    pages.set('/', hostPage(tag('')));
    const { context, page, errors } = await openPage(suite.browser, { locale: 'en-US', viewport: VIEWPORT });
    suite.onFail = page;
    await page.goto(`${hostUrl}/plain`);
    const baseline = await hostLook(page);

    await page.goto(`${hostUrl}/`);
    const bubble = page.getByRole('button', { name: 'Open chat' });
    await bubble.waitFor(UI);
    // Its own look, whatever the page's rules for buttons say; at the bottom right.
    const look = await bubble.evaluate((b) => ({ background: getComputedStyle(b).backgroundColor, border: getComputedStyle(b).borderTopWidth }));
    expect(look).toEqual({ background: 'rgb(47, 111, 236)', border: '0px' });
    const box = (await bubble.boundingBox())!;
    expect(box.x + box.width).toBeGreaterThan(VIEWPORT.width - 40);
    expect(box.y + box.height).toBeGreaterThan(VIEWPORT.height - 40);
    expect(await bubble.getAttribute('aria-expanded')).toBe('false');
    // Nothing of the share page loads until it is opened.
    expect(await page.locator('kbchat-embed iframe').count()).toBe(0);
    expect(await hostLook(page)).toEqual(baseline);
    await page.screenshot({ path: join(SHOTS, 'embed-closed.png') });

    await bubble.click();
    const close = page.getByRole('button', { name: 'Close chat' });
    await close.waitFor(UI);
    expect(await close.getAttribute('aria-expanded')).toBe('true');
    const panel = page.getByRole('dialog', { name: 'Lighthouse desk' });
    await panel.waitFor(UI);
    await expect.poll(() => focused(page), UI).toBe('iframe');
    const frame = page.frameLocator('kbchat-embed iframe[title="Lighthouse desk"]');
    expect(await page.locator('kbchat-embed iframe').getAttribute('src')).toBe(`${suite.k.url}/chat/share?shareId=${encodeURIComponent(shareId)}`);
    await frame.getByRole('heading', { name: 'Lighthouse desk' }).waitFor(UI);
    await frame.getByLabel('visitor').fill('a sailor');
    const message = frame.getByRole('textbox', { name: 'Message' });
    await message.fill('Who painted the lighthouse tower teal?');
    await message.press('Enter');
    const answer = frame.getByTestId('answer');
    await expect.poll(() => answer.textContent(), { timeout: 20_000 }).toContain('Okonkwo');
    await answer.getByRole('button', { name: 'Source 1' }).hover();
    await expect.poll(() => frame.getByRole('dialog', { name: 'Source 1' }).textContent(), UI).toContain('keeper.md');
    await page.screenshot({ path: join(SHOTS, 'embed-open.png') });

    // Escape on the host page closes it (the iframe's own keys stay in the share page's document); the focus goes back to the bubble.
    await page.locator('h1').click();
    await page.keyboard.press('Escape');
    await bubble.waitFor(UI);
    expect(await bubble.getAttribute('aria-expanded')).toBe('false');
    expect(await panel.count()).toBe(0);
    expect(await focused(page)).toBe('button[Open chat]');
    // From the keyboard: Enter on the bubble opens it, Escape on the bubble closes it.
    await page.keyboard.press('Enter');
    await close.waitFor(UI);
    await expect.poll(() => focused(page), UI).toBe('iframe');
    await close.focus();
    await page.keyboard.press('Escape');
    await bubble.waitFor(UI);
    expect(await focused(page)).toBe('button[Open chat]');

    // The page's own button still works, and nothing of its look moved.
    await page.locator('#host-btn').click();
    await page.locator('#host-btn').click();
    await expect.poll(() => page.locator('#count').textContent(), UI).toBe('2');
    expect(await hostLook(page)).toEqual(baseline);
    // One global, and no style element or stylesheet in the page's document.
    expect(await page.evaluate(() => ({ api: Object.keys((window as any).kbchat).sort(), sheets: document.styleSheets.length }))).toEqual({
      api: ['close', 'open', 'toggle'],
      sheets: 1,
    });
    expect(errors).toEqual([]);
    await context.close();
  }, 90_000);

  it("makes one bubble from two tags; window.kbchat opens and closes it; the tag's options place, open, translate and colour it", async () => {
    pages.set('/two', hostPage(tag('') + tag('data-position="left"')));
    pages.set('/left', hostPage(tag('data-position="left" data-open="true" data-lang="zh" data-color="rgb(200, 40, 40)" data-auth-token="tok 1"')));
    pages.set('/bad-color', hostPage(tag('data-color="url(javascript:alert(1))"')));
    const { context, page, errors } = await openPage(suite.browser, { locale: 'en-US', viewport: VIEWPORT });
    suite.onFail = page;
    const warnings: string[] = [];
    page.on('console', (m: ConsoleMessage) => void (m.type() === 'warning' && warnings.push(m.text())));

    await page.goto(`${hostUrl}/two`);
    const bubble = page.getByRole('button', { name: 'Open chat' });
    await bubble.waitFor(UI);
    expect(await page.locator('kbchat-embed').count()).toBe(1);
    expect((await bubble.boundingBox())!.x).toBeGreaterThan(VIEWPORT.width / 2); // the first tag's: on the right
    await page.evaluate(() => (window as any).kbchat.open());
    await page.getByRole('dialog', { name: 'Lighthouse desk' }).waitFor(UI);
    await page.getByRole('button', { name: 'Close chat' }).waitFor(UI);
    await page.evaluate(() => (window as any).kbchat.close());
    await bubble.waitFor(UI);
    expect(await page.getByRole('dialog').count()).toBe(0);
    await page.evaluate(() => (window as any).kbchat.toggle());
    await page.getByRole('button', { name: 'Close chat' }).waitFor(UI);
    await page.evaluate(() => (window as any).kbchat.toggle());
    await bubble.waitFor(UI);
    expect(await page.locator('kbchat-embed').count()).toBe(1);

    // On the left, opened at load (without taking the focus from the page), in Chinese, in the site's colour, with the visitor's token.
    await page.goto(`${hostUrl}/left`);
    const zh = page.getByRole('button', { name: '关闭对话' });
    await zh.waitFor(UI);
    const panel = page.getByRole('dialog', { name: 'Lighthouse desk' });
    await panel.waitFor(UI);
    expect((await zh.boundingBox())!.x).toBeLessThan(40);
    expect((await panel.boundingBox())!.x).toBeLessThan(40);
    expect(await zh.evaluate((b) => getComputedStyle(b).backgroundColor)).toBe('rgb(200, 40, 40)');
    const src = new URL((await page.locator('kbchat-embed iframe').getAttribute('src'))!);
    expect(Object.fromEntries(src.searchParams)).toEqual({ shareId, authToken: 'tok 1', lang: 'zh' });
    expect(await focused(page)).toBe('body');
    await page.screenshot({ path: join(SHOTS, 'embed-left-zh.png') });
    // On a phone the panel takes the width of the screen, above the bubble, and nothing scrolls sideways.
    await page.setViewportSize({ width: 375, height: 740 });
    const phone = (await panel.boundingBox())!;
    expect(phone.x).toBeGreaterThanOrEqual(0);
    expect(phone.x + phone.width).toBeLessThanOrEqual(375);
    expect(phone.y).toBeGreaterThanOrEqual(0);
    expect(phone.y + phone.height).toBeLessThanOrEqual((await zh.boundingBox())!.y);
    expect(await sideScroll(page)).toBeLessThanOrEqual(0);
    await page.screenshot({ path: join(SHOTS, 'embed-phone.png') });
    await page.setViewportSize(VIEWPORT);
    await zh.click();
    await page.getByRole('button', { name: '打开对话' }).waitFor(UI);

    // A colour that is not one is left out, and said so.
    await page.goto(`${hostUrl}/bad-color`);
    const plain = page.getByRole('button', { name: 'Open chat' });
    await plain.waitFor(UI);
    expect(await plain.evaluate((b) => getComputedStyle(b).backgroundColor)).toBe('rgb(47, 111, 236)');
    expect(warnings.some((w) => w.includes('is not a CSS color'))).toBe(true);
    expect(errors).toEqual([]);
    await context.close();
  }, 60_000);

  it("shows no bubble for a link that other sites are allowed to embed, or one that cannot be opened; that link's page refuses this frame", async () => {
    const elsewhere = await call<string>('/api/support/outLink/create', { appId, name: 'Other site', allowedOrigins: ['https://example.com'] });
    const here = await call<string>('/api/support/outLink/create', { appId, name: 'This site', allowedOrigins: ['https://example.com', hostUrl] });
    pages.set('/elsewhere', hostPage(tag('', elsewhere)));
    pages.set('/here', hostPage(tag('', here)));
    pages.set('/unknown', hostPage(tag('', 'no-such-link')));
    const direct = (id: string) => `${suite.k.url}/chat/share?shareId=${encodeURIComponent(id)}`;
    pages.set(
      '/framed',
      hostPage(
        `<iframe name="allowed" title="allowed" src="${direct(here)}"></iframe><iframe name="refused" title="refused" src="${direct(elsewhere)}"></iframe>`,
      ),
    );
    const { context, page, errors } = await openPage(suite.browser, { locale: 'en-US', viewport: VIEWPORT });
    suite.onFail = page;
    const warnings: string[] = [];
    const messages: string[] = [];
    page.on('console', (m: ConsoleMessage) => {
      messages.push(m.text());
      if (m.type() === 'warning') warnings.push(m.text());
    });

    // A link that names this site among its origins: the bubble, and its page opens in the panel.
    await page.goto(`${hostUrl}/here`);
    await page.getByRole('button', { name: 'Open chat' }).click();
    await page.frameLocator('kbchat-embed iframe').getByRole('heading', { name: 'Lighthouse desk' }).waitFor(UI);

    // Only other sites: no bubble, and the console says why.
    await page.goto(`${hostUrl}/elsewhere`);
    await expect.poll(() => warnings.find((w) => w.includes('allowed origins')), UI).toContain(hostUrl);
    expect(await page.locator('kbchat-embed').count()).toBe(0);
    expect(await page.evaluate(() => typeof (window as any).kbchat)).toBe('object');

    // A link that cannot be opened: the platform's message, no bubble.
    const refused = await page.request.get(`${suite.k.url}/api/support/outLink/init?shareId=no-such-link`);
    expect(refused.status()).toBe(404);
    const { message } = (await refused.json()) as { message: string };
    await page.goto(`${hostUrl}/unknown`);
    await expect.poll(() => warnings.find((w) => w.includes('cannot be opened')), UI).toContain(message);
    expect(await page.locator('kbchat-embed').count()).toBe(0);

    // Framed directly, without the script: the link for this site loads, the one for others is refused by the browser.
    await page.goto(`${hostUrl}/framed`);
    await page.frameLocator('iframe[name="allowed"]').getByRole('heading', { name: 'Lighthouse desk' }).waitFor(UI);
    await expect.poll(() => messages.find((m) => m.includes('frame-ancestors')), UI).toContain(`"frame-ancestors 'self' https://example.com"`);
    const blocked = page.frame({ name: 'refused' })!;
    expect(blocked.url()).not.toContain('/chat/share');
    expect(await blocked.getByRole('heading', { name: 'Lighthouse desk' }).count()).toBe(0);
    expect(errors).toEqual([]);
    await context.close();
  }, 60_000);

  it('serves /embed.js as one small classic script, revalidated by its ETag', async () => {
    const res = await fetch(`${suite.k.url}/embed.js`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/javascript/);
    const etag = res.headers.get('etag');
    expect(etag).toBeTruthy();
    const body = await res.text();
    expect(body).toBe(readFileSync(join(import.meta.dirname, '../../web/dist/embed.js'), 'utf8'));
    // A classic script (vm.Script refuses import and export), under 10 KB gzipped.
    expect(() => new Script(body)).not.toThrow();
    expect(gzipSync(body).length).toBeLessThan(10 * 1024);
    const again = await fetch(`${suite.k.url}/embed.js`, { headers: { 'if-none-match': etag! } });
    expect(again.status).toBe(304);
    expect(await again.text()).toBe('');
  });
});
