// The console's price groups in Chromium against the real `kbchat gateway`:
// root adds a group `half` at ratio 0.5 on the Groups page, moves a user to
// it on the Users page, gives a token of a `default` user its own group on
// the Tokens page, and has a channel serve `half` only on the Channels page;
// the relay then charges those tokens exactly half of what the same request
// costs in `default`, and /v1/models lists the channel's models only to them.
// Deleting the group in use is refused in the gateway's words. Each step is
// checked against the admin API. Screenshots: console-groups-*.png.
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { noBrowser, openPage, sideScroll } from './browser.js';
import { consoleSuite, signInToConsole } from './console-suite.js';
import { SHOTS } from './kbchat-start.js';

if (noBrowser) console.warn(`[skip] console groups browser tests: ${noBrowser}`);

const CHANNEL = 'openai (from environment)';

describe.skipIf(Boolean(noBrowser))('the console: groups', () => {
  const suite = consoleSuite('console-groups');

  it('root adds a group at half price and puts a user, a token and a channel in it; the relay charges exactly half', async () => {
    // 2 units per 1M input tokens and 4 per 1M output: every cost a whole number of micro-units, and even.
    await suite.api('/api/prices/sim-chat', { method: 'PUT', json: { input_price: 2, output_price: 4 } });
    const carol = await suite.api('/api/users', { json: { username: 'carol', password: 'carol-password', balance: 5 } });
    const dave = await suite.api('/api/users', { json: { username: 'dave', password: 'dave-password', balance: 5 } });
    const carolFull = await suite.api('/api/tokens', { json: { user_id: carol.id, name: 'carol-full' } });
    const daveToken = await suite.api('/api/tokens', { json: { user_id: dave.id, name: 'dave-token' } });

    const admin = await openPage(suite.browser, { locale: 'en-US', viewport: { width: 1280, height: 900 } });
    suite.onFail = admin.page;
    const { page } = admin;
    await signInToConsole(page, suite.url);
    const nav = page.getByRole('navigation', { name: 'main' });
    await nav.getByRole('link', { name: 'Groups' }).click();
    await page.getByRole('heading', { name: 'Groups' }).waitFor();
    const rowOf = (name: string) => page.getByRole('row').filter({ has: page.getByText(name, { exact: true }) });
    await expect.poll(() => rowOf('default').getByTestId('ratio').textContent(), { timeout: 10_000 }).toBe('1');

    // Add `half`; a ratio out of range is refused before anything is sent.
    await page.getByRole('button', { name: 'Add a group' }).click();
    const form = page.getByRole('form', { name: 'A new group' });
    await form.getByLabel(/^Name/).fill('half');
    await form.getByLabel(/^Price ratio/).fill('1001');
    await form.getByRole('button', { name: 'Save' }).click();
    await expect.poll(() => form.getByRole('alert').textContent(), { timeout: 10_000 }).toBe('Enter a ratio from 0 to 1000.');
    await form.getByLabel(/^Price ratio/).fill('0.5');
    await form.getByLabel(/^Description/).fill('Half price, for partners');
    await form.getByRole('button', { name: 'Save' }).click();
    await expect.poll(() => page.getByRole('status').textContent(), { timeout: 10_000 }).toBe('Saved: callers in half are now charged 0.5 × the price.');
    await expect.poll(() => rowOf('half').getByTestId('ratio').textContent(), { timeout: 10_000 }).toBe('0.5');
    expect(await suite.api('/api/groups/half')).toMatchObject({ name: 'half', ratio: 0.5, description: 'Half price, for partners' });

    // Users: dave moves to `half`.
    await nav.getByRole('link', { name: 'Users' }).click();
    const daveRow = page.getByRole('row').filter({ hasText: 'dave' });
    await daveRow.getByRole('button', { name: 'Change the group of dave' }).click();
    const groupForm = page.getByRole('form', { name: 'Group of dave' });
    await expect.poll(() => groupForm.getByRole('option').allTextContents(), { timeout: 10_000 }).toEqual(['default', 'half']);
    await groupForm.getByLabel(/^Group/).selectOption('half');
    await groupForm.getByRole('button', { name: 'Save' }).click();
    await expect.poll(() => page.getByRole('status').textContent(), { timeout: 10_000 }).toBe('Saved: dave is now in the group half.');
    await expect.poll(() => daveRow.getByTestId('group').textContent(), { timeout: 10_000 }).toBe('half');
    expect((await suite.api(`/api/users/${dave.id}`)).group).toBe('half');

    // Tokens: a token of carol's (a `default` user) with `half` as its own group.
    await nav.getByRole('link', { name: 'Tokens' }).click();
    await page.getByRole('button', { name: 'New token' }).click();
    const tokenForm = page.getByRole('form', { name: 'New token' });
    await tokenForm.getByLabel(/^Name/).fill('carol-half');
    await tokenForm.getByLabel(/^Owner/).selectOption({ label: 'carol' });
    await expect
      .poll(
        () =>
          tokenForm
            .getByLabel(/^Group/)
            .getByRole('option')
            .allTextContents(),
        { timeout: 10_000 },
      )
      .toEqual(['The owner’s group', 'default', 'half']);
    await tokenForm.getByLabel(/^Group/).selectOption('half');
    await tokenForm.getByRole('button', { name: 'Create token' }).click();
    const secret = page.getByTestId('new-key');
    await secret.waitFor({ timeout: 10_000 });
    const carolHalfKey = (await secret.textContent())!.trim();
    expect(carolHalfKey).toMatch(/^sk-/);
    const tokens = (await suite.api(`/api/tokens?user_id=${carol.id}`)).data as Array<{ name: string; group: string | null }>;
    expect(tokens.map((k) => [k.name, k.group]).sort()).toEqual([
      ['carol-full', null],
      ['carol-half', 'half'],
    ]);
    await page.getByRole('row').filter({ hasText: 'carol-half' }).getByTestId('token-group').waitFor();

    // The relay: the same request costs exactly half for a `half` token and a `half` user's.
    const ask = async (key: string) => {
      const r = await fetch(`${suite.url}/v1/chat/completions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'sim-chat', messages: [{ role: 'user', content: 'How much does this cost?' }] }),
      });
      expect(r.status).toBe(200);
      const id = r.headers.get('x-request-id')!;
      let cost: number | undefined;
      // The log is written in batches: asked again until the row is there.
      await expect
        .poll(
          async () => {
            cost = await suite.api<{ cost_micros: number }>(`/api/logs/${id}`).then(
              (row) => row.cost_micros,
              () => undefined,
            );
            return cost;
          },
          { timeout: 10_000 },
        )
        .toBeGreaterThan(0);
      return cost!;
    };
    const full = await ask(carolFull.key);
    expect(full % 2).toBe(0);
    expect(await ask(carolHalfKey)).toBe(full / 2);
    expect(await ask(daveToken.key)).toBe(full / 2);

    // Channels: the environment's channel serves `half` only.
    await nav.getByRole('link', { name: 'Channels' }).click();
    await page.getByRole('button', { name: `Edit ${CHANNEL}` }).click();
    const channelForm = page.getByRole('form', { name: `Edit channel ${CHANNEL}` });
    await channelForm.getByRole('checkbox', { name: 'half' }).check();
    await channelForm.getByRole('button', { name: 'Save' }).click();
    await expect
      .poll(async () => ((await suite.api('/api/channels')).data as Array<{ name: string; groups: string[] }>).find((c) => c.name === CHANNEL)?.groups, {
        timeout: 10_000,
      })
      .toEqual(['half']);
    const models = async (key: string) =>
      ((await (await fetch(`${suite.url}/v1/models`, { headers: { authorization: `Bearer ${key}` } })).json()) as { data: { id: string }[] }).data.map(
        (m) => m.id,
      );
    await expect.poll(() => models(carolHalfKey), { timeout: 10_000 }).toContain('sim-chat');
    expect(await models(carolFull.key)).toEqual([]);

    // Groups: what uses `half`, and its deletion refused in the gateway's words.
    await nav.getByRole('link', { name: 'Groups' }).click();
    await expect.poll(() => rowOf('half').getByTestId('used-by').textContent(), { timeout: 10_000 }).toBe('1 user, 1 token, 1 channel');
    await rowOf('half').getByRole('button', { name: 'Delete “half”' }).click();
    await page.getByRole('button', { name: 'Yes, delete' }).click();
    await expect
      .poll(() => rowOf('half').getByRole('alert').textContent(), { timeout: 10_000 })
      .toContain('The group half is in use by 1 user, 1 token and 1 channel: move them to another group first');
    expect((await suite.api('/api/groups/half')).ratio).toBe(0.5);
    await page.screenshot({ path: join(SHOTS, 'console-groups.png'), fullPage: true });
    await page.setViewportSize({ width: 375, height: 780 });
    expect(await sideScroll(page)).toBeLessThanOrEqual(0);
    await page.screenshot({ path: join(SHOTS, 'console-groups-phone.png'), fullPage: true });
    await page.setViewportSize({ width: 1280, height: 900 });
    await page.getByRole('button', { name: '中文' }).click();
    await page.getByRole('heading', { name: '分组' }).waitFor();
    await page.screenshot({ path: join(SHOTS, 'console-groups-zh.png'), fullPage: true });

    expect(admin.errors).toEqual([]);
    await admin.context.close();
  }, 120_000);
});
