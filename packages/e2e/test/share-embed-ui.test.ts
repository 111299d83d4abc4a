// A share link's limits, embedding and sign-in check in Chromium against
// `kbchat start`: a link made and then edited on the Share links page (its
// link-wide QPM, usage points and the sites that may embed it), listed with
// them, its two snippets copied and its page previewed in a frame; then the
// link given a sign-in check (the operator's hook, a small server here, which
// the platform may call on loopback with SHARE_HOOK_ALLOW_PRIVATE=true): a
// visitor whose token the hook takes chats as the hook's uid (their chats on
// another device too), one it refuses sees its message, and one it leaves
// unanswered is told so within seconds.
// Screenshots: test-output/web/share-ui-*.png.
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { noBrowser, openPage } from './browser.js';
import { asPage } from './chat-fixtures.js';
import { browserSuite, SHOTS, signIn } from './kbchat-start.js';

if (noBrowser) console.warn(`[skip] share link embedding browser tests: ${noBrowser}`);

const REFUSAL = 'Members only: sign in at example.com';

/** The operator's hook: "good" is member-good, "bad" is refused with REFUSAL, "slow" is never answered. */
function startHook(): Promise<{ url: string; calls: { step: string; token: string }[]; close(): Promise<void> }> {
  const calls: { step: string; token: string }[] = [];
  const read = async (req: IncomingMessage) => {
    let body = '';
    for await (const chunk of req) body += chunk;
    return JSON.parse(body || '{}') as { token?: string };
  };
  const server: Server = createServer(async (req, res) => {
    const step = /\/shareAuth\/(init|start|finish)$/.exec(req.url ?? '')?.[1];
    const { token = '' } = await read(req);
    if (!step || req.method !== 'POST') return res.writeHead(404).end();
    calls.push({ step, token });
    if (token === 'slow') return; // silence: the platform gives up after 5 s
    const answer = token === 'good' ? { success: true, data: { uid: 'member-good' } } : { success: false, message: REFUSAL };
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(answer));
  });
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () =>
      resolve({
        url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/kbchat`,
        calls,
        close: () => {
          server.closeAllConnections();
          return new Promise<void>((done) => server.close(() => done()));
        },
      }),
    ),
  );
}

/** Fills a link's edit form (opened from its row) and saves it; `shot`: the filled form's screenshot. */
async function editLink(page: Page, name: string, fields: Record<string, string>, shot?: string) {
  const row = page.getByRole('row').filter({ hasText: name });
  await row.getByRole('button', { name: `Edit “${name}”` }).click();
  const form = page.getByRole('form', { name: `Edit “${name}”` });
  for (const [label, value] of Object.entries(fields)) await form.getByLabel(new RegExp(`^${label}`)).fill(value);
  if (shot) await page.screenshot({ path: join(SHOTS, shot), fullPage: true });
  await form.getByRole('button', { name: 'Save' }).click();
  await expect.poll(() => form.count(), { timeout: 10_000 }).toBe(0);
}

describe.skipIf(Boolean(noBrowser))('share link limits, embedding and sign-in check in Chromium', () => {
  const suite = browserSuite('share-ui', { SHARE_HOOK_ALLOW_PRIVATE: 'true' });
  let hook: Awaited<ReturnType<typeof startHook>>;
  beforeAll(async () => {
    hook = await startHook();
  });
  afterAll(() => hook?.close());

  it("edits a link's limits, lists them, and gives both snippets and a live preview of its page", async () => {
    const { context, page, errors } = await openPage(suite.browser, {
      locale: 'en-US',
      viewport: { width: 1280, height: 900 },
      permissions: ['clipboard-read', 'clipboard-write'],
    });
    suite.onFail = page;
    await signIn(page, suite.k.url);
    const call = await asPage(page, suite.k.url);
    const appId = await call<string>('/api/core/app/create', { name: 'Members desk', intro: 'Ask the members desk', model: 'local-extractive' });

    await page.goto(`${suite.k.url}/apps/${appId}/share`);
    await page.getByText('No share links yet.').waitFor();
    await page.getByLabel('Link name').fill('Website widget');
    await page.getByRole('button', { name: 'Create share link' }).click();
    const row = page.getByRole('row').filter({ hasText: 'Website widget' });
    await expect.poll(() => row.textContent(), { timeout: 10_000 }).toContain('none');

    await editLink(
      page,
      'Website widget',
      {
        'Link-wide requests per minute': '100',
        'Usage points': '5',
        'Sites that may embed it': 'https://www.example.com\nhttp://localhost:5173',
      },
      'share-ui-edit.png',
    );
    await expect
      .poll(() => row.getByRole('listitem').allTextContents(), { timeout: 10_000 })
      .toEqual(['100 per minute in all', '0 / 5 usage points', 'embeddable on https://www.example.com, http://localhost:5173']);
    const [stored] = await call<{ shareId: string; limit: object; allowedOrigins: string[] }[]>(`/api/support/outLink/list?appId=${appId}`);
    expect(stored!.limit).toEqual({ linkQPM: 100, maxUsagePoints: 5 });
    expect(stored!.allowedOrigins).toEqual(['https://www.example.com', 'http://localhost:5173']);
    const shareId = stored!.shareId;
    await page.screenshot({ path: join(SHOTS, 'share-ui-limits.png'), fullPage: true });

    // Embed: the script tag and the iframe name the link on this platform; Copy puts each on the clipboard.
    await row.getByRole('button', { name: 'Embed “Website widget” on your site' }).click();
    const panel = page.getByRole('region', { name: 'Embed “Website widget” on your site' });
    const script = `<script src="${suite.k.url}/embed.js" data-share-id="${shareId}" defer></script>`;
    const iframe = `<iframe src="${suite.k.url}/chat/share?shareId=${shareId}" title="Members desk" style="width:100%;height:600px;border:0" allow="clipboard-write"></iframe>`;
    expect(await panel.getByRole('textbox', { name: 'Chat bubble (script tag)' }).inputValue()).toBe(script);
    expect(await panel.getByRole('textbox', { name: 'Chat in your page (iframe)' }).inputValue()).toBe(iframe);
    await panel.getByRole('button', { name: 'Copy the script tag' }).click();
    await panel.getByRole('group', { name: 'Chat bubble (script tag)' }).getByRole('status').getByText('Copied').waitFor();
    expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(script);
    await panel.getByRole('button', { name: 'Copy the iframe' }).click();
    await expect.poll(() => page.evaluate(() => navigator.clipboard.readText()), { timeout: 10_000 }).toBe(iframe);
    // The preview frames the share page itself (the link allows only other sites, and this platform).
    const preview = page.frameLocator('iframe[title="Preview of the share page of “Website widget”"]');
    await preview.getByRole('heading', { name: 'Members desk' }).waitFor();
    await preview.getByText('Ask the members desk').waitFor();
    await preview.getByRole('textbox', { name: 'Message' }).waitFor();
    await panel.scrollIntoViewIfNeeded();
    await page.screenshot({ path: join(SHOTS, 'share-ui-embed.png'), fullPage: true });
    expect(errors).toEqual([]);
    await context.close();
  }, 90_000);

  it("with a sign-in check: the hook's member chats as its uid on any device, a refused token gets its message, silence a timeout", async () => {
    const { context, page, errors } = await openPage(suite.browser, { locale: 'en-US', viewport: { width: 1280, height: 900 } });
    suite.onFail = page;
    await signIn(page, suite.k.url);
    const call = await asPage(page, suite.k.url);
    const appId = await call<string>('/api/core/app/create', { name: 'Club desk', model: 'local-extractive' });
    const shareId = await call<string>('/api/support/outLink/create', { appId, name: 'Club page' });
    await page.goto(`${suite.k.url}/apps/${appId}/share`);
    await editLink(page, 'Club page', { 'Sign-in check': hook.url });
    const row = page.getByRole('row').filter({ hasText: 'Club page' });
    await expect.poll(() => row.textContent(), { timeout: 10_000 }).toContain(`sign-in check: ${hook.url}`);
    // Its embedding says how to give the visitor's token; the preview, which has none, shows the platform's refusal.
    await row.getByRole('button', { name: 'Embed “Club page” on your site' }).click();
    await page.getByText(/give the visitor’s token as data-auth-token/).waitFor();
    const preview = page.frameLocator('iframe[title="Preview of the share page of “Club page”"]');
    await expect.poll(() => preview.getByRole('alert').textContent(), { timeout: 10_000 }).toContain("needs the visitor's token");
    await page.screenshot({ path: join(SHOTS, 'share-ui-hook-embed.png'), fullPage: true });
    const calls = (token: string) => hook.calls.filter((c) => c.token === token).map((c) => c.step);
    const visit = async (token: string, more = '') => {
      const v = await openPage(suite.browser, { locale: 'en-US', viewport: { width: 1280, height: 800 } });
      await v.page.goto(`${suite.k.url}/chat/share?shareId=${encodeURIComponent(shareId)}&authToken=${token}${more}`);
      return v;
    };

    // "good": the hook says who it is; the chat is answered, and the hook hears init, start and finish.
    const good = await visit('good');
    suite.onFail = good.page;
    await good.page.getByRole('heading', { name: 'Club desk' }).waitFor();
    const message = good.page.getByRole('textbox', { name: 'Message' });
    await message.fill('Are members welcome on Sundays?');
    await message.press('Enter');
    await expect.poll(() => good.page.getByTestId('answer').textContent(), { timeout: 20_000 }).toContain('I could not find an answer');
    await expect.poll(() => calls('good'), { timeout: 10_000 }).toEqual(['init', 'start', 'finish']);
    const history = (p: Page) => p.getByRole('complementary', { name: 'Chats' });
    await history(good.page)
      .getByRole('button', { name: /^Are members welcome/ })
      .waitFor();
    await good.page.screenshot({ path: join(SHOTS, 'share-ui-hook-good.png') });

    // The same member in another browser: the same uid, so the same chats; in the language the embedding page asked for
    // (?lang=, the embed script's data-lang), which is not saved as the visitor's own choice.
    const elsewhere = await visit('good', '&lang=zh');
    await elsewhere.page.getByRole('button', { name: '发送' }).waitFor();
    expect(await elsewhere.page.evaluate(() => localStorage.getItem('kbchat.lang'))).toBeNull();
    await elsewhere.page
      .getByRole('complementary', { name: '对话' })
      .getByRole('button', { name: /^Are members welcome/ })
      .click();
    await expect.poll(() => elsewhere.page.getByTestId('answer').textContent(), { timeout: 10_000 }).toContain('I could not find an answer');
    expect(await elsewhere.page.evaluate(() => Object.keys(localStorage).filter((k) => k.startsWith('kbchat.outLinkUid.')))).toEqual([]);

    // "bad": the hook's own message, and no chat box; it was never asked about a question.
    const bad = await visit('bad');
    suite.onFail = bad.page;
    await expect.poll(() => bad.page.getByRole('alert').textContent(), { timeout: 10_000 }).toContain(REFUSAL);
    expect(await bad.page.getByRole('textbox', { name: 'Message' }).count()).toBe(0);
    expect(calls('bad')).toEqual(['init']);
    await bad.page.screenshot({ path: join(SHOTS, 'share-ui-hook-bad.png') });

    // "slow": the hook never answers; the page says so within seconds, and offers to try again.
    const started = Date.now();
    const slow = await visit('slow');
    suite.onFail = slow.page;
    await expect.poll(() => slow.page.getByRole('alert').textContent(), { timeout: 15_000 }).toContain('did not answer within 5 s');
    expect(Date.now() - started).toBeLessThan(12_000);
    await slow.page.getByRole('button', { name: 'Try again' }).waitFor();
    expect(await slow.page.getByRole('textbox', { name: 'Message' }).count()).toBe(0);
    await slow.page.screenshot({ path: join(SHOTS, 'share-ui-hook-slow.png') });

    expect([...errors, ...good.errors, ...elsewhere.errors, ...bad.errors, ...slow.errors]).toEqual([]);
    for (const v of [good, elsewhere, bad, slow]) await v.context.close();
    await context.close();
  }, 90_000);
});
