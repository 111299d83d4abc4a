// Citation quotes readable everywhere, in Chromium against `kbchat start`
// (local-embed, local-extractive): in the settings page's test chat, the chat
// page and the share page, at 1366×900 (mouse) and 375×812 (touch), the quote
// of the first answer (scrolled to the top) and of the last one (at the bottom
// of the scroll area and of the screen) opens inside the viewport, unclipped
// by any scroll area: every corner and the centre of the popover are the
// popover itself to the browser (elementFromPoint), and the citation stays
// visible beside it. The pointer can move into a long quote and scroll it.
// The steps opened in the test chat stay inside its pane.
// Screenshots: test-output/web/quotes-*.png.
import { join } from 'node:path';
import type { BrowserContextOptions, Locator, Page } from 'playwright-core';
import { beforeAll, describe, expect, it } from 'vitest';
import { noBrowser, openPage, sideScroll } from './browser.js';
import { asPage, untilIndexed } from './chat-fixtures.js';
import { browserSuite, SHOTS, signIn } from './kbchat-start.js';

if (noBrowser) console.warn(`[skip] the quote popover browser tests: ${noBrowser}`);

// One long paragraph, cut in chunks as long as local-embed reads: a quote taller than the popover's quote box, which then scrolls.
const KEEPER = [
  'The lighthouse keeper Marguerite Okonkwo painted the tower teal in 1987.',
  // A long unbroken address, as real documents have: it must wrap, not push the steps or the quote off the pane.
  'The minutes are kept at https://archive.example.org/harbour-board/minutes/1987/lighthouse-tower-repainting-decision-objections-and-letter-of-support.pdf for anyone to read.',
  'Before that the tower had been a plain white with a red band near the lantern room, repainted every seven years by the harbour board.',
  'Okonkwo chose teal because the old white vanished against the winter fog and the fishing boats could not see it until they were close to the rocks.',
  'She mixed the paint herself from a marine enamel and a pigment she ordered from a supplier in Lisbon, and it took her and two apprentices the whole of August.',
  'The harbour board objected at first and held three meetings about it, but the fishermen signed a letter in support and the colour has been kept ever since.',
  'Visitors now know the tower from the postcards sold at the ferry terminal, and the local school uses the same teal for its sports shirts.',
].join(' ');
/** A long file name with no spaces, as uploads often have. */
const SOURCE = 'lighthouse_keeper_logbook_1987_tower_repainting_records_final_version_2.md';
const HARBOUR = 'The harbour master rings the bell at noon. The bell hangs in the old customs house and was cast in 1902.';
const QUESTIONS = [
  'Who painted the lighthouse tower teal?',
  'When does the harbour master ring the bell?',
  'Why did the keeper choose teal for the tower?',
  'Who objected to the new colour of the tower?',
  'Where did the keeper order the pigment from?',
  'What colour was the tower before 1987?',
  'When was the harbour bell cast?',
  'Where are the minutes of the harbour board kept?',
];

const DESKTOP: BrowserContextOptions = { locale: 'en-US', viewport: { width: 1366, height: 900 } };
const PHONE: BrowserContextOptions = { locale: 'en-US', viewport: { width: 375, height: 812 }, isMobile: true, hasTouch: true, deviceScaleFactor: 2 };

interface Geometry {
  box: { left: number; top: number; right: number; bottom: number };
  viewport: { width: number; height: number };
  /** The probe points (just inside the corners, and the centre) where something other than the popover is on top. */
  covered: string[];
  /** Whether the citation's centre is still the citation (the popover does not hide what it points at). */
  citeVisible: boolean;
}

