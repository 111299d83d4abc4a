// Trouble shown in place, in Chromium against a real platform on a real
// gateway in front of the upstream simulator: a missing knowledge base or
// application is a "not found" page that leaving clears; a model whose
// channel fails (sim-503) is "failing" with the gateway's error before the
// gateway disables it, then "not served" with its message; a gateway that is
// down is said once, plainly; a platform that does not answer is said on the
// sign-in page. Screenshots go to test-output/web/.
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { noBrowser, openPage } from './browser.js';
import { asPage } from './chat-fixtures.js';
import { SHOTS } from './kbchat-start.js';
import { signInRoot, simPlatformSuite } from './sim-platform.js';

const MISSING = 'ffffffffffffffffffffffff';

if (noBrowser) console.warn(`[skip] trouble-in-place browser tests: ${noBrowser}`);

describe.skipIf(Boolean(noBrowser))('trouble shown in place, in Chromium', () => {
  // Three failures in a row disable a channel model: the test sees "failing" first, then "not served".
  const suite = simPlatformSuite({
    simModels: 'sim-chat,sim-embed-384,sim-503',
    config: { llmModels: [{ model: 'sim-chat' }, { model: 'sim-503' }], vectorModels: [{ model: 'sim-embed-384' }] },
    gatewayEnv: { CHANNEL_DISABLE_THRESHOLD: '3' },
  });
  const signIn = (page: Page) => signInRoot(page, suite.p.url);

  it('shows a missing knowledge base or application as not found, and the next page after it', async () => {
    const { context, page, errors } = await openPage(suite.browser, { locale: 'en-US' });
    await signIn(page);
    await page.goto(`${suite.p.url}/datasets/${MISSING}`);
    const alert = page.getByRole('main').getByRole('alert');
    await expect.poll(() => alert.textContent()).toContain('Not found');
    expect(await alert.textContent()).toContain(MISSING);
    expect(await alert.textContent()).not.toContain('Something went wrong');
    await page.screenshot({ path: join(SHOTS, 'trouble-dataset-not-found.png') });

    // Leaving the page leaves its error behind.
    await page.getByRole('navigation', { name: 'main' }).getByRole('link', { name: 'Applications' }).click();
    await page.getByRole('heading', { level: 1, name: 'Applications' }).waitFor();
    expect(await page.getByRole('main').getByRole('alert').count()).toBe(0);

    // Within one area too: a missing application, then the list.
    await page.goto(`${suite.p.url}/apps/${MISSING}`);
    await expect.poll(() => alert.textContent()).toContain('Not found');
    await page.getByRole('navigation', { name: 'main' }).getByRole('link', { name: 'Applications' }).click();
    await page.getByRole('heading', { level: 1, name: 'Applications' }).waitFor();
    await page.goto(`${suite.p.url}/chat?appId=${MISSING}`);
    await expect.poll(() => alert.textContent()).toContain('Not found');

    // A request the platform refuses (400: an id longer than any) says why, and offers no Retry that could not help.
    await page.goto(`${suite.p.url}/datasets/${'x'.repeat(80)}`);
    await expect.poll(() => alert.textContent()).toMatch(/Invalid 'datasetId'|Invalid 'id'/);
    await page.screenshot({ path: join(SHOTS, 'trouble-refused.png') });
    expect(await alert.getByRole('button', { name: 'Retry' }).count()).toBe(0);
    expect(errors).toEqual([]);
    await context.close();
  });

  it('says a model is failing before the gateway disables it, then that it is not served', async () => {
    const { context, page, errors } = await openPage(suite.browser, { locale: 'en-US' });
    await signIn(page);
    const call = await asPage(page, suite.p.url);
    const appId = await call<string>('/api/core/app/create', { name: 'On a failing model', model: 'sim-503' });
    const chat = () =>
      call(`/api/v1/chat/completions?appId=${appId}`, { messages: [{ role: 'user', content: 'hello' }] }).then(
        () => 200,
        (err: { status: number }) => err.status,
      );
    expect(await chat()).toBeGreaterThanOrEqual(500);
    type Listed = { models: { model: string; served: boolean; failing?: { failures: number; lastError: string } }[] };
    const sim503 = async () => (await call<Listed>('/api/core/ai/model/list')).models.find((m) => m.model === 'sim-503')!;
    const first = await sim503();
    // Still listed by the gateway (not yet disabled), but failing, with the gateway's error.
    expect(first.served).toBe(true);
    expect(first.failing?.lastError).toMatch(/overloaded|503|unavailable/i);

    await page.getByRole('link', { name: 'Models' }).click();
    const row = page.getByRole('row').filter({ hasText: 'sim-503' });
    await expect.poll(() => row.textContent()).toContain('failing');
    expect(await row.textContent()).toContain(`The last error: ${first.failing!.lastError}`);
    expect(await page.getByRole('row').filter({ hasText: 'sim-chat' }).textContent()).not.toContain('failing');
    // The checklist read the models at sign-in (before the chat); it polls every 15 s, a reload reads them now.
    await page.reload();
    const checklist = page.getByRole('complementary', { name: 'Before you start' });
    await expect.poll(() => checklist.textContent()).toContain('Model sim-503 is failing');
    await expect.poll(() => row.textContent()).toContain('failing');
    await page.screenshot({ path: join(SHOTS, 'trouble-model-failing.png'), fullPage: true });

    // More failures: the gateway disables the channel model and stops listing it.
    await expect.poll(async () => (await chat(), (await sim503()).served), { timeout: 30_000 }).toBe(false);
    await page.reload();
    await expect.poll(() => row.textContent()).toContain('not served');
    expect(await row.textContent()).toContain('No available channel for model sim-503');
    await expect.poll(() => checklist.textContent()).toContain('Model sim-503 is not served: No available channel');
    await page.screenshot({ path: join(SHOTS, 'trouble-model-not-served.png'), fullPage: true });
    expect(errors).toEqual([]);
    await context.close();
  });

  it('says on the sign-in page that the platform did not answer', async () => {
    const { context, page, errors } = await openPage(suite.browser, { locale: 'en-US' });
    await page.route('**/api/auth/me', (route) => route.abort('connectionrefused'));
    await page.goto(`${suite.p.url}/`);
    await expect.poll(() => page.getByRole('alert').textContent()).toBe('The platform did not answer: is kbchat running?');
    await page.screenshot({ path: join(SHOTS, 'trouble-platform-unreachable.png') });
    expect(errors).toEqual([]);
    await context.close();
  });

  // Last: it stops the gateway.
  it('says once, plainly, that the gateway does not answer, on the checklist and the models page', async () => {
    const { context, page, errors } = await openPage(suite.browser, { locale: 'en-US' });
    await signIn(page);
    await suite.gw.close();
    await page.goto(`${suite.p.url}/models`);
    const checklist = page.getByRole('complementary', { name: 'Before you start' });
    await expect.poll(() => checklist.textContent()).toContain(`The gateway at ${suite.gw.url} did not answer`);
    const said = (await checklist.textContent())!;
    expect(said.match(/did not answer/g)).toHaveLength(1);
    expect(said).not.toContain(`${suite.gw.url}: `);
    const alert = page.getByRole('main').getByRole('alert');
    await expect.poll(() => alert.textContent()).toContain(`The gateway at ${suite.gw.url} did not answer`);
    // The configured models are still listed, each not served.
    expect(await page.getByRole('row').filter({ hasText: 'sim-chat' }).textContent()).toContain('not served');
    await page.screenshot({ path: join(SHOTS, 'trouble-gateway-down.png'), fullPage: true });
    expect(errors).toEqual([]);
    await context.close();
  });
});
