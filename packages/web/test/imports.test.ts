// Imports that say what they cost (issue 34), in Chromium against the real
// `kbchat start` (local-embed; IMPORT_CONFIRM_SECONDS=5 so that a file of
// about a thousand chunks counts as large, COLLECTION_BATCH_ROWS=2 so that
// its delete goes in hundreds of steps, long enough to be seen): a large file is estimated and the page asks
// (cancel discards the upload, confirm imports it); its indexing shows the
// time left; a refused file says why in plain words, with no retry, and is
// neither offered for resuming nor left in <data-dir>/uploads; a delete shows
// its progress. Screenshots go to test-output/web/imports-*.png.
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { noBrowser, openPage } from './browser.js';
import { browserSuite, SHOTS, signIn } from './kbchat-start.js';

/** About a thousand local-embed chunks (100 tokens): paragraphs of about 60 tokens, one chunk each. */
const LEDGER = Array.from({ length: 1000 }, (_, i) =>
  `Entry ${i + 1}: the warehouse on pier ${i % 9} received ${(i + 3) * 17} crates of copper wire, ${(i + 5) * 11} drums of oil and ${(i + 7) * 13} bales of cotton from supplier ${i % 23}, checked by inspector ${i % 13} at dawn.`).join('\n\n');

if (noBrowser) console.warn(`[skip] imports browser tests: ${noBrowser}`);

async function drop(page: Page, name: string, text: string, type = 'text/plain') {
  await page.getByTestId('drop-zone').waitFor();
  await page.evaluate(
    ([n, t, ty]) => {
      const dt = new DataTransfer();
      dt.items.add(new File([t!], n!, { type: ty! }));
      document.querySelector('[data-testid="drop-zone"]')!.dispatchEvent(new DragEvent('drop', { dataTransfer: dt, bubbles: true, cancelable: true }));
    },
    [name, text, type],
  );
}

async function csrf(page: Page): Promise<string> {
  return (await (await page.request.get(`${new URL(page.url()).origin}/api/auth/me`)).json()).data.csrfToken;
}

