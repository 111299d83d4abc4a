// The chat page in Chromium against `kbchat start` (local-embed, local-extractive):
// a question sent with Enter streams its answer (Stop shows while it does),
// the answer cites its quote and the citation opens it, the steps show the
// search with its scores, copy, regenerate, feedback, and the chat list
// (new chat, open an old one, delete). Screenshots: test-output/web/chat-*.png.
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launch, noBrowser } from './browser.js';
import { signIn, startKbchatForBrowser, type KbchatForBrowser } from './kbchat-start.js';

const SHOTS = join(import.meta.dirname, '../../../test-output/web');
const FACT = 'The lighthouse keeper Marguerite Okonkwo painted the tower teal in 1987.';

if (noBrowser) console.warn(`[skip] chat page browser tests: ${noBrowser}`);

/** Calls the API as the signed-in page does (its cookie, its CSRF token). */
export async function asPage(page: Page, url: string) {
  const me = await page.request.get(`${url}/api/auth/me`);
  const csrf = ((await me.json()) as { data: { csrfToken: string } }).data.csrfToken;
  return async <T>(path: string, json?: unknown, method = json === undefined ? 'GET' : 'POST'): Promise<T> => {
    const res = await page.request.fetch(`${url}${path}`, { method, headers: { 'x-csrf-token': csrf, 'content-type': 'application/json' }, data: json === undefined ? undefined : JSON.stringify(json) });
    const body = (await res.json()) as { data: T; message: string };
    if (!res.ok()) throw new Error(`${path}: ${res.status()} ${body.message}`);
    return body.data;
  };
}

/** A knowledge base holding FACT, indexed, and an application on local-extractive that answers from it. */
export async function appWithKnowledge(call: Awaited<ReturnType<typeof asPage>>, name = 'Lighthouse desk'): Promise<{ appId: string; datasetId: string }> {
  const datasetId = await call<string>('/api/core/dataset/create', { name: `${name} notes`, vectorModel: 'local-embed' });
  await call('/api/core/dataset/collection/create/text', { datasetId, name: 'keeper.md', text: `# Lighthouse\n\n${FACT}\n\n# Harbour\n\nThe harbour master rings the bell at noon.` });
  const until = Date.now() + 60_000;
  for (;;) {
    const p = await call<{ queued: number; indexing: number; done: number; total: number }>(`/api/core/dataset/trainingDetail?datasetId=${datasetId}`);
    if (p.total > 0 && p.done === p.total) break;
    if (Date.now() > until) throw new Error(`not indexed: ${JSON.stringify(p)}`);
    await new Promise((r) => setTimeout(r, 300));
  }
  const appId = await call<string>('/api/core/app/create', { name, model: 'local-extractive', datasets: [datasetId], systemPrompt: 'You help {{visitor}}.' });
  return { appId, datasetId };
}

