// Tools in Chromium, against a real platform on a real gateway in front of
// the upstream simulator, with a real MCP server (the SDK's, from the
// platform's tool tests, insisting on its Bearer token): the server added on
// the Tools page with its Authorization header (shown after only as a hint),
// its tools listed with their input schema folded; `forecast` picked in an
// application's settings and saved; the app, on the simulator's tool-calling
// model, asked "weather in Paris" in the chat answers with the tool's result,
// and the call shows in the Steps. Phone width in dark mode, and Chinese.
// Screenshots: test-output/web/tools-*.png.
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { PublicApp } from '@kbchat/platform';
import { MCP_TOKEN, startMcpServer } from '../../platform/test/tool-servers.js';
import { noBrowser, openPage, sideScroll } from './browser.js';
import { asPage } from './chat-fixtures.js';
import { SHOTS } from './kbchat-start.js';
import { signInRoot, simPlatformSuite } from './sim-platform.js';

const shot = (page: Page, name: string) => page.screenshot({ path: join(SHOTS, `tools-${name}.png`), fullPage: true });

if (noBrowser) console.warn(`[skip] tools browser tests: ${noBrowser}`);

describe.skipIf(Boolean(noBrowser))('tools in Chromium', () => {
  let mcp: Awaited<ReturnType<typeof startMcpServer>>;
  beforeAll(async () => {
    mcp = await startMcpServer();
  });
  afterAll(async () => {
    await mcp?.close();
  });
  // The MCP server is on loopback: the platform must be allowed to reach it (TOOL_ALLOW_PRIVATE).
  const suite = simPlatformSuite({
    simModels: 'sim-tools',
    config: { llmModels: [{ model: 'sim-tools', toolChoice: true }], vectorModels: [] },
    platform: { toolAllowPrivate: true },
  });

  it('adds an MCP server on the Tools page, picks its tool for an application, and the chat answers with it', async () => {
    const { context, page, errors } = await openPage(suite.browser, { locale: 'en-US', viewport: { width: 1280, height: 900 } });
    await signInRoot(page, suite.p.url);
    const call = await asPage(page, suite.p.url);
    const appId = await call<string>('/api/core/app/create', { name: 'Weather desk', model: 'sim-tools' });

    await page.getByRole('navigation', { name: 'main' }).getByRole('link', { name: 'Tools' }).click();
    await page.getByRole('heading', { level: 1, name: 'Tools' }).waitFor();
    await page.getByText('No tool sources yet').waitFor();
    const form = page.getByRole('form', { name: 'Add a tool source' });
    await form.getByLabel('Name').fill('Weather');
    await form.getByLabel('Server address').fill(`${mcp.url}/mcp`);
    await form.getByRole('button', { name: 'Add a header' }).click();
    const header = form.getByRole('group', { name: 'Header 1' });
    await header.getByLabel('Header name').fill('Authorization');
    await header.getByLabel('Header value').fill(`Bearer ${MCP_TOKEN}`);
    await shot(page, 'add');
    await form.getByRole('button', { name: 'Add source' }).click();

    // The new source's page: its tools, each schema folded until opened.
    await page.getByRole('heading', { level: 1, name: 'Weather' }).waitFor();
    const forecast = page.getByRole('listitem').filter({ has: page.getByRole('heading', { level: 3, name: 'forecast' }) });
    await forecast.getByText("Tomorrow's weather in a city").waitFor();
    for (const name of ['broken', 'hang']) await page.getByRole('heading', { level: 3, name }).waitFor();
    expect(await forecast.locator('pre').isVisible()).toBe(false);
    await forecast.getByText('Input schema').click();
    expect(await forecast.locator('pre').textContent()).toContain('"city"');
    expect(await page.getByText('Authorization: Bearer …wxyz').count()).toBe(1);
    expect(await page.getByText('Streamable HTTP').count()).toBe(1);
    expect(await page.content()).not.toContain(MCP_TOKEN);
    await shot(page, 'source');

    // The list: the source with its hint and its three tools; Refresh lists them again.
    await page.getByRole('link', { name: 'Tools', exact: true }).first().click();
    const card = page.getByRole('listitem').filter({ has: page.getByRole('link', { name: 'Weather' }) });
    await card.getByText('3 tools').waitFor();
    expect(await card.textContent()).toContain(`${mcp.url}/mcp`);
    await card.getByRole('button', { name: 'Refresh the tools of Weather' }).click();
    expect(await card.getByRole('status').textContent()).toBe('Refreshed: 3 tools.');
    await shot(page, 'list');

    // The application's settings: forecast picked under its source, saved.
    await page.goto(`${suite.p.url}/apps/${appId}`);
    const tools = page.getByRole('region', { name: 'Tools' });
    const group = tools.getByRole('group', { name: 'Weather' });
    await group.getByRole('checkbox', { name: 'forecast' }).check();
    await tools.getByText('1 of 20 picked').waitFor();
    await tools.getByLabel('Rounds of tool calls').fill('3');
    await tools.screenshot({ path: join(SHOTS, 'tools-app-section.png') });
    await page.getByRole('button', { name: 'Save', exact: true }).click();
    await page.locator('.ap-savebar').getByText('Saved', { exact: true }).waitFor();
    const stored = await call<PublicApp>(`/api/core/app/detail?appId=${appId}`, undefined, 'GET');
    expect(stored.tools.map((t) => t.name)).toEqual(['forecast']);
    expect(stored.toolRounds).toBe(3);

    // The chat: the model calls the tool with "paris" and answers with its result; the Steps show the call.
    await page.goto(`${suite.p.url}/chat?appId=${appId}`);
    await page.getByRole('textbox', { name: 'Message' }).fill('weather in Paris');
    await page.getByRole('button', { name: 'Send' }).click();
    const answer = page.getByTestId('answer').last();
    await expect.poll(async () => (await answer.locator('.bubble').textContent())?.trim()).toBe('Tool result: Sunny in paris, 21 °C');
    await page.getByRole('button', { name: 'Send' }).waitFor();
    await answer.getByRole('button', { name: 'Steps' }).click();
    const steps = answer.locator('.steps');
    await steps.waitFor();
    const stepsText = (await steps.textContent()) ?? '';
    expect(stepsText).toContain('Tool call');
    expect(stepsText).toContain('Weather / forecast');
    expect(stepsText).toContain('{"city":"paris"}');
    expect(stepsText).toContain('Sunny in paris, 21 °C');
    await shot(page, 'chat-steps');
    expect(errors).toEqual([]);
    await context.close();
  });

  it('reads well on a phone in dark mode, and in Chinese', async () => {
    const phone = await openPage(suite.browser, { locale: 'en-US', viewport: { width: 375, height: 800 }, colorScheme: 'dark' });
    await signInRoot(phone.page, suite.p.url);
    await phone.page.goto(`${suite.p.url}/tools`);
    await phone.page.getByRole('link', { name: 'Weather' }).waitFor();
    await phone.page.getByRole('form', { name: 'Add a tool source' }).getByRole('button', { name: 'Add a header' }).click();
    await shot(phone.page, 'phone-dark');
    expect(await sideScroll(phone.page)).toBeLessThanOrEqual(0);
    await phone.page.getByRole('link', { name: 'Weather' }).click();
    await phone.page.getByRole('heading', { level: 3, name: 'forecast' }).waitFor();
    await phone.page.getByText('Input schema').first().click();
    await shot(phone.page, 'phone-dark-source');
    expect(await sideScroll(phone.page)).toBeLessThanOrEqual(0);
    expect(phone.errors).toEqual([]);
    await phone.context.close();

    // Signed in in English (the sign-in helper's labels), then switched as a reader does.
    const zh = await openPage(suite.browser, { locale: 'en-US', viewport: { width: 1280, height: 900 } });
    await signInRoot(zh.page, suite.p.url);
    await zh.page.goto(`${suite.p.url}/tools`);
    await zh.page.getByRole('button', { name: '中文' }).click();
    await zh.page.getByRole('heading', { level: 1, name: '工具' }).waitFor();
    await zh.page.getByRole('form', { name: '添加工具源' }).waitFor();
    await zh.page.getByText('3 个工具').waitFor();
    await shot(zh.page, 'zh');
    const apps = await asPage(zh.page, suite.p.url);
    const list = await apps<{ list: PublicApp[] }>('/api/core/app/list', {});
    await zh.page.goto(`${suite.p.url}/apps/${list.list[0]!.id}`);
    await zh.page.getByRole('region', { name: '工具' }).getByText('已选 1 / 20').waitFor();
    await zh.page.getByRole('region', { name: '工具' }).screenshot({ path: join(SHOTS, 'tools-zh-app-section.png') });
    expect(zh.errors).toEqual([]);
    await zh.context.close();
  });
});
