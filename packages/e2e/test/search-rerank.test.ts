// The search test with the steps the local models cannot play, in Chromium on
// a real gateway in front of the upstream simulator: a reranker (sim-rerank),
// whose score each result shows with the "why" line that names its place
// after rerank, and query extension by a chat model (sim-chat), whose added
// queries are listed above the results.
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { noBrowser, openPage } from './browser.js';
import { asPage } from './chat-fixtures.js';
import { SHOTS } from './kbchat-start.js';
import { signInRoot, simPlatformSuite } from './sim-platform.js';

if (noBrowser) console.warn(`[skip] search test with rerank browser tests: ${noBrowser}`);

describe.skipIf(Boolean(noBrowser))('the search test with rerank and query extension, in Chromium', () => {
  const suite = simPlatformSuite({
    simModels: 'sim-chat,sim-embed-384,sim-rerank',
    config: {
      llmModels: [{ model: 'sim-chat', usedInQueryExtension: true }],
      vectorModels: [{ model: 'sim-embed-384' }],
      reRankModels: [{ model: 'sim-rerank' }],
    },
  });

  it("shows each result's rerank score and why it ranked there, and the queries extension added", async () => {
    const { context, page, errors } = await openPage(suite.browser, { locale: 'en-US', viewport: { width: 1280, height: 900 } });
    await signInRoot(page, suite.p.url);
    const call = await asPage(page, suite.p.url);
    const datasetId = await call<string>('/api/core/dataset/create', { name: 'Harbour notes', vectorModel: 'sim-embed-384' });
    await call('/api/core/dataset/collection/create/text', {
      datasetId,
      name: 'harbour.md',
      trainingType: 'chunk',
      chunkSize: 40,
      text: '# Bell\n\nThe harbour master rings the bell at noon.\n\n# Tide\n\nThe tide tables are posted by the gate each morning.\n\n# Boats\n\nFishing boats leave before dawn and return by three.',
    });
    await expect
      .poll(
        async () => {
          const p = await call<{ done: number; total: number }>(`/api/core/dataset/trainingDetail?datasetId=${datasetId}`);
          return p.total > 0 && p.done === p.total;
        },
        { timeout: 60_000 },
      )
      .toBe(true);

    await page.goto(`${suite.p.url}/datasets/${datasetId}/search`);
    await page.getByLabel('Question').fill('When is the bell rung?');
    await page.getByLabel('Rerank the results').check();
    await page.getByLabel('Query extension').check();
    await page.getByRole('button', { name: 'Search', exact: true }).click();
    const first = page.getByRole('listitem', { name: 'Result 1' });
    await first.waitFor();
    // The rerank score in the result's table, and the why line naming its place after rerank.
    const rerankRow = first.getByRole('row').filter({ hasText: 'Rerank' });
    expect(await rerankRow.textContent()).toMatch(/^Rerank\d\.\d{4}1$/);
    expect(await first.locator('.ds-why').textContent()).toMatch(/1st after rerank/);
    expect(await page.getByText('reranked', { exact: true }).count()).toBe(1);
    // Query extension: the model named, its queries (or none) listed.
    await page.getByText('Queries added by sim-chat:').waitFor();
    await page.screenshot({ path: join(SHOTS, 'search-rerank-extension.png'), fullPage: true });
    expect(errors).toEqual([]);
    await context.close();
  });
});
