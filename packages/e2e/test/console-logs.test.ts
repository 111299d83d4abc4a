// The console's Logs page in Chromium against the real `kbchat gateway` with
// the upstream simulator as provider. Requests are made with the `openai`
// client and an API token made through the admin API; the page finds one by
// its request id (the x-request-id header) and by filters, a filtered view's
// URL opened elsewhere shows the same rows, pages go forward and back by
// cursor, a click on a row opens its detail, and a failed request's detail shows the body sent upstream and
// replays it: the same upstream error for sim-500, the answer beside the old
// error for a model that failed once (as JSON and as a stream) and for a
// channel whose wrong key was fixed through the API. Phone width,
// dark, Chinese under a page translator. Screenshots: test-output/web/console-logs-*.png.
import { join } from 'node:path';
import OpenAI, { APIError } from 'openai';
import type { Page } from 'playwright-core';
import { beforeAll, describe, expect, it } from 'vitest';
import { noBrowser, openPage, sideScroll } from './browser.js';
import { consoleSuite, openConsole, signInToConsole, SIM_KEY } from './console-suite.js';
import { SHOTS } from './kbchat-start.js';
import { TRANSLATED_MARK, translateLikeChrome } from './page-translator.js';

if (noBrowser) console.warn(`[skip] console logs browser tests: ${noBrowser}`);

const ask = (content: string) => [{ role: 'user' as const, content }];

/** The request ids of the rows the list shows, in order (each row's time links to its detail, named with the id). */
async function shownIds(page: Page): Promise<string[]> {
  await page.getByRole('status').waitFor();
  return page.$$eval('table tbody tr td:first-child a', (links) => links.map((a) => /request (\S+)$/.exec(a.getAttribute('aria-label') ?? '')?.[1] ?? ''));
}

