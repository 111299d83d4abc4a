// Uploads in Chromium against the real `kbchat start`: the same file dropped
// twice is imported once (the second says "already imported" and links to the
// collection), and an upload a reload interrupted is listed and, once the
// user picks the file again, continues from the bytes the platform has.
// Screenshots go to test-output/web/uploads-*.png.
import { createHash } from 'node:crypto';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { noBrowser, openPage } from './browser.js';
import { browserSuite, SHOTS, signIn } from './kbchat-start.js';

const NOTE = '# Harbour\n\nThe harbour crane lifts 42 tonnes and was built in 1964.\n';
const DEPOT = Buffer.from(`# Depot\n\n${Array.from({ length: 400 }, (_, i) => `Shelf ${i + 1} holds ${(i + 1) * 3} crates of copper wire.`).join('\n\n')}\n`);

if (noBrowser) console.warn(`[skip] uploads browser tests: ${noBrowser}`);

async function drop(page: Page, name: string, text: string) {
  await page.getByTestId('drop-zone').waitFor();
  await page.evaluate(
    ([n, t]) => {
      const dt = new DataTransfer();
      dt.items.add(new File([t!], n!, { type: 'text/markdown' }));
      const zone = document.querySelector('[data-testid="drop-zone"]')!;
      zone.dispatchEvent(new DragEvent('drop', { dataTransfer: dt, bubbles: true, cancelable: true }));
    },
    [name, text],
  );
}

async function csrf(page: Page): Promise<string> {
  return (await (await page.request.get(`${new URL(page.url()).origin}/api/auth/me`)).json()).data.csrfToken;
}

