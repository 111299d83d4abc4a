// A plain user's own balance on the console, below zero after post-consume
// (issue 13: "the user page and API show the negative balance"): against the
// real `kbchat gateway` with the simulator, a user with 100 micro-units asks
// for a long answer with one output token reserved; every logged cost is
// taken, so the balance goes below zero and the Tokens page says so.
import { join } from 'node:path';
import OpenAI from 'openai';
import { describe, expect, it } from 'vitest';
import { noBrowser, openPage } from './browser.js';
import { consoleSuite, signInToConsole } from './console-suite.js';
import { SHOTS } from './kbchat-start.js';

if (noBrowser) console.warn(`[skip] console balance browser tests: ${noBrowser}`);

describe.skipIf(Boolean(noBrowser))('the console: a user’s own balance', () => {
  // Output tokens at 50 micro-units each, input free; one output token reserved per request.
  const suite = consoleSuite('console-balance', { DEFAULT_INPUT_PRICE: '0', DEFAULT_OUTPUT_PRICE: '50', RESERVE_OUTPUT_TOKENS: '1', LEDGER_FLUSH_MS: '200' });

  it('shows a plain user their balance, and below zero once an answer cost more than was reserved', async () => {
    const bob = await suite.api('/api/users', { json: { username: 'bob', password: 'bob-password', balance: 0.0001 } });
    const { key } = await suite.api('/api/tokens', { json: { user_id: bob.id, name: 'bob-cli' } });

    const { page, context, errors } = await openPage(suite.browser, { locale: 'en-US', viewport: { width: 1280, height: 900 } });
    suite.onFail = page;
    await signInToConsole(page, suite.url, 'bob', 'bob-password');
    await page.getByRole('heading', { name: 'Tokens' }).waitFor();
    expect(await page.getByTestId('own-balance').textContent()).toBe('Your balance: 0.0001 units.');

    const client = new OpenAI({ apiKey: key, baseURL: `${suite.url}/v1`, maxRetries: 0 });
    const answer = await client.chat.completions.create({ model: 'sim-chat', messages: [{ role: 'user', content: 'word '.repeat(200) }] });
    const cost = answer.usage!.completion_tokens * 50;
    expect(cost).toBeGreaterThan(100);
    const expected = (100 - cost) / 1e6;
    await expect.poll(async () => (await suite.api(`/api/users/${bob.id}`)).balance, { timeout: 10_000 }).toBeCloseTo(expected, 6);

    await page.reload();
    const shown = page.getByTestId('own-balance');
    await shown.waitFor();
    expect(await shown.textContent()).toContain(`Your balance: ${Number(expected.toFixed(6)).toLocaleString('en-US', { maximumFractionDigits: 6 })} units.`);
    expect(await shown.textContent()).toContain('below zero');
    // The token has no limit of its own, so it has no usage of its own either: the row says where the spend went.
    expect(await page.getByTestId('quota').textContent()).toBe('No limit of its own (spend counts on the owner)');
    // Then requests are refused until it is topped up.
    await expect(client.chat.completions.create({ model: 'sim-chat', messages: [{ role: 'user', content: 'again' }] })).rejects.toThrow(/quota/);
    await page.screenshot({ path: join(SHOTS, 'console-balance-negative.png'), fullPage: true });
    expect(errors).toEqual([]);
    await context.close();
  }, 90_000);
});