describe.skipIf(Boolean(noBrowser))('the console logs page in Chromium', () => {
  const suite = consoleSuite('console-logs');
  const ids = { ok: '', failed: '', flaky: '', flakyStream: '', wrongKey: '', batch: [] as string[] };
  let wrongKeyChannel = 0;
  let user = { id: 0, username: 'logs.ann' };
  let laptop = { id: 0, name: 'ann laptop' };
  let batch = { id: 0, name: 'ann batch' };

  /** The x-request-id of a request that failed, from the openai client's error. */
  const failedId = async (call: Promise<unknown>, status: number): Promise<string> => {
    const err = await call.then(
      () => null,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(APIError);
    expect((err as APIError).status).toBe(status);
    return (err as APIError).headers!.get('x-request-id')!;
  };

  beforeAll(async () => {
    user = await suite.api('/api/users', { method: 'POST', json: { username: 'logs.ann', password: 'logs-ann-password', balance: 50 } });
    const made = async (name: string) => suite.api('/api/tokens', { method: 'POST', json: { user_id: user.id, name } });
    const laptopMade = await made('ann laptop');
    const batchMade = await made('ann batch');
    laptop = laptopMade.token;
    batch = batchMade.token;
    // A channel of the simulator's failing models; each flaky name fails its first request only.
    await suite.api('/api/channels', {
      method: 'POST',
      json: {
        name: 'sim failing',
        type: 'openai',
        base_url: `${suite.sim.url}/v1`,
        key: SIM_KEY,
        models: ['sim-500', 'sim-flaky-1:logs', 'sim-flaky-1:logs-stream'],
      },
    });
    // A channel with a wrong key (fixed later, then replayed).
    const wrongKey = { name: 'sim wrong key', type: 'openai', base_url: `${suite.sim.url}/v1`, key: 'sk-not-the-sim-key', models: ['sim-chat:keyfix'] };
    wrongKeyChannel = (await suite.api('/api/channels', { method: 'POST', json: wrongKey })).id;
    // No client retries: a retry would hide the first failure.
    const client = (key: string) => new OpenAI({ apiKey: key, baseURL: `${suite.url}/v1`, maxRetries: 0 });
    const ann = client(laptopMade.key);

    const ok = await ann.chat.completions.create({ model: 'sim-chat', messages: ask('find me in the logs') }).withResponse();
    expect(ok.data.choices[0]!.message.content).toMatch(/^Echo: find me in the logs/);
    ids.ok = ok.response.headers.get('x-request-id')!;
    expect(ids.ok).toMatch(/^\d{17}[0-9a-f]{12}$/);
    ids.failed = await failedId(ann.chat.completions.create({ model: 'sim-500', messages: ask('this fails upstream') }), 500);
    ids.flaky = await failedId(ann.chat.completions.create({ model: 'sim-flaky-1:logs', messages: ask('fails once') }), 503);
    const wrongKeyCall = ann.chat.completions.create({ model: 'sim-chat:keyfix', messages: ask('once the key is right') });
    ids.wrongKey = await wrongKeyCall.then(
      () => '',
      (e: APIError) => e.headers!.get('x-request-id')!,
    );
    expect(ids.wrongKey).not.toBe('');
    ids.flakyStream = await failedId(
      ann.chat.completions.create({ model: 'sim-flaky-1:logs-stream', messages: ask('streams after failing once'), stream: true }),
      503,
    );

    // 53 more, with another token: more than one page (50).
    const many = client(batchMade.key);
    for (let i = 0; i < 53; i += 9) {
      const calls = Array.from({ length: Math.min(9, 53 - i) }, (_, j) =>
        many.chat.completions.create({ model: 'sim-chat', messages: ask(`batch ${i + j}`) }).withResponse(),
      );
      ids.batch.push(...(await Promise.all(calls)).map((r) => r.response.headers.get('x-request-id')!));
    }
  }, 120_000);

  it('finds a request by its id over every row and by filters; a shared filtered URL shows the same rows; pages by cursor', async () => {
    const { context, page, errors } = await openConsole(suite, { locale: 'en-US', viewport: { width: 1280, height: 900 } });
    const apiCalls: string[] = [];
    page.on('request', (r) => r.url().includes('/api/') && apiCalls.push(new URL(r.url()).pathname));
    await page.goto(`${suite.url}/logs`);
    await page.getByRole('heading', { name: 'Logs' }).waitFor();
    const first = await shownIds(page);
    expect(first).toHaveLength(50);
    // Newest first: the last batch request is on top; the first requests are beyond this page.
    expect(ids.batch).toContain(first[0]);
    expect(first).not.toContain(ids.ok);
    expect(await page.getByRole('status').textContent()).toBe('58 requests');
    // Names, not ids, with one lookup per page: no call per row.
    await page.getByRole('cell', { name: 'ann batch' }).first().waitFor();
    expect(apiCalls.filter((p) => /^\/api\/(users|tokens|channels)\/\d/.test(p))).toEqual([]);
    expect(apiCalls.filter((p) => p === '/api/logs')).toHaveLength(1);
    await page.screenshot({ path: join(SHOTS, 'console-logs-list.png'), fullPage: true });

    // The request-id search finds a row that is not on this page, and opens its detail.
    await page.getByLabel('Request ID').fill(` ${ids.ok} `);
    await page.getByRole('button', { name: 'Find' }).click();
    await page.getByRole('heading', { name: `Request ${ids.ok}` }).waitFor();
    expect(new URL(page.url()).pathname).toBe(`/logs/${ids.ok}`);
    const fields = page.locator('dl');
    await expect.poll(() => fields.textContent()).toContain('logs.ann');
    for (const text of ['ann laptop', 'sim-chat', 'chat', '200']) expect(await fields.textContent()).toContain(text);
    await page.getByText('Only failed requests keep the body they sent upstream').waitFor();
    expect(await page.getByRole('button', { name: 'Replay' }).count()).toBe(0);
    await page.getByRole('link', { name: 'Logs', exact: true }).first().click();
    await page.getByLabel('Request ID').fill('20990101000000000abcdefabcdef');
    await page.getByRole('button', { name: 'Find' }).click();
    expect(await page.getByRole('alert').textContent()).toBe('No request has the ID 20990101000000000abcdefabcdef.');

    // Filters by name; the URL holds ids; the rows are what the API gives for them.
    const filters = page.getByRole('form', { name: 'Filters' });
    await filters.getByLabel(/^User/).selectOption({ label: 'logs.ann' });
    await filters.getByLabel(/^Token/).selectOption({ label: 'ann laptop · logs.ann' });
    await filters.getByLabel('Model').fill('sim-chat');
    await filters.getByLabel('Status').selectOption({ label: 'Succeeded' });
    await filters.getByRole('button', { name: 'Apply' }).click();
    await page.waitForURL(/status=ok/);
    const query = new URL(page.url()).searchParams;
    expect(Object.fromEntries(query)).toEqual({ user_id: String(user.id), token_id: String(laptop.id), model: 'sim-chat', status: 'ok' });
    await expect.poll(() => shownIds(page)).toEqual([ids.ok]);
    expect(await page.getByRole('status').textContent()).toBe('1 request');
    const fromApi = await suite.api(`/api/logs?${query}`);
    expect(fromApi.data.map((r: { request_id: string }) => r.request_id)).toEqual([ids.ok]);

    // The failed ones of that token, newest first, each with its error.
    await filters.getByLabel('Model').fill('');
    await filters.getByLabel('Status').selectOption({ label: 'Failed' });
    await filters.getByRole('button', { name: 'Apply' }).click();
    await expect.poll(() => shownIds(page)).toEqual([ids.flakyStream, ids.wrongKey, ids.flaky, ids.failed]);
    await page.getByRole('row').filter({ hasText: 'sim-500' }).getByText('internal upstream failure').waitFor();
    await page.getByRole('button', { name: 'Last hour' }).click();
    await page.waitForURL(/from=/);
    await expect.poll(() => shownIds(page)).toEqual([ids.flakyStream, ids.wrongKey, ids.flaky, ids.failed]);
    const shared = page.url();
    await page.screenshot({ path: join(SHOTS, 'console-logs-filtered.png'), fullPage: true });

    // Shared: the same URL in another browser session shows the same rows and the same filters.
    const other = await openPage(suite.browser, { locale: 'en-US', viewport: { width: 1280, height: 900 } });
    await signInToConsole(other.page, suite.url);
    await other.page.goto(shared);
    await expect.poll(() => shownIds(other.page)).toEqual([ids.flakyStream, ids.wrongKey, ids.flaky, ids.failed]);
    const otherFilters = other.page.getByRole('form', { name: 'Filters' });
    expect(await otherFilters.getByLabel(/^User/).inputValue()).toBe(String(user.id));
    expect(await otherFilters.getByLabel('Status').inputValue()).toBe('error');
    expect(other.errors).toEqual([]);
    await other.context.close();

    // The pickers search names on the gateway (?q=), so every user and token can be reached, not only a first page.
    await suite.api('/api/users', { method: 'POST', json: { username: 'logs.zed', password: 'logs-zed-password' } });
    await filters.getByLabel('Find a user by name').fill('LOGS.');
    await expect.poll(() => filters.getByLabel(/^User/).locator('option').allTextContents()).toEqual(['Any user', 'logs.ann', 'logs.zed']);
    await filters.getByLabel('Find a user by name').fill('zed');
    // The chosen user stays listed while the search shows another.
    await expect.poll(() => filters.getByLabel(/^User/).locator('option').allTextContents()).toEqual(['Any user', 'logs.zed', 'logs.ann']);
    await filters.getByLabel('Find a token by name').fill('LAPTOP');
    await expect
      .poll(() =>
        filters
          .getByLabel(/^Token/)
          .locator('option')
          .allTextContents(),
      )
      .toEqual(['Any token', 'ann laptop · logs.ann']);
    await filters.getByLabel('Find a user by name').fill('');
    await filters.getByLabel('Find a token by name').fill('');

    // A range before these requests: none.
    await filters.getByLabel('To', { exact: true }).fill('2020-01-01T00:00');
    await filters.getByRole('button', { name: 'Apply' }).click();
    await page.getByText('No requests match these filters.').waitFor();

    // Paging by cursor: the batch token's 53 requests are 50 and 3.
    await page.getByRole('button', { name: 'Clear filters' }).click();
    await filters.getByLabel(/^Token/).selectOption({ label: 'ann batch · logs.ann' });
    await filters.getByRole('button', { name: 'Apply' }).click();
    await page.waitForURL(new RegExp(`token_id=${batch.id}`));
    await expect.poll(() => page.getByRole('status').textContent()).toBe('53 requests');
    const page1 = await shownIds(page);
    const apiPage1 = await suite.api(`/api/logs?token_id=${batch.id}&limit=50`);
    expect(page1).toEqual(apiPage1.data.map((r: { request_id: string }) => r.request_id));
    await page.getByText('Page 1').waitFor();
    await page.getByRole('button', { name: 'Next' }).click();
    await page.waitForURL(/cursor=/);
    await expect.poll(() => shownIds(page)).toHaveLength(3);
    expect(new Set([...page1, ...(await shownIds(page))])).toEqual(new Set(ids.batch));
    await page.getByText('Page 2').waitFor();
    expect(await page.getByRole('button', { name: 'Next' }).isDisabled()).toBe(true);
    // Into a detail and back: the way back is kept.
    await page.locator('table tbody tr td:first-child a').first().click();
    await page.getByRole('heading', { name: /^Request / }).waitFor();
    await page.goBack();
    await expect.poll(() => shownIds(page)).toHaveLength(3);
    // A click anywhere on a row, not only on its time, opens that row's detail.
    const second = (await shownIds(page))[1]!;
    await page.locator('table tbody tr').nth(1).locator('td').nth(5).click(); // its tokens, plain text
    await page.getByRole('heading', { name: `Request ${second}` }).waitFor();
    await page.goBack();
    await expect.poll(() => shownIds(page)).toHaveLength(3);
    await page.getByRole('button', { name: 'Previous' }).click();
    await expect.poll(() => shownIds(page)).toEqual(page1);
    // A reloaded later page has no way back but to the newest.
    await page.getByRole('button', { name: 'Next' }).click();
    await page.waitForURL(/cursor=/);
    await page.reload();
    await expect.poll(() => shownIds(page)).toHaveLength(3);
    expect(await page.getByRole('button', { name: 'Previous' }).isDisabled()).toBe(true);
    await page.getByRole('button', { name: 'Newest' }).click();
    await expect.poll(() => shownIds(page)).toEqual(page1);
    expect(errors).toEqual([]);
    await context.close();
  }, 120_000);

  it("opens a failed request's detail by its URL, shows the body sent upstream, and replays it beside the old error", async () => {
    const { context, page, errors } = await openConsole(suite, { locale: 'en-US', viewport: { width: 1280, height: 900 } });
    const before = page.getByRole('article', { name: 'Before: the original request' });
    const after = page.getByRole('article', { name: 'Now: the replay' });
    const replayedId = async () => (await after.getByRole('link', { name: /Open the replay's log row/ }).textContent())!.match(/\((\S+)\)/)![1]!;

    // A deterministic failure: the replay fails the same way, under a new id.
    await page.goto(`${suite.url}/logs/${ids.failed}`);
    await page.getByRole('heading', { name: `Request ${ids.failed}` }).waitFor();
    const body = page.getByLabel('Request body kept for replay');
    expect(JSON.parse((await body.textContent())!)).toMatchObject({ model: 'sim-500', messages: ask('this fails upstream') });
    expect(await body.textContent()).toContain('\n  "model": "sim-500"'); // pretty JSON
    expect(await body.textContent()).not.toContain(SIM_KEY);
    await page.getByRole('button', { name: 'Replay' }).click();
    await after.waitFor();
    expect(await before.textContent()).toContain('Status 500');
    expect(await before.textContent()).toContain('internal upstream failure');
    expect(await after.textContent()).toContain('Status 500');
    expect(await after.getByTestId('replay-answer').textContent()).toContain('internal upstream failure');
    const again = await replayedId();
    expect(again).not.toBe(ids.failed);
    expect((await suite.api(`/api/logs/${again}`)).status).toBe(500);

    // Failed once, succeeds now: the answer beside the old error, and a link to the replay's own row.
    await page.goto(`${suite.url}/logs/${ids.flaky}`);
    await page.getByRole('heading', { name: `Request ${ids.flaky}` }).waitFor();
    await page.getByRole('button', { name: 'Replay' }).click();
    await after.waitFor();
    expect(await before.textContent()).toContain('Status 503');
    expect(await after.textContent()).toContain('Status 200');
    expect(await after.getByTestId('replay-answer').textContent()).toMatch(/^Echo: fails once/);
    await page.screenshot({ path: join(SHOTS, 'console-logs-replay.png'), fullPage: true });
    const fixed = await replayedId();
    await after.getByRole('link', { name: /Open the replay's log row/ }).click();
    await page.getByRole('heading', { name: `Request ${fixed}` }).waitFor();
    expect(new URL(page.url()).pathname).toBe(`/logs/${fixed}`);
    await expect.poll(() => page.locator('dl').textContent()).toContain('sim-flaky-1:logs');
    expect(await page.locator('dl').textContent()).toContain('ann laptop');
    await page.getByText('Only failed requests keep the body they sent upstream').waitFor();
    expect((await suite.api(`/api/logs/${fixed}`)).status).toBe(200);

    // A channel whose key was wrong: the old error names it; fixed through the API, the replay answers.
    await page.goto(`${suite.url}/logs/${ids.wrongKey}`);
    await page.getByRole('heading', { name: `Request ${ids.wrongKey}` }).waitFor();
    await suite.api(`/api/channels/${wrongKeyChannel}`, { method: 'PATCH', json: { key: SIM_KEY } });
    await page.getByRole('button', { name: 'Replay' }).click();
    await after.waitFor();
    expect(await before.textContent()).toContain('Incorrect API key provided');
    expect(await after.textContent()).toContain('Status 200');
    expect(await after.getByTestId('replay-answer').textContent()).toMatch(/^Echo: once the key is right/);

    // A stream: the payloads joined into the answer's text; the raw payloads behind a toggle.
    await page.goto(`${suite.url}/logs/${ids.flakyStream}`);
    expect(JSON.parse((await page.getByLabel('Request body kept for replay').textContent())!)).toMatchObject({ stream: true });
    await page.getByRole('button', { name: 'Replay' }).click();
    await after.waitFor();
    expect(await after.textContent()).toContain('stream');
    expect(await after.getByTestId('replay-answer').textContent()).toMatch(/^Echo: streams after failing once/);
    const toggle = after.getByText(/Raw stream payloads \(\d+\)/);
    const payloads = after.locator('ol li');
    expect(await payloads.first().isVisible()).toBe(false);
    await toggle.click();
    await payloads.first().waitFor();
    expect(await payloads.last().textContent()).toBe('[DONE]');
    expect(await payloads.first().textContent()).toContain('chat.completion.chunk');
    await page.screenshot({ path: join(SHOTS, 'console-logs-replay-stream.png'), fullPage: true });

    // A request id no row has, typed into the address bar.
    await page.goto(`${suite.url}/logs/20990101000000000abcdefabcdef`);
    expect(await page.getByRole('alert').textContent()).toContain('No request has the ID 20990101000000000abcdefabcdef');
    // Not an id at all: the API's own words, in place.
    await page.goto(`${suite.url}/logs/not%20an%20id%25`);
    await page.getByRole('alert').waitFor();
    expect(await page.getByRole('alert').textContent()).toContain("Invalid 'requestId': not a request id");
    expect(errors).toEqual([]);
    await context.close();
  }, 120_000);

  it('fits a phone in dark mode, in Chinese, under a page translator', async () => {
    const { context, page, errors } = await openConsole(suite, { locale: 'en-US', viewport: { width: 375, height: 780 }, colorScheme: 'dark' });
    await page.goto(`${suite.url}/logs?user_id=${user.id}`);
    await expect.poll(() => shownIds(page)).toHaveLength(50);
    expect(await sideScroll(page)).toBeLessThanOrEqual(0);
    // The top of the page (the rows below are more of the same).
    await page.screenshot({ path: join(SHOTS, 'console-logs-phone-dark.png') });
    await page.goto(`${suite.url}/logs/${ids.failed}`);
    await page.getByRole('button', { name: 'Replay' }).click();
    await page.getByRole('article', { name: 'Now: the replay' }).waitFor();
    expect(await sideScroll(page)).toBeLessThanOrEqual(0);
    await page.screenshot({ path: join(SHOTS, 'console-logs-phone-detail.png'), fullPage: true });

    await page.getByRole('button', { name: '中文' }).click();
    await page.getByRole('heading', { name: `请求 ${ids.failed}` }).waitFor();
    await translateLikeChrome(page);
    await page.reload();
    // The translator rewrote the text; the page still works: Replay answers, the list filters.
    await page.getByRole('heading', { name: `${TRANSLATED_MARK}请求 ${ids.failed}` }).waitFor();
    await page.getByRole('button', { name: `${TRANSLATED_MARK}重放` }).click();
    await page.getByRole('article', { name: '现在：重放' }).waitFor();
    expect(await page.getByTestId('replay-answer').textContent()).toContain('internal upstream failure');
    await page.screenshot({ path: join(SHOTS, 'console-logs-phone-zh.png'), fullPage: true });
    await page.goto(`${suite.url}/logs`);
    const filters = page.getByRole('form', { name: '筛选' });
    await filters.getByLabel('状态').selectOption({ value: 'error' });
    await filters.getByRole('button', { name: `${TRANSLATED_MARK}应用` }).click();
    await page.waitForURL(/status=error/);
    await expect.poll(async () => (await shownIds(page)).length).toBeGreaterThanOrEqual(3);
    expect(await sideScroll(page)).toBeLessThanOrEqual(0);
    expect(errors).toEqual([]);
    await context.close();
  }, 120_000);
});