describe.skipIf(Boolean(noBrowser))('uploads in Chromium', () => {
  const suite = browserSuite('uploads');

  it('imports a file dropped twice once, says the second is already imported and links to it', async () => {
    const { page, errors, context } = await openPage(suite.browser, { locale: 'en-US', viewport: { width: 1280, height: 900 } });
    await signIn(page, suite.k.url);
    const created = await page.request.post(`${suite.k.url}/api/core/dataset/create`, {
      data: { name: 'Harbour notes' },
      headers: { 'x-csrf-token': await csrf(page) },
    });
    const datasetId = (await created.json()).data;
    await page.goto(`${suite.k.url}/datasets/${datasetId}/import`);
    const rows = page.getByRole('list', { name: 'Files being imported' }).getByRole('listitem', { name: 'harbour.md' });

    await drop(page, 'harbour.md', NOTE);
    await expect.poll(() => rows.first().textContent(), { timeout: 30_000 }).toMatch(/Indexed.*1 of 1 chunk indexed/);
    await drop(page, 'harbour.md', NOTE);
    await expect.poll(() => rows.nth(1).textContent(), { timeout: 10_000 }).toContain('Already imported as harbour.md');
    expect(await rows.nth(1).getByRole('button', { name: 'Import a second copy' }).count()).toBe(1);
    await page.screenshot({ path: join(SHOTS, 'uploads-already-imported.png'), fullPage: true });
    const collections = await page.request.post(`${suite.k.url}/api/core/dataset/collection/listV2`, {
      data: { datasetId },
      headers: { 'x-csrf-token': await csrf(page) },
    });
    expect((await collections.json()).data.total).toBe(1);

    // The link opens the collection the first drop made.
    await rows.nth(1).getByRole('link', { name: 'harbour.md' }).click();
    await page.getByRole('heading', { name: 'Chunks of “harbour.md”' }).waitFor();
    expect(errors).toEqual([]);
    await context.close();
  }, 90_000);

  it("lists an upload a reload interrupted, and resumes it from the platform's bytes when the file is picked again", async () => {
    const { page, errors, context } = await openPage(suite.browser, { locale: 'en-US', viewport: { width: 1280, height: 900 } });
    await signIn(page, suite.k.url);
    const token = await csrf(page);
    const datasetId = (
      await (await page.request.post(`${suite.k.url}/api/core/dataset/create`, { data: { name: 'Depot' }, headers: { 'x-csrf-token': token } })).json()
    ).data;
    // What a tab closed mid-upload leaves: a tus upload of the file with half its bytes.
    const meta = Object.entries({ datasetId, filename: 'depot.md', filetype: 'text/markdown', sha256: createHash('sha256').update(DEPOT).digest('hex') })
      .map(([k, v]) => `${k} ${Buffer.from(v).toString('base64')}`)
      .join(',');
    const tusHeaders = { 'x-csrf-token': token, 'tus-resumable': '1.0.0' };
    const made = await page.request.post(`${suite.k.url}/api/core/dataset/collection/upload/tus`, {
      headers: { ...tusHeaders, 'upload-length': String(DEPOT.length), 'upload-metadata': meta },
    });
    expect(made.status()).toBe(201);
    const half = Math.floor(DEPOT.length / 2);
    const sent = await page.request.fetch(`${suite.k.url}${made.headers().location}`, {
      method: 'PATCH',
      headers: { ...tusHeaders, 'upload-offset': '0', 'content-type': 'application/offset+octet-stream' },
      data: DEPOT.subarray(0, half),
    });
    expect(sent.status()).toBe(204);

    await page.goto(`${suite.k.url}/datasets/${datasetId}/import`);
    const interrupted = page.getByRole('list', { name: 'Interrupted uploads' }).getByRole('listitem', { name: 'depot.md' });
    await expect.poll(() => interrupted.textContent()).toMatch(/depot\.md · [\d.]+ KB of [\d.]+ KB uploaded/);
    await page.getByText('Browsers cannot reopen a file: drop or choose it again to resume.').waitFor();
    await page.screenshot({ path: join(SHOTS, 'uploads-interrupted.png'), fullPage: true });

    // Picked again: only the rest is sent (held a moment to be seen), then indexed.
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    let patchedFrom: string | undefined;
    await page.route('**/collection/upload/tus/*', async (route) => {
      if (route.request().method() === 'PATCH') {
        patchedFrom = route.request().headers()['upload-offset'];
        await held;
      }
      await route.continue();
    });
    await page.locator('input[type=file]').setInputFiles({ name: 'depot.md', mimeType: 'text/markdown', buffer: DEPOT });
    const row = page.getByRole('list', { name: 'Files being imported' }).getByRole('listitem', { name: 'depot.md' });
    await expect.poll(() => row.textContent()).toMatch(/resumed from [\d.]+ KB/);
    // The row can say so before the page's PATCH goes out (it knows the offset from the HEAD): wait for the PATCH.
    await expect.poll(() => patchedFrom).toBeDefined();
    expect(Number(patchedFrom)).toBe(half);
    expect(await page.getByRole('list', { name: 'Interrupted uploads' }).count()).toBe(0);
    await page.screenshot({ path: join(SHOTS, 'uploads-resumed.png'), fullPage: true });
    release();
    await expect.poll(() => row.textContent(), { timeout: 60_000 }).toMatch(/Indexed/);
    const list = (
      await (await page.request.post(`${suite.k.url}/api/core/dataset/collection/listV2`, { data: { datasetId }, headers: { 'x-csrf-token': token } })).json()
    ).data;
    expect(list.total).toBe(1);
    const data = (
      await (
        await page.request.post(`${suite.k.url}/api/core/dataset/data/v2/list`, {
          data: { collectionId: list.list[0]._id, pageSize: 500 },
          headers: { 'x-csrf-token': token },
        })
      ).json()
    ).data;
    const text = data.list.map((d: { q: string }) => d.q).join('\n');
    expect(text).toContain('Shelf 1 holds 3 crates');
    expect(text).toContain('Shelf 400 holds 1200 crates');
    expect(errors).toEqual([]);
    await context.close();
  }, 120_000);
});