describe.skipIf(Boolean(noBrowser))('the chat page in Chromium', () => {
  let k: KbchatForBrowser;
  let browser: Browser;

  beforeAll(async () => {
    mkdirSync(SHOTS, { recursive: true });
    [k, browser] = await Promise.all([startKbchatForBrowser(), launch()]);
  }, 120_000);
  afterAll(async () => {
    await browser?.close();
    await k?.close();
  });

  it('streams a cited answer, shows its quote and steps, regenerates, and keeps the chat', async () => {
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 }, permissions: ['clipboard-read', 'clipboard-write'] });
    const page = await context.newPage();
    const errors: string[] = [];
    page.on('pageerror', (e) => errors.push(e.message));
    await signIn(page, k.url);
    const { appId } = await appWithKnowledge(await asPage(page, k.url));

    await page.goto(`${k.url}/chat?appId=${appId}`);
    await page.getByRole('heading', { name: 'Lighthouse desk' }).waitFor();
    // The prompt's {{visitor}} is asked for.
    await page.getByLabel('visitor').fill('a sailor');

    // Hold the stream's end so that the Stop button can be seen while it runs.
    const message = page.getByRole('textbox', { name: 'Message' });
    await message.fill('Who painted the lighthouse tower teal?');
    await message.press('Enter');
    await page.getByRole('button', { name: 'Stop' }).waitFor();
    const answer = page.getByTestId('answer').last();
    await expect.poll(() => answer.textContent(), { timeout: 20_000 }).toContain('Marguerite Okonkwo');
    await page.getByRole('button', { name: 'Send' }).waitFor();
    expect(await message.inputValue()).toBe('');

    // The citation opens its quote.
    const cite = answer.locator('button.cite').first();
    await cite.waitFor();
    await cite.hover();
    const popover = page.getByRole('dialog', { name: /Source 1/ });
    await popover.waitFor();
    expect(await popover.textContent()).toContain('keeper.md');
    expect(await popover.textContent()).toContain('Okonkwo');
    await page.screenshot({ path: join(SHOTS, 'chat-citation.png') });

    // The steps: the search with its scores.
    await answer.getByRole('button', { name: 'Steps' }).click();
    const steps = answer.locator('.steps');
    await steps.waitFor();
    expect(await steps.textContent()).toContain('Knowledge search');
    expect(await steps.textContent()).toMatch(/meaning 0\.\d{3} #1/);
    expect(await steps.textContent()).toContain('local-extractive');
    await page.screenshot({ path: join(SHOTS, 'chat-steps.png'), fullPage: true });

    // Copy, feedback, regenerate.
    await answer.getByRole('button', { name: 'Copy' }).click();
    expect(await page.evaluate(() => navigator.clipboard.readText())).toContain('Okonkwo');
    await answer.getByRole('button', { name: /Helpful/ }).click();
    await expect.poll(() => answer.getByRole('button', { name: /Helpful/ }).first().getAttribute('aria-pressed')).toBe('true');
    await answer.getByRole('button', { name: 'Regenerate' }).click();
    await page.getByRole('button', { name: 'Send' }).waitFor();
    await expect.poll(() => page.getByTestId('answer').count()).toBe(1);
    await expect.poll(() => page.getByTestId('answer').last().textContent()).toContain('Okonkwo');

    // The chat is in the list; the stored turn was replaced, not doubled.
    const chatUrl = page.url();
    expect(chatUrl).toContain('chatId=');
    const history = page.getByRole('complementary', { name: 'Chats' });
    await expect.poll(() => history.getByRole('listitem').count()).toBe(1);
    await page.reload();
    await expect.poll(() => page.getByTestId('answer').count()).toBe(1);
    expect(await page.locator('.msg.user').count()).toBe(1);

    // New chat, then back to the old one from the list, then delete it.
    await page.getByRole('button', { name: 'New chat' }).click();
    await expect.poll(() => page.getByTestId('answer').count()).toBe(0);
    await history.getByRole('button', { name: /Who painted/ }).click();
    await expect.poll(() => page.getByTestId('answer').count()).toBe(1);
    page.once('dialog', (d) => void d.accept());
    await history.getByRole('button', { name: /Delete chat/ }).click();
    await expect.poll(() => history.getByRole('listitem').count()).toBe(0);
    expect(errors).toEqual([]);
    await context.close();
  }, 90_000);

  it('stops an answer, shows the platform error in place, and fits a phone in the dark', async () => {
    const context = await browser.newContext({ viewport: { width: 375, height: 740 }, colorScheme: 'dark' });
    const page = await context.newPage();
    const errors: string[] = [];
    page.on('pageerror', (e) => errors.push(e.message));
    await signIn(page, k.url);
    const call = await asPage(page, k.url);
    const apps = await call<{ list: { id: string; name: string }[] }>('/api/core/app/list', {});
    const appId = apps.list.find((a) => a.name === 'Lighthouse desk')!.id;

    // An answer that sends one piece and then hangs (a slow model): Stop ends it and keeps what came.
    await page.addInitScript(() => {
      const real = window.fetch;
      window.fetch = (input, init) => {
        if (!String(input).includes('/api/v1/chat/completions') || (window as unknown as { realChat?: boolean }).realChat) return real(input, init);
        const piece = new TextEncoder().encode('event: answer\ndata: {"choices":[{"delta":{"content":"Partial answer"}}]}\n\n');
        const body = new ReadableStream({
          start(c) {
            c.enqueue(piece);
            init?.signal?.addEventListener('abort', () => c.error(new DOMException('aborted', 'AbortError')));
          },
        });
        return Promise.resolve(new Response(body, { status: 200, headers: { 'content-type': 'text/event-stream' } }));
      };
    });
    await page.goto(`${k.url}/chat?appId=${appId}`);
    await page.getByRole('textbox', { name: 'Message' }).fill('hello');
    await page.getByRole('button', { name: 'Send' }).click();
    await expect.poll(() => page.locator('.streaming').textContent()).toContain('Partial answer');
    await page.getByRole('button', { name: 'Stop' }).click();
    await page.getByRole('button', { name: 'Send' }).waitFor();
    expect(await page.getByTestId('answer').last().textContent()).toContain('Partial answer');
    expect(await page.getByTestId('answer').last().textContent()).toContain('Stopped');
    await page.evaluate(() => ((window as unknown as { realChat: boolean }).realChat = true));

    // The platform's own error, with its request id.
    await page.route('**/api/v1/chat/completions**', (route) =>
      route.fulfill({ status: 502, headers: { 'content-type': 'application/json', 'x-request-id': 'req-123' }, body: JSON.stringify({ code: 502, message: 'Connection error: the gateway is down' }) }),
    );
    await page.getByRole('textbox', { name: 'Message' }).fill('again');
    await page.getByRole('button', { name: 'Send' }).click();
    const alert = page.getByTestId('answer').last().getByRole('alert');
    await expect.poll(() => alert.textContent()).toContain('Connection error: the gateway is down');
    expect(await alert.textContent()).toContain('req-123');
    const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
    expect(overflow).toBeLessThanOrEqual(0);
    await page.screenshot({ path: join(SHOTS, 'chat-phone-dark.png'), fullPage: true });
    expect(errors).toEqual([]);
    await context.close();
  });
});