describe.skipIf(Boolean(noBrowser))('imports in Chromium', () => {
  const suite = browserSuite('imports', { IMPORT_CONFIRM_SECONDS: '5', COLLECTION_BATCH_ROWS: '2' });
  const api = async (page: Page, path: string, data?: unknown) => {
    const res = data === undefined ? await page.request.get(`${suite.k.url}${path}`) : await page.request.post(`${suite.k.url}${path}`, { data, headers: { 'x-csrf-token': await csrf(page) } });
    return (await res.json()).data;
  };
  const uploadsOnDisk = () => readdirSync(join(suite.k.dataDir, 'uploads'));

  it('asks before a large file: the chunks and the time at the measured speed; cancel discards it, confirm imports it and shows the time left; its delete shows progress', async () => {
    const { page, errors, context } = await openPage(suite.browser, { locale: 'en-US', viewport: { width: 1280, height: 1000 } });
    suite.onFail = page;
    await signIn(page, suite.k.url);
    const datasetId = await api(page, '/api/core/dataset/create', { name: 'Ledgers' });
    await page.goto(`${suite.k.url}/datasets/${datasetId}/import`);
    const rows = page.getByRole('list', { name: 'Files being imported' }).getByRole('listitem', { name: 'ledger.txt' });

    // Uploaded, then estimated: the page asks, with the count and the speed it timed on the file's own chunks.
    await drop(page, 'ledger.txt', LEDGER);
    const ask = rows.first().getByRole('group', { name: 'Import ledger.txt?' });
    await ask.waitFor({ timeout: 60_000 });
    const asked = (await ask.textContent())!;
    const chunks = Number(/A large file: ([\d,]+) chunks to index\./.exec(asked)?.[1]?.replace(/,/g, ''));
    expect(chunks, asked).toBeGreaterThan(500);
    expect(asked).toMatch(/Indexing them takes (about \d+ min|about \d+ h( \d+ min)?|under a minute), at [\d.]+ chunks a second \(measured just now on a sample of this file\)\./);
    expect(asked).toContain('Import it and index it?');
    await page.screenshot({ path: join(SHOTS, 'imports-asks.png'), fullPage: true });
    // Nothing is imported while it asks; the bytes wait on the server.
    expect((await api(page, '/api/core/dataset/collection/listV2', { datasetId })).total).toBe(0);
    expect(uploadsOnDisk().length).toBeGreaterThan(0);

    // Don't import: the upload goes, bytes and all, and nothing is left to resume.
    await ask.getByRole('button', { name: 'Don’t import ledger.txt' }).click();
    await expect.poll(() => rows.first().textContent()).toContain('Not imported; the uploaded file was discarded.');
    expect(await api(page, `/api/core/dataset/collection/upload/list?datasetId=${datasetId}`)).toEqual([]);
    expect(uploadsOnDisk()).toEqual([]);
    expect((await api(page, '/api/core/dataset/collection/listV2', { datasetId })).total).toBe(0);

    // Dropped again and confirmed: imported, indexing with the time left beside its progress.
    await drop(page, 'ledger.txt', LEDGER);
    const again = rows.nth(1).getByRole('group', { name: 'Import ledger.txt?' });
    await again.waitFor({ timeout: 60_000 });
    // The second estimate reads the speed the first one measured.
    expect(await again.textContent()).toMatch(/chunks a second \((as measured on this server|measured just now on a sample of this file)\)/);
    await again.getByRole('button', { name: 'Import and index ledger.txt' }).click();
    await expect.poll(() => rows.nth(1).textContent(), { timeout: 60_000 }).toMatch(/Queued|Indexing/);
    await expect.poll(() => rows.nth(1).textContent(), { timeout: 30_000 }).toMatch(new RegExp(`\\d+ of ${chunks} chunks indexed.*(about \\d+ min|about \\d+ h( \\d+ min)?|under a minute) left`));
    await page.screenshot({ path: join(SHOTS, 'imports-time-left.png'), fullPage: true });
    const detail = await api(page, `/api/core/dataset/trainingDetail?datasetId=${datasetId}`);
    expect(detail.timeLeftSeconds).toBeGreaterThan(0);
    // The count it asked about is what the import made.
    expect(detail.total).toBe(chunks);

    // Deleted from the collections page: the row shows how far the delete got until it is gone.
    await page.getByRole('link', { name: 'Collections' }).click();
    const row = page.getByRole('row').filter({ hasText: 'ledger.txt' });
    await expect.poll(() => row.textContent(), { timeout: 30_000 }).toMatch(/(about .*|under a minute) left/);
    await row.getByRole('button', { name: 'Delete “ledger.txt”' }).click();
    await row.getByRole('group', { name: 'Delete “ledger.txt”' }).getByRole('button', { name: /^(Delete|Yes)/ }).click();
    const states: string[] = [];
    for (let i = 0; i < 400; i++) {
      const text = (await row.textContent({ timeout: 1000 }).catch(() => null)) ?? 'gone';
      if (states.at(-1) !== text) states.push(text);
      if (/Deleting: [1-9][\d,]* of [\d,]+ chunks removed/.test(text) && !states.some((s) => s.startsWith('shot'))) {
        await page.screenshot({ path: join(SHOTS, 'imports-deleting.png'), fullPage: true });
        states.push('shot');
      }
      if (text === 'gone') break;
      await page.waitForTimeout(50);
    }
    expect(states.some((s) => new RegExp(`Deleting: [1-9][\\d,]* of ${chunks} chunks removed`).test(s)), states.join('\n')).toBe(true);
    expect(states.at(-1)).toBe('gone');
    expect((await api(page, '/api/core/dataset/collection/listV2', { datasetId })).total).toBe(0);
    expect(errors).toEqual([]);
    await context.close();
  }, 240_000);

  it('says in plain words why a file was refused, offers no retry, and keeps nothing to resume (nothing left in <data-dir>/uploads)', async () => {
    const { page, errors, context } = await openPage(suite.browser, { locale: 'en-US', viewport: { width: 1280, height: 900 } });
    suite.onFail = page;
    await signIn(page, suite.k.url);
    const datasetId = await api(page, '/api/core/dataset/create', { name: 'Refusals' });
    const onDiskBefore = uploadsOnDisk();
    await page.goto(`${suite.k.url}/datasets/${datasetId}/import`);
    const list = page.getByRole('list', { name: 'Files being imported' });

    // Every byte uploaded, then refused for having no text.
    await drop(page, 'blank.txt', '  \n\n   \n\t\n');
    const blank = list.getByRole('listitem', { name: 'blank.txt' });
    await expect.poll(() => blank.textContent(), { timeout: 30_000 }).toContain('There is no text in this file to import');
    // A type no reader takes: refused before any byte is sent.
    await drop(page, 'sheet.xlsx', 'PK not really a spreadsheet', 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet');
    const sheet = list.getByRole('listitem', { name: 'sheet.xlsx' });
    await expect.poll(() => sheet.textContent(), { timeout: 30_000 }).toContain('.xlsx files cannot be imported. Use txt, md, html, pdf, docx or csv');
    for (const refused of [blank, sheet]) {
      expect(await refused.textContent()).toContain('Not imported');
      expect(await refused.textContent()).not.toContain("Invalid '");
      expect(await refused.getByRole('button', { name: /Retry/ }).count()).toBe(0);
    }
    await page.screenshot({ path: join(SHOTS, 'imports-refused.png'), fullPage: true });

    // Not kept: a reload offers nothing to resume, and the server holds no bytes of either.
    expect(await api(page, `/api/core/dataset/collection/upload/list?datasetId=${datasetId}`)).toEqual([]);
    expect(uploadsOnDisk()).toEqual(onDiskBefore);
    await page.reload();
    await page.getByTestId('drop-zone').waitFor();
    await page.waitForTimeout(500);
    expect(await page.getByRole('heading', { name: 'Interrupted uploads' }).count()).toBe(0);
    expect(errors).toEqual([]);
    await context.close();
  }, 120_000);
});
