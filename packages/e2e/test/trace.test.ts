// One trace from an answer to the gateway, in Chromium against `kbchat start`
// (local-embed, local-extractive): an application whose token budget keeps
// one quote answers; its steps show the quote the budget dropped (collapsed,
// with the rule) and one row per model call, whose request id is the one the
// gateway's log holds, with the channel from that log; the search test shows
// its dropped results too; at phone width in dark mode nothing overflows.
// Screenshots: test-output/web/trace-*.png.
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { noBrowser, openPage, sideScroll } from './browser.js';
import { asPage, untilIndexed } from './chat-fixtures.js';
import { browserSuite, ROOT_PASSWORD, SHOTS, signIn } from './kbchat-start.js';

const FACT = 'The lighthouse keeper Marguerite Okonkwo painted the lighthouse tower teal in 1987.';
const OTHER = 'The harbour master rings the lighthouse bell at noon.';

if (noBrowser) console.warn(`[skip] trace browser tests: ${noBrowser}`);

describe.skipIf(Boolean(noBrowser))('the trace of an answer in Chromium', () => {
  const suite = browserSuite('trace');
  /** The gateway's admin API as root (the same root password under kbchat start). */
  let gatewayGet: (path: string) => Promise<any>;

  beforeAll(async () => {
    const login = await fetch(`${suite.k.gatewayUrl}/api/auth/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ username: 'root', password: ROOT_PASSWORD }),
    });
    const { session } = (await login.json()) as { session: string };
    gatewayGet = async (path) => (await fetch(`${suite.k.gatewayUrl}${path}`, { headers: { authorization: `Bearer ${session}` } })).json();
  }, 60_000);

  it("shows the chunk the token budget dropped and each model call with the gateway's request id and channel; the search test shows its dropped chunk", async () => {
    const { page, errors } = await openPage(suite.browser, {
      locale: 'en-US',
      viewport: { width: 1280, height: 900 },
      permissions: ['clipboard-read', 'clipboard-write'],
    });
    suite.onFail = page;
    await signIn(page, suite.k.url);
    const call = await asPage(page, suite.k.url);
    const datasetId = await call<string>('/api/core/dataset/create', { name: 'Trace notes', vectorModel: 'local-embed' });
    await call('/api/core/dataset/collection/create/text', { datasetId, name: 'keeper.md', text: `# Lighthouse\n\n${FACT}\n\n# Harbour\n\n${OTHER}` });
    await untilIndexed(call, datasetId, 2);
    // A budget of one token: the first quote always comes, the second is dropped by the budget.
    const appId = await call<string>('/api/core/app/create', {
      name: 'Traced desk',
      model: 'local-extractive',
      datasets: [datasetId],
      search: { searchMode: 'mixedRecall', similarity: 0, limit: 1 },
    });

    await page.goto(`${suite.k.url}/chat?appId=${appId}`);
    await page.getByRole('heading', { name: 'Traced desk' }).waitFor();
    const message = page.getByRole('textbox', { name: 'Message' });
    await message.fill('Who painted the lighthouse tower teal?');
    await message.press('Enter');
    const answer = page.getByTestId('answer').last();
    await expect.poll(() => answer.textContent(), { timeout: 30_000 }).toContain('Okonkwo');
    await page.getByRole('button', { name: 'Send' }).waitFor();
    await answer.getByRole('button', { name: 'Steps' }).click();

    // The dropped chunk, collapsed until opened, with the rule that dropped it.
    const dropped = answer.locator('details.trace-dropped');
    await dropped.getByText('Dropped (1)').click();
    const droppedItem = dropped.locator('li').first();
    await droppedItem.waitFor();
    expect(await droppedItem.textContent()).toContain('past the token budget (1 tokens)');
    expect(await droppedItem.textContent()).toContain('harbour master');

    // One row per model call: the search's embeddings and the answer, each with the id the gateway logged.
    const table = answer.getByRole('region', { name: 'Model calls' });
    await table.waitFor();
    const rows = table.locator('tbody tr');
    await expect.poll(() => rows.count()).toBe(2);
    expect(await rows.nth(0).locator('td').first().textContent()).toBe('Embeddings');
    expect(await rows.nth(1).locator('td').first().textContent()).toBe('Answer');
    expect(await rows.nth(1).locator('td').nth(1).textContent()).toBe('local-extractive');
    const answerId = (await rows.nth(1).locator('.trace-id code').textContent())!;
    const log = await gatewayGet(`/api/logs/${answerId}`);
    expect(log).toMatchObject({ request_id: answerId, model: 'local-extractive', status: 200 });
    const channel = await gatewayGet(`/api/channels/${log.channel_id}`);
    // Channel, latency and cost come from that log row once the page has read it.
    await expect.poll(() => rows.nth(1).locator('td').nth(2).textContent()).toBe(`${channel.name} (#${log.channel_id})`);
    expect(await rows.nth(1).locator('td').nth(3).textContent()).toBe(`${log.latency_ms} ms`);
    // Local models are free unless priced; a priced one shows its cost to a few significant digits.
    const cost = Number(await rows.nth(1).locator('td').nth(4).textContent());
    expect(Math.abs(cost - log.cost)).toBeLessThanOrEqual(Math.max(1e-4, log.cost * 0.05));
    const embedId = (await rows.nth(0).locator('.trace-id code').textContent())!;
    expect((await gatewayGet(`/api/logs/${embedId}`)).endpoint).toBe('embeddings');
    // The copy button copies the id.
    await rows.nth(1).getByRole('button', { name: 'Copy id' }).click();
    expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(answerId);
    await answer.screenshot({ path: join(SHOTS, 'trace-steps.png') });

    // An old chat (reloaded from the store) still shows what was dropped.
    await expect.poll(() => new URL(page.url()).searchParams.get('chatId')).toMatch(/^[0-9a-f]{24}$/);
    await page.reload();
    const stored = page.getByTestId('answer').last();
    await stored.getByRole('button', { name: 'Steps' }).click();
    await stored.locator('details.trace-dropped').getByText('Dropped (1)').waitFor();
    const chatUrl = page.url();

    // The search test: the same rule, in its own list.
    await page.goto(`${suite.k.url}/datasets/${datasetId}/search`);
    await page.getByLabel('Question').fill('lighthouse');
    await page.getByLabel('Token budget').fill('1');
    await page.getByRole('button', { name: 'Search', exact: true }).click();
    await page.getByRole('listitem', { name: 'Result 1' }).waitFor();
    const searchDropped = page.locator('details.ds-dropped');
    await searchDropped.getByText('Dropped (1)').click();
    await searchDropped.getByText('Found 2, kept 1', { exact: false }).waitFor();
    expect(await searchDropped.locator('li').first().textContent()).toContain('past the token budget (1 tokens)');
    expect(await searchDropped.locator('li').first().textContent()).toMatch(/by meaning/);
    await page.screenshot({ path: join(SHOTS, 'trace-search.png'), fullPage: true });
    expect(errors).toEqual([]);

    // Phone width, dark: the open steps fit (the table scrolls inside itself).
    const phone = await openPage(suite.browser, { locale: 'en-US', viewport: { width: 375, height: 800 }, colorScheme: 'dark' });
    suite.onFail = phone.page;
    await signIn(phone.page, suite.k.url);
    await phone.page.goto(chatUrl);
    const phoneAnswer = phone.page.getByTestId('answer').last();
    await phoneAnswer.waitFor();
    await phoneAnswer.getByRole('button', { name: 'Steps' }).click();
    await phoneAnswer.locator('details.trace-dropped').getByText('Dropped (1)').click();
    const region = phoneAnswer.getByRole('region', { name: 'Model calls' });
    await region.waitFor();
    expect(await sideScroll(phone.page)).toBeLessThanOrEqual(0);
    await phoneAnswer.locator('details.trace-dropped').scrollIntoViewIfNeeded();
    await phone.page.screenshot({ path: join(SHOTS, 'trace-phone-dark.png') });
    await region.scrollIntoViewIfNeeded();
    await phone.page.screenshot({ path: join(SHOTS, 'trace-phone-dark-calls.png') });
    expect(phone.errors).toEqual([]);
  }, 180_000);
});
