// The console's prices page in Chromium against the real `kbchat gateway`
// (the simulator as its provider): the environment's models listed at the
// default they are charged; a price set by one-api ratios shows its units per
// 1M (and the API holds it), one set by units shows its ratios; a request's
// logged cost follows each; delete goes back to the default; a price added for
// a model whose name holds '/', ' ' and '%'; a bad number refused in place.
// Light, dark phone, Chinese. Screenshots: test-output/web/console-prices-*.png.
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { noBrowser, sideScroll } from './browser.js';
import { consoleSuite, openConsole } from './console-suite.js';
import { SHOTS } from './kbchat-start.js';

if (noBrowser) console.warn(`[skip] console prices browser tests: ${noBrowser}`);

describe.skipIf(Boolean(noBrowser))('the console prices page in Chromium', () => {
  const suite = consoleSuite('prices');

  /** A row's figures as the page shows them. */
  async function rowOf(page: Page, model: string) {
    const row = page.getByRole('row').filter({ has: page.getByTestId('model').getByText(model, { exact: true }) });
    const cell = (id: string) => row.getByTestId(id).textContent();
    return {
      charged: await cell('charged'),
      model_ratio: await cell('model-ratio'),
      completion_ratio: await cell('completion-ratio'),
      input: await cell('input-price'),
      output: await cell('output-price'),
    };
  }

  /** One chat request with a plain user's token; its log row, once written. */
  async function loggedRequest(key: string) {
    const res = await fetch(`${suite.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'sim-chat', messages: [{ role: 'user', content: 'what does this cost' }] }),
    });
    expect(res.status).toBe(200);
    await res.text();
    const id = res.headers.get('x-request-id')!;
    let row: any;
    await expect.poll(async () => (row = (await suite.api(`/api/logs?request_id=${id}`)).data[0]), { timeout: 20_000 }).toBeTruthy();
    expect(row.prompt_tokens).toBeGreaterThan(0);
    return row;
  }
  const expectedMicros = (row: any, inputUnits: number, outputUnits: number) =>
    Math.ceil((row.prompt_tokens * inputUnits * 1e6 + row.completion_tokens * outputUnits * 1e6) / 1e6);

  it('sets a price by ratios and by units, deletes it, adds one; each read back, and the logged cost follows', async () => {
    const user = await suite.api('/api/users', { json: { username: 'payer', password: 'payer-password', balance: 50 } });
    const { key } = await suite.api('/api/tokens', { json: { user_id: user.id, name: 'payer key' } });
    const { context, page, errors } = await openConsole(suite, { locale: 'en-US', viewport: { width: 1280, height: 900 } });
    await page.goto(`${suite.url}/prices`);
    await page.getByRole('heading', { name: 'Prices' }).waitFor();
    // The default's line comes with the prices (the convention's first line is there before them).
    await expect.poll(() => page.getByTestId('convention').textContent()).toContain('the default: ');
    const convention = await page.getByTestId('convention').textContent();
    expect(convention).toContain('model ratio 1 = $0.002 per 1K input tokens = 2 units per 1M input tokens');
    expect(convention).toContain('the default: 2 per 1M input tokens and 8 per 1M output tokens (model ratio 1, completion ratio 4)');
    // The environment's models have no price: listed at the default they are charged.
    await page.getByTestId('model').getByText('sim-chat', { exact: true }).waitFor();
    expect(await rowOf(page, 'sim-chat')).toEqual({ charged: 'Default', model_ratio: '1', completion_ratio: '4', input: '2', output: '8' });
    expect((await rowOf(page, 'sim-embed-8')).charged).toBe('Default');
    const atDefault = await loggedRequest(key);
    expect(atDefault.cost_micros).toBe(expectedMicros(atDefault, 2, 8));

    // By ratios: the units per 1M follow as they are typed; the page says what the gateway then holds.
    await page.getByRole('button', { name: 'Set a price for sim-chat' }).click();
    const form = page.getByRole('form', { name: 'Price of sim-chat' });
    await form.getByLabel('Model ratio').fill('0.25');
    expect(await form.getByLabel('Input per 1M tokens').inputValue()).toBe('0.5');
    expect(await form.getByLabel('Output per 1M tokens').inputValue()).toBe('2');
    await form.getByLabel('Completion ratio').fill('2');
    expect(await form.getByLabel('Output per 1M tokens').inputValue()).toBe('1');
    await page.screenshot({ path: join(SHOTS, 'console-prices-editor.png'), fullPage: true });
    await form.getByRole('button', { name: 'Save' }).click();
    await page.getByRole('status').waitFor();
    expect(await page.getByRole('status').textContent()).toBe(
      'Saved: the gateway now charges sim-chat 0.5 per 1M input tokens and 1 per 1M output tokens (model ratio 0.25, completion ratio 2).',
    );
    await expect.poll(() => rowOf(page, 'sim-chat')).toEqual({ charged: 'Own price', model_ratio: '0.25', completion_ratio: '2', input: '0.5', output: '1' });
    expect(await suite.api('/api/prices/sim-chat')).toEqual({ model: 'sim-chat', input_price: 0.5, output_price: 1, model_ratio: 0.25, completion_ratio: 2 });
    const cheap = await loggedRequest(key);
    expect(cheap.cost_micros).toBe(expectedMicros(cheap, 0.5, 1));
    expect(cheap.cost).toBe(cheap.cost_micros / 1e6);

    // By units: the ratios follow.
    await page.getByRole('button', { name: 'Edit the price of sim-chat' }).click();
    await form.getByLabel('Input per 1M tokens').fill('3');
    await form.getByLabel('Output per 1M tokens').fill('9');
    expect(await form.getByLabel('Model ratio').inputValue()).toBe('1.5');
    expect(await form.getByLabel('Completion ratio').inputValue()).toBe('3');
    await form.getByRole('button', { name: 'Save' }).click();
    await expect
      .poll(() => page.getByRole('status').textContent())
      .toContain('charges sim-chat 3 per 1M input tokens and 9 per 1M output tokens (model ratio 1.5, completion ratio 3)');
    await expect.poll(() => rowOf(page, 'sim-chat')).toEqual({ charged: 'Own price', model_ratio: '1.5', completion_ratio: '3', input: '3', output: '9' });
    expect(await suite.api('/api/prices/sim-chat')).toMatchObject({ input_price: 3, output_price: 9, model_ratio: 1.5, completion_ratio: 3 });
    const dear = await loggedRequest(key);
    expect(dear.cost_micros).toBe(expectedMicros(dear, 3, 9));
    await page.screenshot({ path: join(SHOTS, 'console-prices-light.png'), fullPage: true });

    // Delete: back to the default, on the page and in the API, and for the next request.
    await page.getByRole('button', { name: 'Delete “the price of sim-chat”' }).click();
    await page.getByRole('button', { name: 'Yes, delete' }).click();
    await expect
      .poll(() => page.getByRole('status').textContent())
      .toBe('Deleted the price of sim-chat: it is now charged 2 per 1M input tokens and 8 per 1M output tokens (model ratio 1, completion ratio 4).');
    await expect.poll(() => rowOf(page, 'sim-chat')).toMatchObject({ charged: 'Default', input: '2', output: '8' });
    const list = await suite.api('/api/prices');
    expect(list.data.map((p: any) => p.model)).not.toContain('sim-chat');
    expect(list.unpriced.find((p: any) => p.model === 'sim-chat')).toMatchObject({ charged: 'default', input_price: 2, output_price: 8 });
    const back = await loggedRequest(key);
    expect(back.cost_micros).toBe(expectedMicros(back, 2, 8));

    // Add a price for any model, whose name holds characters a path must encode; a bad number is refused in place.
    const odd = 'acme/model x%';
    await page.getByRole('button', { name: 'Add a price' }).click();
    const add = page.getByRole('form', { name: 'A price for a model' });
    await add.getByLabel('Model', { exact: true }).fill(odd);
    await add.getByLabel('Model ratio').fill('lots');
    await add.getByRole('button', { name: 'Save' }).click();
    expect(await add.getByRole('alert').textContent()).toBe('Enter numbers (0 or more).');
    await add.getByLabel('Model ratio').fill('0.1');
    await add.getByRole('button', { name: 'Save' }).click();
    await expect.poll(() => page.getByRole('status').textContent()).toContain(`charges ${odd} 0.2 per 1M input tokens and 0.2 per 1M output tokens`);
    await expect.poll(() => rowOf(page, odd)).toEqual({ charged: 'Own price', model_ratio: '0.1', completion_ratio: '1', input: '0.2', output: '0.2' });
    expect(await suite.api(`/api/prices/${encodeURIComponent(odd)}`)).toMatchObject({ model: odd, input_price: 0.2, output_price: 0.2 });
    await page.reload();
    await expect.poll(() => rowOf(page, odd)).toMatchObject({ charged: 'Own price', input: '0.2' });
    expect(errors).toEqual([]);
    await context.close();
  }, 120_000);

  it('fits a phone in dark mode, and reads in Chinese', async () => {
    const { context, page, errors } = await openConsole(suite, { locale: 'en-US', viewport: { width: 375, height: 800 }, colorScheme: 'dark' });
    await page.goto(`${suite.url}/prices`);
    await page.getByTestId('model').getByText('sim-chat', { exact: true }).waitFor();
    await page.getByRole('button', { name: 'Set a price for sim-chat' }).click();
    expect(await sideScroll(page)).toBeLessThanOrEqual(0);
    await page.screenshot({ path: join(SHOTS, 'console-prices-phone-dark.png'), fullPage: true });
    await page.getByRole('button', { name: '中文' }).click();
    await page.getByRole('heading', { name: '价格' }).waitFor();
    expect(await page.getByTestId('convention').textContent()).toContain('模型倍率 1 = 每 1K 输入令牌 $0.002 = 每 1M 输入令牌 2 单位');
    await page.setViewportSize({ width: 1280, height: 900 });
    await page.screenshot({ path: join(SHOTS, 'console-prices-zh.png'), fullPage: true });
    expect(errors).toEqual([]);
    await context.close();
  }, 90_000);
});