/** Where the open popover lies, and whether every part of it can be seen. */
async function geometry(popover: Locator, cite: Locator): Promise<Geometry> {
  return popover.evaluate(
    (el, citeEl) => {
      const r = el.getBoundingClientRect();
      // Just inside each corner, past its rounding (a rounded corner's tip is not the element to the browser).
      const d = parseFloat(getComputedStyle(el).borderTopLeftRadius) + 2;
      const points: [string, number, number][] = [
        ['top-left', r.left + d, r.top + d],
        ['top-right', r.right - d, r.top + d],
        ['bottom-left', r.left + d, r.bottom - d],
        ['bottom-right', r.right - d, r.bottom - d],
        ['centre', (r.left + r.right) / 2, (r.top + r.bottom) / 2],
      ];
      const describe = (e: Element | null) =>
        e ? `${e.tagName.toLowerCase()}.${e.className} in ${e.parentElement?.tagName.toLowerCase()}.${e.parentElement?.className}` : 'outside the viewport';
      const covered = points.filter(([, x, y]) => {
        const hit = document.elementFromPoint(x, y);
        return !hit || !el.contains(hit);
      });
      const c = citeEl.getBoundingClientRect();
      const atCite = document.elementFromPoint((c.left + c.right) / 2, (c.top + c.bottom) / 2);
      return {
        box: { left: r.left, top: r.top, right: r.right, bottom: r.bottom },
        viewport: { width: innerWidth, height: innerHeight },
        covered: covered.map(([name, x, y]) => `${name} (${Math.round(x)},${Math.round(y)}): ${describe(document.elementFromPoint(x, y))}`),
        citeVisible: Boolean(atCite && citeEl.contains(atCite)),
      };
    },
    await cite.elementHandle(),
  );
}

/** Asks a question in `root` and waits for its answer to be done. */
async function ask(page: Page, root: Locator, question: string, answers: number) {
  const message = root.getByRole('textbox', { name: 'Message' });
  await message.fill(question);
  await message.press('Enter');
  await expect.poll(() => root.getByTestId('answer').count(), { timeout: 20_000 }).toBe(answers);
  await root.getByRole('button', { name: 'Send' }).waitFor({ timeout: 20_000 });
  await expect.poll(() => root.getByTestId('answer').last().getByRole('button', { name: 'Source 1' }).count()).toBeGreaterThan(0);
}

/** Asks until the chat's messages scroll (the last answer then sits at the bottom of a scroll area). */
async function fillChat(page: Page, root: Locator) {
  const messages = root.locator('.chat-messages');
  for (let i = 0; i < QUESTIONS.length; i++) {
    await ask(page, root, QUESTIONS[i]!, i + 1);
    if (i >= 1 && (await messages.evaluate((el) => el.scrollHeight > el.clientHeight + 40))) return;
  }
  throw new Error('the chat never scrolled: the test would not put an answer at the bottom of a scroll area');
}

/**
 * Opens Source 1 of the first and of the last answer in `root`, the first
 * scrolled to the top of the screen, the last to the bottom, and checks that
 * each quote lies inside the viewport and can be seen whole.
 */
async function checkQuotes(page: Page, root: Locator, name: string, touch: boolean) {
  const answers = root.getByTestId('answer');
  for (const which of ['first', 'last'] as const) {
    const answer = which === 'first' ? answers.first() : answers.last();
    const cite = answer.getByRole('button', { name: 'Source 1' }).first();
    // Every scroll area and the page brought to put the citation at the top (first) or bottom (last) edge.
    await cite.evaluate((el, block) => el.scrollIntoView({ block }), which === 'first' ? 'start' : 'end');
    if (touch) await cite.tap();
    else await cite.hover();
    const popover = page.getByRole('dialog', { name: 'Source 1' });
    await popover.waitFor();
    // Positioned once open (autoUpdate); a clipped popover stays clipped.
    await expect
      .poll(
        async () => {
          const g = await geometry(popover, cite);
          return { covered: g.covered, citeVisible: g.citeVisible };
        },
        { timeout: 3000 },
      )
      .toEqual({ covered: [], citeVisible: true });
    const g = await geometry(popover, cite);
    expect(g.box.left).toBeGreaterThanOrEqual(0);
    expect(g.box.top).toBeGreaterThanOrEqual(0);
    expect(g.box.right).toBeLessThanOrEqual(g.viewport.width);
    expect(g.box.bottom).toBeLessThanOrEqual(g.viewport.height);
    // Wide and tall enough to read.
    expect(g.box.right - g.box.left).toBeGreaterThanOrEqual(Math.min(300, g.viewport.width - 40));
    expect(g.box.bottom - g.box.top).toBeGreaterThan(80);
    expect(await popover.textContent()).toContain(SOURCE);
    await page.screenshot({ path: join(SHOTS, `quotes-${name}-${which}.png`) });
    // Closed again: a tap elsewhere, or the pointer leaving.
    if (touch) await page.getByRole('heading').first().tap();
    else await page.mouse.move(g.viewport.width - 5, 5);
    await popover.waitFor({ state: 'detached' });
  }
}

