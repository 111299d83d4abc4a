// The application pages against the real `kbchat start` (local-extractive as
// the LLM, local-embed for vectors): create an application through the form,
// edit its temperature, a system prompt with a {{variable}}, its knowledge
// base and a classification with two categories, save, and find every value
// after a reload and in the platform; a bad value shows the platform's 400
// naming the field and loses nothing; unsaved changes are marked, the test
// pane says it tests the saved settings and answers from the saved app,
// leaving asks first; a save's warning; names with %, / and CJK; phone width,
// dark mode, Chinese, a page translator. Screenshots: test-output/web/apps-*.png.
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import type { PublicApp } from '@kbchat/platform';
import { noBrowser, sideScroll } from './browser.js';
import { browserSuite, SHOTS, signIn } from './kbchat-start.js';
import { TRANSLATED_MARK, translateLikeChrome } from './page-translator.js';

const APP_NAME = 'Support Ünïcode / 测试 %E0';
const DATASET_NAME = 'Returns KB Ünïcode / 测试 %E0';
const PROMPT = 'You help {{customer}} with returns. Be brief.';
const SAVED_NOTICE = 'Testing the saved settings — save to test your changes.';
const FACT = 'Orders from the Lantern Street shop can be returned within 45 days of delivery, with the receipt.';

if (noBrowser) console.warn(`[skip] apps browser tests: ${noBrowser}`);

/** A change through the platform's API with the page's session (setup only). */
async function post<T>(page: Page, url: string, path: string, body: unknown): Promise<T> {
  const me = await page.request.get(`${url}/api/auth/me`);
  const csrf = ((await me.json()) as { data: { csrfToken: string } }).data.csrfToken;
  const res = await page.request.post(`${url}${path}`, { data: body, headers: { 'x-csrf-token': csrf } });
  expect(res.status(), await res.text()).toBe(200);
  return ((await res.json()) as { data: T }).data;
}

async function detail(page: Page, url: string, appId: string): Promise<PublicApp> {
  const res = await page.request.get(`${url}/api/core/app/detail?appId=${encodeURIComponent(appId)}`);
  expect(res.status()).toBe(200);
  return ((await res.json()) as { data: PublicApp }).data;
}

const saveBar = (page: Page) => page.locator('.ap-savebar');
const category = (page: Page, n: number) => page.getByRole('group', { name: `Category ${n}`, exact: true });

