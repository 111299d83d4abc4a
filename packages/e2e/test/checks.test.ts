// Retrieval checks in the browser against the real `kbchat start`
// (local-embed): a knowledge base with a text, a search test whose first
// result is saved as a check, "Run all" passing it; then the chunk deleted and
// the next run showing it newly failing, at desktop width, at 375 px in dark
// mode, and under a page translator. Screenshots: test-output/web/checks-*.png.
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { noBrowser, openPage } from './browser.js';
import { browserSuite, SHOTS, signIn } from './kbchat-start.js';
import { TRANSLATED_MARK, translateLikeChrome } from './page-translator.js';

/** The UI's own polls and refreshes take longer than expect.poll's default second on a machine busy with the suite. */
const POLL = { timeout: 10_000 };

const TEXT = [
  '# Ferries\n\nThe epsilon ferry crosses the Hardanger fjord nine times a day from Norheimsund.',
  '# Lighthouses\n\nThe lighthouse keeper Marguerite Okonkwo painted the tower teal in 1987.',
  '# Reactors\n\nCoolant pump P-7 of the Beta reactor runs at 1480 revolutions per minute.',
].join('\n\n');

if (noBrowser) console.warn(`[skip] checks browser tests: ${noBrowser}`);

async function csrf(page: Page): Promise<string> {
  const me = await page.request.get(`${new URL(page.url()).origin}/api/auth/me`);
  return (await me.json()).data.csrfToken;
}

describe.skipIf(Boolean(noBrowser))('retrieval checks in Chromium', () => {
  const suite = browserSuite('checks');
  let datasetUrl = '';

  it('saves a check from the search test, runs it, and shows a deleted chunk as newly failing', async () => {
    const { page, errors } = await openPage(suite.browser, { locale: 'en-US', viewport: { width: 1280, height: 900 } });
    suite.onFail = page;
    await signIn(page, suite.k.url);
    const headers = { 'x-csrf-token': await csrf(page) };
    const datasetId = (await (await page.request.post(`${suite.k.url}/api/core/dataset/create`, { data: { name: 'Coast notes' }, headers })).json()).data;
    const made = await page.request.post(`${suite.k.url}/api/core/dataset/collection/create/text`, {
      data: { datasetId, name: 'coast.md', text: TEXT, chunkSize: 40 },
      headers,
    });
    expect(made.status()).toBe(200);
    datasetUrl = `${suite.k.url}/datasets/${datasetId}`;

    // Search, then save the first result as what the question should find.
    await page.goto(`${datasetUrl}/search`);
    await expect
      .poll(async () => (await (await page.request.get(`${suite.k.url}/api/core/dataset/trainingDetail?datasetId=${datasetId}`)).json()).data.done, {
        timeout: 30_000,
      })
      .toBe(3);
    await page.getByLabel('Question').fill('How often does the ferry cross the fjord?');
    await page.getByRole('button', { name: 'Search', exact: true }).click();
    await expect.poll(() => page.getByRole('listitem', { name: 'Result 1' }).textContent(), POLL).toContain('epsilon ferry');
    await page.getByRole('button', { name: 'Save as check' }).click();
    await page.getByRole('checkbox', { name: 'Should find result 1 (coast.md)' }).check();
    const snippet = page.getByRole('textbox', { name: 'Text for result 1' });
    expect(await snippet.inputValue()).toBe('The epsilon ferry crosses the Hardanger fjord nine times a day from Norheimsund.');
    await snippet.fill('epsilon ferry crosses the Hardanger fjord');
    await page.screenshot({ path: join(SHOTS, 'checks-save.png'), fullPage: true });
    await page.getByRole('button', { name: 'Save check' }).click();
    await page.getByText('Saved as a check.').waitFor();

    // The Checks tab: not run yet; Run all passes it at rank 1.
    await page.getByRole('link', { name: 'See the checks' }).click();
    await page.getByRole('heading', { name: 'Retrieval checks' }).waitFor();
    expect(new URL(page.url()).pathname).toBe(`/datasets/${datasetId}/checks`);
    const item = page.locator('.ck-item').filter({ hasText: 'How often does the ferry cross the fjord?' });
    await expect.poll(() => item.textContent(), POLL).toContain('not run yet');
    expect(await item.locator('.ck-quote').textContent()).toBe('epsilon ferry crosses the Hardanger fjord');
    await page.getByRole('button', { name: 'Run all (1)' }).click();
    await expect.poll(() => page.getByRole('region', { name: 'Last run' }).textContent(), { timeout: 20_000 }).toMatch(/1 of 1 pass/);
    await expect.poll(() => item.textContent(), POLL).toMatch(/passes.*rank 1/);
    await page.getByText('The first run: nothing to compare with yet.').waitFor();
    await page.screenshot({ path: join(SHOTS, 'checks-passing.png'), fullPage: true });

    // The ferry's chunk deleted: the next run shows the check newly failing, its source lost.
    const runs = await (await page.request.get(`${suite.k.url}/api/core/dataset/check/run?datasetId=${datasetId}`)).json();
    const dataId = runs.data.run.results[0].expectations[0].dataId;
    expect((await page.request.delete(`${suite.k.url}/api/core/dataset/data/delete?id=${dataId}`, { headers })).status()).toBe(200);
    await page.getByRole('button', { name: 'Run all (1)' }).click();
    const row = page.locator('.ck-diff-row').first();
    await expect.poll(() => row.textContent(), { timeout: 20_000 }).toContain('Newly failing');
    expect(await row.textContent()).toContain('“epsilon ferry crosses the Hardanger fjord”: no longer found (was rank 1)');
    await page.getByText('the chunks changed (re-chunked, edited or imported)').waitFor();
    await expect.poll(() => item.textContent(), POLL).toMatch(/fails.*not found/);
    await page.screenshot({ path: join(SHOTS, 'checks-newly-failing.png'), fullPage: true });

    // Edit the check to what is still there; the list says it was edited since the run.
    await page.getByRole('button', { name: 'Edit “How often does the ferry cross the fjord?”' }).click();
    await page.getByLabel('Sources it should find').fill('Marguerite Okonkwo');
    await page.getByLabel('Question', { exact: true }).fill('Who painted the lighthouse?');
    await page.getByRole('button', { name: 'Save check' }).click();
    const edited = page.locator('.ck-item').filter({ hasText: 'Who painted the lighthouse?' });
    await expect.poll(() => edited.textContent(), POLL).toContain('edited since the last run');
    expect(errors).toEqual([]);
    await page.close();
  }, 120_000);

  it('works at 375 px in dark mode and under a page translator', async () => {
    const { page, errors } = await openPage(suite.browser, { locale: 'en-US', viewport: { width: 375, height: 800 }, colorScheme: 'dark' });
    suite.onFail = page;
    await signIn(page, suite.k.url);
    await translateLikeChrome(page);
    await page.goto(`${datasetUrl}/checks`);
    await expect.poll(() => page.locator('font[data-translated]').count(), POLL).toBeGreaterThan(5);
    await page.getByRole('button', { name: `${TRANSLATED_MARK}Run all (1)` }).click();
    const row = page.locator('.ck-diff-row').first();
    await expect.poll(() => row.textContent(), { timeout: 20_000 }).toContain('Newly passing');
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(375);
    await page.screenshot({ path: join(SHOTS, 'checks-phone-dark.png'), fullPage: true });
    expect(errors).toEqual([]);
    await page.close();
  }, 60_000);
});