/**
 * Elements of `root` that reach past the right edge of `bound`'s content
 * (what it shows without scrolling sideways) with no scroll area inside
 * `root` to hold them: the chat's own scroll area scrolling sideways does not
 * count, the steps must wrap or scroll in their own box.
 */
async function cutOff(root: Locator, bound: Locator): Promise<string[]> {
  return root.evaluate(
    (el, boundEl) => {
      const visibleRight = (e: Element) => e.getBoundingClientRect().left + e.clientLeft + e.clientWidth + 0.5;
      const right = visibleRight(boundEl);
      const out: string[] = [];
      for (const e of [el, ...el.querySelectorAll('*')]) {
        if (e.getBoundingClientRect().right <= right) continue;
        // Inside a box that scrolls sideways and itself fits: reachable by scrolling that box.
        let held = false;
        for (let up = e.parentElement; up && up !== el.parentElement; up = up.parentElement) {
          const x = getComputedStyle(up).overflowX;
          if ((x === 'auto' || x === 'scroll') && up.getBoundingClientRect().right <= right) held = true;
        }
        if (!held) out.push(`${e.tagName.toLowerCase()}.${e.className} right ${Math.round(e.getBoundingClientRect().right)} > ${Math.round(right)}`);
      }
      return out;
    },
    await bound.elementHandle(),
  );
}

