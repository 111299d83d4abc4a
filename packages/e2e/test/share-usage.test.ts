// A share link past its usage points, in Chromium against a real platform on
// a real gateway in front of the upstream simulator (whose answers cost
// something there): the visitor's first question is answered; once the
// gateway's cost of it is read back, the link has spent its points, the next
// question is refused with a message that says so (and no model is asked),
// and the Share links page marks the link used up.
import { describe, expect, it } from 'vitest';
import { noBrowser, openPage } from './browser.js';
import { asPage } from './chat-fixtures.js';
import { signInRoot, simPlatformSuite } from './sim-platform.js';

const POLL = { timeout: 15_000 };

if (noBrowser) console.warn(`[skip] the share link usage browser test: ${noBrowser}`);

describe.skipIf(Boolean(noBrowser))('a share link past its usage points, in Chromium', () => {
  const suite = simPlatformSuite({ simModels: 'sim-chat', config: { llmModels: [{ model: 'sim-chat' }], vectorModels: [] } });

  it('answers until the link has spent its points, then says so in the page', async () => {
    const { page } = await openPage(suite.browser, { locale: 'en-US', viewport: { width: 1280, height: 900 } });
    await signInRoot(page, suite.p.url);
    const call = await asPage(page, suite.p.url);
    const appId = await call<string>('/api/core/app/create', { name: 'Metered desk', model: 'sim-chat' });
    const shareId = await call<string>('/api/support/outLink/create', { appId, name: 'Metered', limit: { maxUsagePoints: 0.000001 } });
    const used = async () =>
      (await call<{ shareId: string; usedPoints: number }[]>(`/api/support/outLink/list?appId=${appId}`)).find((l) => l.shareId === shareId)!.usedPoints;

    const visitor = await openPage(suite.browser, { locale: 'en-US', viewport: { width: 1280, height: 800 } });
    await visitor.page.goto(`${suite.p.url}/chat/share?shareId=${encodeURIComponent(shareId)}`);
    const message = visitor.page.getByRole('textbox', { name: 'Message' });
    await message.fill('Is the reading room open late?');
    await message.press('Enter');
    await expect.poll(() => visitor.page.getByTestId('answer').last().textContent(), POLL).toMatch(/^Echo: is the reading room/i);
    // The gateway's cost of that answer is read back a moment later: the link has now spent its points.
    await expect.poll(used, POLL).toBeGreaterThan(0);

    await message.fill('And on Sundays?');
    await message.press('Enter');
    await expect.poll(() => visitor.page.getByRole('alert').first().textContent(), POLL).toMatch(/This share link has used its 0\.000001 usage points/);
    await visitor.page.screenshot({ path: '/tmp/share-usage-refused.png' });

    await page.goto(`${suite.p.url}/apps/${appId}/share`);
    const row = page.getByRole('row').filter({ hasText: 'Metered' });
    await expect.poll(() => row.textContent(), POLL).toMatch(/used up/);
  });
});