describe.skipIf(Boolean(noBrowser))('application pages in Chromium', () => {
  const suite = browserSuite('apps');
  let appId = '';
  let datasetId = '';

  it('creates an application, edits and saves its settings, and keeps them after a reload', async () => {
    const page = await suite.browser.newPage({ locale: 'en-US', viewport: { width: 1280, height: 900 } });
    const errors: string[] = [];
    page.on('pageerror', (e) => errors.push(e.message));
    suite.onFail = page;
    await signIn(page, suite.k.url);
    datasetId = await post<string>(page, suite.k.url, '/api/core/dataset/create', { name: DATASET_NAME });
    await post(page, suite.k.url, '/api/core/dataset/collection/create/text', { datasetId, name: 'Returns policy', text: FACT });

    // Create through the form: the served local LLM is the default.
    await page.getByRole('link', { name: 'Applications' }).click();
    await page.getByRole('heading', { level: 1, name: 'Applications' }).waitFor();
    await page.getByText('No applications yet').waitFor();
    await expect.poll(() => page.getByLabel('Model').inputValue()).toBe('local-extractive');
    await page.getByLabel('Name', { exact: true }).fill(APP_NAME);
    await page.getByLabel('Introduction').fill('Answers questions about returns');
    await page.getByRole('button', { name: 'Create application' }).click();
    await page.getByRole('heading', { level: 1, name: APP_NAME }).waitFor();
    appId = decodeURIComponent(new URL(page.url()).pathname.split('/').pop()!);
    expect(appId).toMatch(/^\w+$/);
    expect((await detail(page, suite.k.url, appId)).model).toBe('local-extractive');

    // Nothing changed yet: nothing to save, no notice in the test pane.
    expect(await page.getByRole('button', { name: 'Save', exact: true }).isDisabled()).toBe(true);
    expect(await page.getByText(SAVED_NOTICE).count()).toBe(0);
    // The quote texts are empty and show the platform's defaults.
    expect(await page.getByRole('textbox', { name: 'Quote template' }).getAttribute('placeholder')).toContain('<quote id="{{index}}"');
    expect(await page.getByRole('textbox', { name: 'Quote prompt' }).getAttribute('placeholder')).toContain('{{quote}}');
    // No rerank model is configured under kbchat start, and the page says so.
    await page.getByText('No rerank model is configured').waitFor();

    await page.getByLabel('Temperature').fill('0.7');
    // Unsaved changes are marked, and the test pane says what it tests.
    await saveBar(page).getByText('Unsaved changes').waitFor();
    await page.getByText(SAVED_NOTICE).waitFor();
    await page.getByLabel('System prompt', { exact: true }).fill(PROMPT);
    await page.locator('.ap-variables').getByText('{{customer}}').waitFor();
    await page.getByRole('checkbox', { name: DATASET_NAME }).check();
    await page.getByRole('checkbox', { name: 'Classify each question first' }).check();
    await category(page, 1).getByLabel('Description').fill('Returning or exchanging an order');
    await category(page, 2).getByLabel('Id', { exact: true }).fill('other');
    await category(page, 2).getByLabel('Description').fill('Anything else');
    await category(page, 2).getByLabel('Fixed reply').fill('I can only help with returns.');
    await page.screenshot({ path: join(SHOTS, 'apps-settings-unsaved.png'), fullPage: true });

    await page.getByRole('button', { name: 'Save', exact: true }).click();
    await saveBar(page).getByText('Saved', { exact: true }).waitFor();
    expect(await page.getByText(SAVED_NOTICE).count()).toBe(0);
    expect(await page.getByRole('alert').count()).toBe(0);

    // The platform holds what the form showed.
    const stored = await detail(page, suite.k.url, appId);
    expect(stored.temperature).toBe(0.7);
    expect(stored.systemPrompt).toBe(PROMPT);
    expect(stored.datasets).toEqual([datasetId]);
    expect(stored.classify?.categories).toEqual([
      { id: 'category1', description: 'Returning or exchanging an order' },
      { id: 'other', description: 'Anything else', reply: 'I can only help with returns.' },
    ]);
    expect(stored.name).toBe(APP_NAME);

    // After a reload, every value is back in the form.
    await page.reload();
    await page.getByRole('heading', { level: 1, name: APP_NAME }).waitFor();
    expect(await page.getByLabel('Temperature').inputValue()).toBe('0.7');
    expect(await page.getByLabel('System prompt', { exact: true }).inputValue()).toBe(PROMPT);
    expect(await page.getByRole('checkbox', { name: DATASET_NAME }).isChecked()).toBe(true);
    expect(await page.getByRole('checkbox', { name: 'Classify each question first' }).isChecked()).toBe(true);
    expect(await category(page, 1).getByLabel('Description').inputValue()).toBe('Returning or exchanging an order');
    expect(await category(page, 2).getByLabel('Id', { exact: true }).inputValue()).toBe('other');
    expect(await category(page, 2).getByLabel('Fixed reply').inputValue()).toBe('I can only help with returns.');
    expect(await page.getByLabel('Name', { exact: true }).inputValue()).toBe(APP_NAME);
    expect(await saveBar(page).getByText('Unsaved changes').count()).toBe(0);
    await page.screenshot({ path: join(SHOTS, 'apps-settings.png'), fullPage: true });
    expect(errors).toEqual([]);
    await page.close();
  });

  it('shows the platform’s 400 naming the field beside the form and loses nothing', async () => {
    const page = await suite.browser.newPage({ locale: 'en-US', viewport: { width: 1280, height: 900 } });
    const errors: string[] = [];
    page.on('pageerror', (e) => errors.push(e.message));
    suite.onFail = page;
    await signIn(page, suite.k.url);
    await page.goto(`${suite.k.url}/apps/${encodeURIComponent(appId)}`);
    await page.getByRole('heading', { level: 1, name: APP_NAME }).waitFor();

    // One category: the platform refuses it, naming classify.categories.
    await page.getByLabel('Temperature').fill('1.2');
    await page.getByRole('button', { name: 'Remove category 2' }).click();
    await page.getByRole('button', { name: 'Save', exact: true }).click();
    const alert = page.getByRole('alert');
    await expect.poll(() => alert.textContent()).toContain("Invalid 'classify.categories'");
    // Nothing lost: the form keeps every edit and still says it is unsaved; the platform kept the saved app.
    expect(await page.getByLabel('Temperature').inputValue()).toBe('1.2');
    expect(await category(page, 1).getByLabel('Description').inputValue()).toBe('Returning or exchanging an order');
    await saveBar(page).getByText('Unsaved changes').waitFor();
    await page.getByText(SAVED_NOTICE).waitFor();
    expect(await page.locator('.ap-section.ap-invalid h2').textContent()).toBe('Classification');
    let stored = await detail(page, suite.k.url, appId);
    expect(stored.temperature).toBe(0.7);
    expect(stored.classify?.categories).toHaveLength(2);
    await page.screenshot({ path: join(SHOTS, 'apps-settings-error.png'), fullPage: true });

    // An extraction key starting with a digit: the platform names that field.
    await page.getByRole('button', { name: 'Add a category' }).click();
    await category(page, 2).getByLabel('Description').fill('Anything else');
    await page.getByRole('checkbox', { name: 'Extract values from each question first' }).check();
    const field = page.getByRole('group', { name: 'Field 1', exact: true });
    await field.getByLabel('Key', { exact: true }).fill('1customer');
    await field.getByLabel('Field description').fill('The customer’s name');
    await page.getByRole('button', { name: 'Save', exact: true }).click();
    await expect.poll(() => alert.textContent()).toContain("Invalid 'extract.fields[0].key'");
    expect(await alert.textContent()).toContain('a key is a letter or _');
    expect(await field.getByLabel('Key', { exact: true }).inputValue()).toBe('1customer');
    expect((await detail(page, suite.k.url, appId)).extract).toBeNull();

    // Fixed, it saves; the extracted key is marked among the prompt's variables.
    await field.getByLabel('Key', { exact: true }).fill('customer');
    await page.locator('.ap-variables').getByText('extracted').waitFor();
    await page.getByRole('button', { name: 'Save', exact: true }).click();
    await saveBar(page).getByText('Saved', { exact: true }).waitFor();
    expect(await alert.count()).toBe(0);
    stored = await detail(page, suite.k.url, appId);
    expect(stored.temperature).toBe(1.2);
    expect(stored.classify?.categories.map((c) => c.description)).toEqual(['Returning or exchanging an order', 'Anything else']);
    expect(stored.extract?.fields).toEqual([{ key: 'customer', description: 'The customer’s name', type: 'string', required: false }]);

    // A saved temperature emptied cannot be unset through an update: the form says so before asking.
    await page.getByLabel('Temperature').fill('');
    await expect.poll(() => alert.textContent()).toContain('temperature has a saved value');
    expect(await page.getByRole('button', { name: 'Save', exact: true }).isDisabled()).toBe(true);
    await page.getByRole('button', { name: 'Discard changes' }).click();
    expect(await page.getByLabel('Temperature').inputValue()).toBe('1.2');
    expect(errors).toEqual([]);
    await page.close();
  });

  it('asks before leaving with unsaved changes: a link, the back button, closing the tab', async () => {
    const page = await suite.browser.newPage({ locale: 'en-US', viewport: { width: 1280, height: 900 } });
    const errors: string[] = [];
    page.on('pageerror', (e) => errors.push(e.message));
    suite.onFail = page;
    await signIn(page, suite.k.url);
    await page.getByRole('link', { name: 'Applications' }).click();
    await page.getByRole('link', { name: `Settings of ${APP_NAME}` }).click();
    await page.getByRole('heading', { level: 1, name: APP_NAME }).waitFor();
    const settingsUrl = page.url();
    await page.getByLabel('Introduction').fill('Changed, not saved');

    const dialogs: string[] = [];
    const answer = (accept: boolean) => page.once('dialog', (d) => void (dialogs.push(`${d.type()}: ${d.message()}`), accept ? d.accept() : d.dismiss()));
    answer(false);
    await page.getByRole('navigation', { name: 'Breadcrumb' }).getByRole('link', { name: 'Applications' }).click();
    await expect.poll(() => dialogs.length).toBe(1);
    expect(dialogs[0]).toBe('confirm: This application has unsaved changes. Leave without saving them?');
    expect(page.url()).toBe(settingsUrl);
    expect(await page.getByLabel('Introduction').inputValue()).toBe('Changed, not saved');

    answer(false);
    await page.evaluate(() => history.back());
    await expect.poll(() => dialogs.length).toBe(2);
    await expect.poll(() => page.url()).toBe(settingsUrl);
    expect(await page.getByLabel('Introduction').inputValue()).toBe('Changed, not saved');

    // Closing or reloading: headless Chromium never shows the browser's own
    // question, so the test checks that the page asks for it.
    const asksOnUnload = () =>
      page.evaluate(() => {
        const e = new Event('beforeunload', { cancelable: true });
        window.dispatchEvent(e);
        return e.defaultPrevented;
      });
    expect(await asksOnUnload()).toBe(true);

    answer(true);
    await page.getByRole('link', { name: 'Knowledge bases' }).click();
    await page.getByRole('heading', { level: 1, name: 'Knowledge bases' }).waitFor();
    expect(dialogs).toHaveLength(3);
    expect(await asksOnUnload()).toBe(false);
    await page.getByText(DATASET_NAME).first().waitFor();
    expect(errors).toEqual([]);
    await page.close();
  });

  it('lists applications with their model and knowledge bases, links to chat, searches and deletes', async () => {
    const page = await suite.browser.newPage({ locale: 'en-US', viewport: { width: 1280, height: 900 } });
    const errors: string[] = [];
    page.on('pageerror', (e) => errors.push(e.message));
    suite.onFail = page;
    await signIn(page, suite.k.url);
    await post(page, suite.k.url, '/api/core/app/create', { name: 'Scratch app', model: 'local-extractive' });
    await page.goto(`${suite.k.url}/apps`);
    const row = page.getByRole('row').filter({ hasText: APP_NAME });
    await row.waitFor();
    expect(await page.getByText('Total: 2').count()).toBe(1);
    const cells = await row.getByRole('cell').allTextContents();
    expect(cells[0]).toBe(`${APP_NAME}Answers questions about returns`);
    expect(cells[1]).toBe('local-extractive');
    expect(cells[2]).toBe('1');
    expect(await row.getByRole('link', { name: `Chat with ${APP_NAME}` }).getAttribute('href')).toBe(`/chat?appId=${appId}`);
    await page.screenshot({ path: join(SHOTS, 'apps-list.png'), fullPage: true });

    // Search by a name holding CJK, % and /.
    await page.getByLabel('Search applications').fill('测试 %E0');
    await expect.poll(() => page.getByRole('row').count()).toBe(2); // header and the one match
    await page.getByLabel('Search applications').fill('');
    await expect.poll(() => page.getByRole('row').count()).toBe(3);

    // Delete asks in place, then the row goes.
    const scratch = page.getByRole('row').filter({ hasText: 'Scratch app' });
    await scratch.getByRole('button', { name: 'Delete “Scratch app”' }).click();
    await scratch.getByText('Delete “Scratch app”? This cannot be undone.').waitFor();
    await scratch.getByRole('button', { name: 'Yes, delete' }).click();
    await expect.poll(() => scratch.count()).toBe(0);
    await page.getByText('Total: 1').waitFor();

    // The chat link leads to the chat area with the application.
    await row.getByRole('link', { name: `Chat with ${APP_NAME}` }).click();
    await page.waitForURL(`${suite.k.url}/chat?appId=${appId}`);
    expect(errors).toEqual([]);
    await page.close();
  });

  it('fits a phone, follows dark mode, and survives a page translator', async () => {
    const phone = await suite.browser.newContext({ viewport: { width: 375, height: 780 }, locale: 'en-US' });
    const page = await phone.newPage();
    const errors: string[] = [];
    page.on('pageerror', (e) => errors.push(e.message));
    suite.onFail = page;
    await signIn(page, suite.k.url);
    for (const path of ['/apps', `/apps/${encodeURIComponent(appId)}`]) {
      await page.goto(`${suite.k.url}${path}`);
      await page.getByRole('heading', { level: 1 }).waitFor();
      await page.locator('.ap-table, .ap-form').first().waitFor();
      const overflow = await sideScroll(page);
      expect(overflow, path).toBeLessThanOrEqual(0);
      if (path === '/apps') await page.screenshot({ path: join(SHOTS, 'apps-list-phone.png'), fullPage: true });
    }
    // At phone width the test pane is below the form.
    const formBox = (await page.locator('.ap-form').boundingBox())!;
    const paneBox = (await page.locator('.ap-test').boundingBox())!;
    expect(paneBox.y).toBeGreaterThan(formBox.y + formBox.height - 1);
    await page.getByLabel('Temperature').fill('0.3');
    await page.screenshot({ path: join(SHOTS, 'apps-settings-phone.png'), fullPage: true });
    await phone.close();

    const dark = await suite.browser.newPage({ colorScheme: 'dark', locale: 'en-US', viewport: { width: 1280, height: 900 } });
    dark.on('pageerror', (e) => errors.push(e.message));
    await signIn(dark, suite.k.url);
    await dark.goto(`${suite.k.url}/apps/${encodeURIComponent(appId)}`);
    await dark.getByRole('heading', { level: 1, name: APP_NAME }).waitFor();
    const background = await dark.evaluate(() => getComputedStyle(document.querySelector('.ap-section')!).backgroundColor);
    expect(background).toBe('rgb(33, 33, 37)'); // --card in dark mode
    await dark.screenshot({ path: join(SHOTS, 'apps-settings-dark.png'), fullPage: true });
    // In Chinese: every heading and label of the form is translated.
    await dark.getByRole('button', { name: '中文' }).click();
    await dark.getByRole('heading', { name: '模型与提示词' }).waitFor();
    const headings = await dark.locator('.ap-section h2, .ap-test-pane h2').allTextContents();
    expect(headings).toEqual(['模型与提示词', '知识库与检索', '工具', '引用', '问题分类', '内容提取', '测试对话']);
    await dark.screenshot({ path: join(SHOTS, 'apps-settings-zh-dark.png'), fullPage: false });
    await dark.getByRole('button', { name: 'English' }).click();
    await dark.goto(`${suite.k.url}/apps`);
    await dark.getByRole('row').filter({ hasText: APP_NAME }).waitFor();
    await dark.screenshot({ path: join(SHOTS, 'apps-list-dark.png'), fullPage: true });
    await dark.close();

    // Under a page translator: sections appear and go, rows are added and removed, the save message changes.
    const translated = await suite.browser.newPage({ locale: 'en-US', viewport: { width: 1280, height: 900 } });
    translated.on('pageerror', (e) => errors.push(e.message));
    await signIn(translated, suite.k.url);
    await translateLikeChrome(translated);
    await translated.goto(`${suite.k.url}/apps/${encodeURIComponent(appId)}`);
    await expect.poll(() => translated.locator('font[data-translated]').count()).toBeGreaterThan(20);
    const m = TRANSLATED_MARK;
    await translated.getByRole('checkbox', { name: `${m}Extract values from each question first` }).uncheck();
    await translated.getByRole('button', { name: `${m}Add a category` }).click();
    await translated.getByRole('button', { name: `${m}Remove category 3` }).click();
    await translated.getByRole('button', { name: `${m}Remove category 2` }).click();
    await translated.getByRole('button', { name: `${m}Save`, exact: true }).click();
    await expect.poll(() => translated.getByRole('alert').textContent()).toContain('classify.categories');
    await translated.getByRole('checkbox', { name: `${m}Classify each question first` }).uncheck();
    await translated.getByRole('button', { name: `${m}Save`, exact: true }).click();
    await translated.locator('.ap-savebar').getByText(`${m}Saved`).waitFor();
    const stored = await detail(translated, suite.k.url, appId);
    expect(stored.classify).toBeNull();
    expect(stored.extract).toBeNull();
    expect(await translated.locator('h1').textContent()).toContain(APP_NAME);
    await translated.close();
    expect(errors).toEqual([]);
  });

  it('chats in the test pane with the saved settings, and says so while there are unsaved changes', async () => {
    const page = await suite.browser.newPage({ locale: 'en-US', viewport: { width: 1280, height: 900 } });
    const errors: string[] = [];
    page.on('pageerror', (e) => errors.push(e.message));
    suite.onFail = page;
    await signIn(page, suite.k.url);
    // The knowledge base's text is indexed before the question is asked.
    await expect
      .poll(
        async () =>
          (await post<{ list: unknown[] }>(page, suite.k.url, '/api/core/dataset/searchTest', { datasetId, text: 'returned within 45 days' })).list.length,
        { timeout: 30_000 },
      )
      .toBeGreaterThan(0);
    await page.goto(`${suite.k.url}/apps/${encodeURIComponent(appId)}`);
    await page.getByRole('heading', { level: 1, name: APP_NAME }).waitFor();
    const pane = page.getByRole('complementary', { name: 'Test chat' });
    const message = pane.getByRole('textbox', { name: 'Message' });
    await message.fill('How many days do I have to return an order from the Lantern Street shop?');
    await message.press('Enter');
    const answer = pane.getByTestId('answer').last();
    await expect.poll(() => answer.textContent(), { timeout: 30_000 }).toContain('45 days');
    expect(await pane.getByRole('alert').count()).toBe(0);

    // An unsaved change: the pane says it tests what is saved, until it is saved.
    await page.getByLabel('Search mode').selectOption('fullTextRecall');
    await pane.getByText(SAVED_NOTICE).waitFor();
    await page.screenshot({ path: join(SHOTS, 'apps-settings-test-pane.png'), fullPage: false });
    await page.getByRole('button', { name: 'Save', exact: true }).click();
    await saveBar(page).getByText('Saved', { exact: true }).waitFor();
    expect(await pane.getByText(SAVED_NOTICE).count()).toBe(0);
    expect((await detail(page, suite.k.url, appId)).search.searchMode).toBe('fullTextRecall');
    expect(errors).toEqual([]);
    await page.close();
  }, 60_000);

  it('shows the warning of a save that works, but not as asked, and the 400 of datasets that cannot be searched together', async () => {
    const page = await suite.browser.newPage({ locale: 'en-US', viewport: { width: 1280, height: 900 } });
    const errors: string[] = [];
    page.on('pageerror', (e) => errors.push(e.message));
    suite.onFail = page;
    await signIn(page, suite.k.url);
    // A knowledge base made without a vector model: chat can search it by full text only.
    const plain = await post<string>(page, suite.k.url, '/api/core/dataset/create', { name: 'No vectors', vectorModel: '' });
    await page.goto(`${suite.k.url}/apps/${encodeURIComponent(appId)}`);
    await page.getByRole('heading', { level: 1, name: APP_NAME }).waitFor();
    await page.getByLabel('Search mode').selectOption('mixedRecall');
    await page.getByRole('checkbox', { name: 'No vectors' }).check();
    await page.getByRole('button', { name: 'Save', exact: true }).click();
    const alert = page.getByRole('alert');
    await expect.poll(() => alert.textContent()).toContain("Invalid 'datasets': these datasets use different vector models");
    expect(await page.getByRole('checkbox', { name: 'No vectors' }).isChecked()).toBe(true);

    await page.getByRole('checkbox', { name: DATASET_NAME }).uncheck();
    await page.getByRole('button', { name: 'Save', exact: true }).click();
    await saveBar(page).getByText('Saved', { exact: true }).waitFor();
    const warning = saveBar(page).locator('.ap-warning');
    expect(await warning.textContent()).toContain(
      'datasets: they were made without a vector model, so chat searches them by full text only (search.searchMode is mixedRecall)',
    );
    expect(await alert.count()).toBe(0);
    expect((await detail(page, suite.k.url, appId)).datasets).toEqual([plain]);
    await page.screenshot({ path: join(SHOTS, 'apps-settings-warning.png'), fullPage: false });
    expect(errors).toEqual([]);
    await page.close();
  });
});