describe.skipIf(Boolean(noBrowser))('citation quotes and steps on screen', () => {
  const suite = browserSuite('quotes');
  let appId = '';
  let shareId = '';

  beforeAll(async () => {
    const { context, page } = await openPage(suite.browser, DESKTOP);
    await signIn(page, suite.k.url);
    const call = await asPage(page, suite.k.url);
    const datasetId = await call<string>('/api/core/dataset/create', { name: 'Keeper notes', vectorModel: 'local-embed' });
    await call('/api/core/dataset/collection/create/text', {
      datasetId,
      name: SOURCE,
      text: `# Lighthouse\n\n${KEEPER}\n\n# Harbour\n\n${HARBOUR}`,
      chunkSize: 128,
    });
    await untilIndexed(call, datasetId);
    appId = await call<string>('/api/core/app/create', { name: 'Keeper desk', model: 'local-extractive', datasets: [datasetId] });
    shareId = await call<string>('/api/support/outLink/create', { appId, type: 'share', name: 'Quotes' });
    await context.close();
  }, 90_000);

  for (const [size, options] of [
    ['1366', DESKTOP],
    ['375', PHONE],
  ] as const) {
    const touch = Boolean(options.hasTouch);

    it(`shows the quotes of the first and the last answer whole at ${size} px: test chat, chat page, share page`, async () => {
      const { context, page, errors } = await openPage(suite.browser, options);
      suite.onFail = page;
      await signIn(page, suite.k.url);

      // The settings page's test chat.
      await page.goto(`${suite.k.url}/apps/${encodeURIComponent(appId)}`);
      const pane = page.locator('.ap-test-pane');
      await pane.getByRole('textbox', { name: 'Message' }).waitFor();
      await fillChat(page, pane);
      await checkQuotes(page, pane, `test-${size}`, touch);

      // The chat page.
      await page.goto(`${suite.k.url}/chat?appId=${encodeURIComponent(appId)}`);
      const chat = page.locator('main');
      await chat.getByRole('textbox', { name: 'Message' }).waitFor();
      await fillChat(page, chat);
      await checkQuotes(page, chat, `chat-${size}`, touch);

      // The share page, as a visitor.
      const visitor = await openPage(suite.browser, options);
      await visitor.page.goto(`${suite.k.url}/chat/share?shareId=${encodeURIComponent(shareId)}`);
      const share = visitor.page.locator('main');
      await share.getByRole('textbox', { name: 'Message' }).waitFor();
      suite.onFail = visitor.page;
      await fillChat(visitor.page, share);
      await checkQuotes(visitor.page, share, `share-${size}`, touch);
      expect(await sideScroll(visitor.page)).toBeLessThanOrEqual(0);
      expect([...errors, ...visitor.errors]).toEqual([]);
      await visitor.context.close();
      await context.close();
    }, 180_000);
  }

  it('lets the pointer move from a citation into its long quote and scroll it, then closes when it leaves', async () => {
    const { context, page, errors } = await openPage(suite.browser, DESKTOP);
    suite.onFail = page;
    await signIn(page, suite.k.url);
    await page.goto(`${suite.k.url}/chat?appId=${encodeURIComponent(appId)}`);
    const chat = page.locator('main');
    await chat.getByRole('textbox', { name: 'Message' }).waitFor();
    await ask(page, chat, QUESTIONS[0]!, 1);
    const cite = chat.getByTestId('answer').last().getByRole('button', { name: 'Source 1' }).first();
    await cite.hover();
    const popover = page.getByRole('dialog', { name: 'Source 1' });
    await popover.waitFor();
    const quote = popover.locator('.quote-text').first();
    // The long quote scrolls inside the popover.
    await expect.poll(() => quote.evaluate((el) => el.scrollHeight > el.clientHeight)).toBe(true);
    // From the citation out past the answer's edge (off the answer for a moment, as a hand may go) and into the quote.
    const from = (await cite.boundingBox())!;
    const to = (await quote.boundingBox())!;
    const edge = (await chat.getByTestId('answer').last().locator('.bubble').boundingBox())!;
    await page.mouse.move(from.x + from.width / 2, from.y + from.height / 2);
    await page.mouse.move(edge.x + edge.width + 20, from.y + from.height / 2, { steps: 3 });
    await page.mouse.move(to.x + to.width / 2, to.y + to.height / 2, { steps: 6 });
    await page.waitForTimeout(600);
    expect(await popover.isVisible()).toBe(true);
    await page.mouse.wheel(0, 120);
    await expect.poll(() => quote.evaluate((el) => el.scrollTop)).toBeGreaterThan(0);
    expect(await popover.isVisible()).toBe(true);
    // Out of the popover and away from the answer: closed.
    await page.mouse.move(1360, 5, { steps: 4 });
    await popover.waitFor({ state: 'detached' });
    // Focus and Escape still open and close it.
    await cite.focus();
    await popover.waitFor();
    await page.keyboard.press('Escape');
    await popover.waitFor({ state: 'detached' });
    expect(errors).toEqual([]);
    await context.close();
  }, 60_000);

  for (const [size, options] of [
    ['1366', DESKTOP],
    ['375', PHONE],
  ] as const) {
    it(`keeps the steps inside the test chat's pane at ${size} px`, async () => {
      const { context, page, errors } = await openPage(suite.browser, options);
      suite.onFail = page;
      await signIn(page, suite.k.url);
      await page.goto(`${suite.k.url}/apps/${encodeURIComponent(appId)}`);
      const pane = page.locator('.ap-test-pane');
      await pane.getByRole('textbox', { name: 'Message' }).waitFor();
      await ask(page, pane, QUESTIONS[2]!, 1);
      const answer = pane.getByTestId('answer').last();
      await answer.getByRole('button', { name: 'Steps' }).click();
      const steps = answer.locator('.steps');
      await steps.waitFor();
      await answer.getByRole('region', { name: 'Model calls' }).waitFor();
      // The trace's request ids are read from the gateway; wait for the rows to settle.
      await expect.poll(() => answer.getByText('Loading', { exact: false }).count()).toBe(0);
      await steps.evaluate((el) => el.scrollIntoView({ block: 'start' }));
      await page.screenshot({ path: join(SHOTS, `quotes-steps-${size}.png`) });
      await answer.getByRole('region', { name: 'Model calls' }).evaluate((el) => el.scrollIntoView({ block: 'center' }));
      await page.screenshot({ path: join(SHOTS, `quotes-steps-${size}-calls.png`) });
      const widths = await pane.evaluate((el) => ({ scroll: el.scrollWidth, client: el.clientWidth }));
      expect(widths.scroll).toBeLessThanOrEqual(widths.client);
      const aside = page.locator('aside.ap-test');
      const asideWidths = await aside.evaluate((el) => ({ scroll: el.scrollWidth, client: el.clientWidth }));
      expect(asideWidths.scroll).toBeLessThanOrEqual(asideWidths.client);
      const messages = pane.locator('.chat-messages');
      expect(await cutOff(answer, messages)).toEqual([]);
      const sideways = await messages.evaluate((el) => ({ scroll: el.scrollWidth, client: el.clientWidth }));
      expect(sideways.scroll).toBeLessThanOrEqual(sideways.client);
      expect(await sideScroll(page)).toBeLessThanOrEqual(0);
      expect(errors).toEqual([]);
      await context.close();
    }, 60_000);
  }
});
