// Imports that say what they cost (issue 34), in Chromium against the real
// `kbchat start` (local-embed; IMPORT_CONFIRM_SECONDS=5 so that a file of
// about a thousand chunks counts as large, COLLECTION_BATCH_ROWS=1 so that
// its delete goes in hundreds of steps, long enough to be seen): a large file is estimated and the page asks
// (cancel discards the upload, confirm imports it), and asks the same after a
// reload, the upload coming back by itself; the speed says what measured it
// and when; its indexing shows the time left; a refused file says why in
// plain words, with no retry, and is neither offered for resuming nor left in
// <data-dir>/uploads, while a file cut short is; a delete shows its progress
// alone, and the dataset's header does not count the chunks that go as
// waiting. Counts are written as English writes them ("1,003").
// Screenshots go to test-output/web/imports-*.png.
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { noBrowser, openPage } from './browser.js';
import { browserSuite, SHOTS, signIn } from './kbchat-start.js';

/** Over a thousand local-embed chunks (100 tokens; a count with a thousands separator): paragraphs of about 60 tokens, one chunk each. */
const LEDGER = Array.from(
  { length: 1100 },
  (_, i) =>
    `Entry ${i + 1}: the warehouse on pier ${i % 9} received ${(i + 3) * 17} crates of copper wire, ${(i + 5) * 11} drums of oil and ${(i + 7) * 13} bales of cotton from supplier ${i % 23}, checked by inspector ${i % 13} at dawn.`,
).join('\n\n');

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
  const suite = browserSuite('imports', { IMPORT_CONFIRM_SECONDS: '5', COLLECTION_BATCH_ROWS: '1' });
  const api = async (page: Page, path: string, data?: unknown) => {
    const res =
      data === undefined
        ? await page.request.get(`${suite.k.url}${path}`)
        : await page.request.post(`${suite.k.url}${path}`, { data, headers: { 'x-csrf-token': await csrf(page) } });
    return (await res.json()).data;
  };
  const uploadsOnDisk = () => readdirSync(join(suite.k.dataDir, 'uploads'));

  it('asks before a large file, and again after a reload: the chunks and the time at a speed it says the origin and age of; cancel discards it, confirm imports it and shows the time left; its delete shows progress alone, the header not counting what goes', async () => {
    const { page, errors, context } = await openPage(suite.browser, { locale: 'en-US', viewport: { width: 1280, height: 1000 } });
    suite.onFail = page;
    await signIn(page, suite.k.url);
    const datasetId = await api(page, '/api/core/dataset/create', { name: 'Ledgers' });
    await page.goto(`${suite.k.url}/datasets/${datasetId}/import`);
    const rows = page.getByRole('list', { name: 'Files being imported' }).getByRole('listitem', { name: 'ledger.txt' });
    const interrupted = page.getByRole('heading', { name: 'Interrupted uploads' });

    // Uploaded, then estimated: the page asks, with the count (as English writes it) and the speed it timed on the file's own chunks just now.
    await drop(page, 'ledger.txt', LEDGER);
    const ask = rows.first().getByRole('group', { name: 'Import ledger.txt?' });
    await ask.waitFor({ timeout: 60_000 });
    const asked = (await ask.textContent())!;
    const shown = /A large file: ([\d,]+) chunks to index\./.exec(asked)?.[1];
    const chunks = Number(shown?.replace(/,/g, ''));
    expect(chunks, asked).toBeGreaterThan(500);
    expect(shown).toBe(chunks.toLocaleString('en-US'));
    expect(asked).toMatch(
      /Indexing them takes (about \d+ min|about \d+ h( \d+ min)?|under a minute), at [\d.]+ chunks a second \(measured just now on a sample of this file\)\./,
    );
    expect(asked).toContain('Import it and index it?');
    await page.screenshot({ path: join(SHOTS, 'imports-asks.png'), fullPage: true });
    // Nothing is imported while it asks; the bytes wait on the server.
    expect((await api(page, '/api/core/dataset/collection/listV2', { datasetId })).total).toBe(0);
    expect(uploadsOnDisk().length).toBeGreaterThan(0);

    // Reloaded while it asks: the same file back with the same question, nothing to drop again, nothing offered for resuming.
    await page.reload();
    const askedAgain = rows.first().getByRole('group', { name: 'Import ledger.txt?' });
    await askedAgain.waitFor({ timeout: 30_000 });
    expect(await askedAgain.textContent()).toBe(asked);
    expect(await rows.count()).toBe(1);
    expect(await interrupted.count()).toBe(0);
    await page.screenshot({ path: join(SHOTS, 'imports-asks-after-reload.png'), fullPage: true });

    // Don't import, from there: the upload goes, bytes and all, and nothing is left to resume.
    await askedAgain.getByRole('button', { name: 'Don’t import ledger.txt' }).click();
    await expect.poll(() => rows.first().textContent()).toContain('Not imported; the uploaded file was discarded.');
    expect(await api(page, `/api/core/dataset/collection/upload/list?datasetId=${datasetId}`)).toEqual([]);
    expect(uploadsOnDisk()).toEqual([]);
    expect((await api(page, '/api/core/dataset/collection/listV2', { datasetId })).total).toBe(0);

    // Dropped again: the second estimate reads the speed the first one measured, and says so (not "this file").
    await drop(page, 'ledger.txt', LEDGER);
    const again = rows.nth(1).getByRole('group', { name: 'Import ledger.txt?' });
    await again.waitFor({ timeout: 60_000 });
    const askedSecond = (await again.textContent())!;
    expect(askedSecond).toMatch(/chunks a second \(measured (just now|\d+ min ago) on a sample of an earlier upload\)/);
    await page.screenshot({ path: join(SHOTS, 'imports-asks-earlier-probe.png'), fullPage: true });

    // Reloaded again, then confirmed from the row that came back: imported with the time left beside its progress.
    await page.reload();
    const restored = rows.first().getByRole('group', { name: 'Import ledger.txt?' });
    await restored.waitFor({ timeout: 30_000 });
    await restored.getByRole('button', { name: 'Import and index ledger.txt' }).click();
    await expect.poll(() => rows.first().textContent(), { timeout: 60_000 }).toMatch(/Queued|Indexing/);
    await expect
      .poll(() => rows.first().textContent(), { timeout: 30_000 })
      .toMatch(new RegExp(`\\d+ of ${chunks.toLocaleString('en-US')} chunks indexed.*(about \\d+ min|about \\d+ h( \\d+ min)?|under a minute) left`));
    await page.screenshot({ path: join(SHOTS, 'imports-time-left.png'), fullPage: true });
    const detail = await api(page, `/api/core/dataset/trainingDetail?datasetId=${datasetId}`);
    expect(detail.timeLeftSeconds).toBeGreaterThan(0);
    // The count it asked about is what the import made.
    expect(detail.total).toBe(chunks);

    // Deleted from the collections page: the row shows how far the delete got, in place of the question, until it is gone;
    // the header no longer counts the chunks that go as waiting, and says a collection is being deleted.
    await page.getByRole('link', { name: 'Collections' }).click();
    const row = page.getByRole('row').filter({ hasText: 'ledger.txt' });
    const header = page.locator('.ds-header');
    await expect.poll(() => row.textContent(), { timeout: 30_000 }).toMatch(/(about .*|under a minute) left/);
    expect(await row.textContent()).toContain(chunks.toLocaleString('en-US'));
    expect(await header.textContent()).toMatch(/Indexing.*left/);
    await row.getByRole('button', { name: 'Delete “ledger.txt”' }).click();
    const confirm = row.getByRole('group', { name: 'Delete “ledger.txt”' });
    await confirm.getByRole('button', { name: /^(Delete|Yes)/ }).click();
    const states: { row: string; header: string; asking: number }[] = [];
    let shot = false;
    for (let i = 0; i < 400; i++) {
      const text = (await row.textContent({ timeout: 1000 }).catch(() => null)) ?? 'gone';
      const now = { row: text, header: (await header.textContent())!, asking: text === 'gone' ? 0 : await confirm.count() };
      const last = states.at(-1);
      if (!last || last.row !== now.row || last.header !== now.header) states.push(now);
      if (/Deleting: [1-9][\d,]* of [\d,]+ chunks removed/.test(text) && !shot) {
        await page.screenshot({ path: join(SHOTS, 'imports-deleting.png'), fullPage: true });
        shot = true;
      }
      if (text === 'gone') break;
      await page.waitForTimeout(50);
    }
    const log = states.map((s) => `${s.row} | ${s.header} | asking: ${s.asking}`).join('\n');
    const deleting = states.filter((s) => new RegExp(`Deleting: [1-9][\\d,]* of ${chunks.toLocaleString('en-US')} chunks removed`).test(s.row));
    expect(deleting.length, log).toBeGreaterThan(0);
    // The progress alone: the question it answered is gone from the first moment.
    for (const s of deleting) expect(s.asking, log).toBe(0);
    // The header, once it read the delete (half a second at most), waits on nothing that is going and says what is.
    const told = deleting.findIndex((s) => s.header.includes('1 collection being deleted'));
    expect(told, log).toBeGreaterThanOrEqual(0);
    for (const s of deleting.slice(told)) expect(s.header, log).not.toMatch(/Indexing|Queued|left/);
    expect(states.at(-1)!.row).toBe('gone');
    expect((await api(page, '/api/core/dataset/collection/listV2', { datasetId })).total).toBe(0);
    expect(errors).toEqual([]);
    await context.close();
  }, 300_000);

  it('says in plain words why a file was refused, offers no retry, and keeps nothing to resume (nothing left in <data-dir>/uploads); a file cut short is offered', async () => {
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
    await drop(page, 'sheet.xls', 'not really a spreadsheet', 'application/vnd.ms-excel');
    const sheet = list.getByRole('listitem', { name: 'sheet.xls' });
    await expect
      .poll(() => sheet.textContent(), { timeout: 30_000 })
      .toContain('.xls files cannot be imported. Use txt, md, html, pdf, docx, csv, xlsx, pptx, png, jpg or webp');
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

    // A file cut short (a thousand of its bytes in, as a reload in the middle leaves it): that, and only that, is offered for resuming.
    const ferry = Buffer.from('The ferry leaves the north pier at 7:15 every morning.\n'.repeat(40));
    const b64 = (v: string) => Buffer.from(v).toString('base64');
    const tusHeaders = { 'x-csrf-token': await csrf(page), 'tus-resumable': '1.0.0' };
    const made = await page.request.post(`${suite.k.url}/api/core/dataset/collection/upload/tus`, {
      headers: {
        ...tusHeaders,
        'upload-length': String(ferry.length),
        'upload-metadata': `datasetId ${b64(datasetId)},filename ${b64('ferry.txt')},filetype ${b64('text/plain')}`,
      },
    });
    expect(made.status()).toBe(201);
    const sent = await page.request.patch(new URL(made.headers()['location']!, suite.k.url).href, {
      headers: { ...tusHeaders, 'upload-offset': '0', 'content-type': 'application/offset+octet-stream' },
      data: ferry.subarray(0, 1000),
    });
    expect(sent.status()).toBe(204);
    await page.reload();
    const offered = page.getByRole('list', { name: 'Interrupted uploads' }).getByRole('listitem', { name: 'ferry.txt' });
    await offered.waitFor();
    expect(await offered.textContent()).toContain(`1000 B of ${(ferry.length / 1024).toFixed(1)} KB uploaded`);
    expect(await list.count()).toBe(0);
    expect(errors).toEqual([]);
    await context.close();
  }, 120_000);
});
