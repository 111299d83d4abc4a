// The web app's budgets (issue 14), measured with the built bundle in Debian's
// Chromium: not a timed test, numbers printed beside their budget and a
// baseline measured in the same run.
//
//  1. The share page's JavaScript, gzipped: every script share.html loads (its
//     entry and the chunks it preloads). Budget 200 KB. Baseline: the same for
//     the signed-in app's index.html.
//  2. First paint of the share page on loopback (a real share link), median of
//     BENCH_PAINTS fresh contexts. Budget 500 ms. Baseline: a static page from a
//     bare node:http server, painted the same way.
//  3. A streamed answer of 2,000 tokens at 200 tokens/s (the upstream
//     simulator: 2,000 words, 5 ms apart, through the real gateway and
//     platform) on the share page: for each piece of the stream as the page's
//     fetch reads it, the time until the answer on screen holds it (budget
//     50 ms each), long tasks, the largest event-loop stall while a user types
//     into the Message box, and layout shift outside the growing answer.
//
// Without Chromium it says so and measures (1) only.
import { existsSync, readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { percentile, startSimStack } from '../../platform/bench/sim-stack.mjs';

// The web app's build, through its package (a dev dependency of this one).
const DIST = join(dirname(createRequire(import.meta.url).resolve('@kbchat/web/package.json')), 'dist');
const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const PAINTS = Number(process.env.BENCH_PAINTS ?? 10);
const TOKENS = 2000;
/** Stored turns of the long chat (3b): 2 x this many messages above the streamed answer. */
const LONG_TURNS = Number(process.env.BENCH_LONG_TURNS ?? 50);
const KEY = 'kbchat-bench-web-key';
const TOKEN = 'sk-bench-web';
const ROOT_PASSWORD = 'bench-web-root-password';
const kb = (n) => `${(n / 1024).toFixed(1)} KB`;

/** The scripts an HTML page of the build loads: its module entry and modulepreloads. */
function scriptsOf(htmlFile) {
  const html = readFileSync(join(DIST, htmlFile), 'utf8');
  const srcs = [...html.matchAll(/<script[^>]+src="([^"]+\.js)"/g), ...html.matchAll(/<link rel="modulepreload"[^>]+href="([^"]+\.js)"/g)].map((m) => m[1]);
  return [...new Set(srcs)].map((src) => ({ src, gz: gzipSync(readFileSync(join(DIST, src.replace(/^\//, '')))).length }));
}

if (!existsSync(join(DIST, 'share.html'))) {
  console.error('packages/web/dist is not built: run npm run build -w packages/web (npm ci does it)');
  process.exit(1);
}
const share = scriptsOf('share.html');
const app = scriptsOf('index.html');
const shareGz = share.reduce((s, f) => s + f.gz, 0);
const appGz = app.reduce((s, f) => s + f.gz, 0);
console.log(
  `1. share page JavaScript: ${kb(shareGz)} gzipped in ${share.length} files (budget 200 KB: ${((shareGz / (200 * 1024)) * 100).toFixed(0)}% of it); the signed-in app's first load: ${kb(appGz)} (share/app ${(shareGz / appGz).toFixed(2)})`,
);
for (const f of share) console.log(`     ${f.src}  ${kb(f.gz)}`);

if (!existsSync(CHROMIUM)) {
  console.log(`2, 3: not measured: no Chromium at ${CHROMIUM} (apt-get install chromium)`);
  process.exit(0);
}
const { chromium } = await import('playwright-core');

const stack = await startSimStack('web-bench', { key: KEY, token: TOKEN, simOptions: { tokens: TOKENS, tokenDelayMs: 5 }, rootPassword: ROOT_PASSWORD });
const platform = await stack.openPlatform('platform');
const browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking'] });
try {
  const api = stack.client(platform);
  const appId = await api('/api/core/app/create', { name: 'Stream bench', model: 'sim-chat', maxToken: TOKENS });
  const shareId = await api('/api/support/outLink/create', { appId, name: 'bench' });
  const shareUrl = `${platform.url}/chat/share?shareId=${encodeURIComponent(shareId)}`;
  // The baseline: a static page from a bare node:http server on loopback.
  const staticServer = createServer((_req, res) =>
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end('<!doctype html><meta charset="utf-8"><title>static</title><p>static page</p>'),
  );
  await new Promise((resolve) => staticServer.listen(0, '127.0.0.1', resolve));
  const staticUrl = `http://127.0.0.1:${staticServer.address().port}/`;

  // 2. First paint, fresh context each time (nothing cached), against a static page.
  const firstPaint = async (url) => {
    const context = await browser.newContext();
    const page = await context.newPage();
    await page.goto(url, { waitUntil: 'load' });
    const fp = await page.evaluate(
      () =>
        new Promise((resolve) => {
          const found = () => performance.getEntriesByType('paint').find((e) => e.name === 'first-contentful-paint');
          if (found()) return resolve(found().startTime);
          new PerformanceObserver(() => found() && resolve(found().startTime)).observe({ type: 'paint', buffered: true });
        }),
    );
    await context.close();
    return fp;
  };
  const sharePaints = [];
  const staticPaints = [];
  for (let i = 0; i < PAINTS; i++) {
    staticPaints.push(await firstPaint(staticUrl));
    sharePaints.push(await firstPaint(shareUrl));
  }
  const shareFp = percentile(sharePaints, 50);
  const staticFp = percentile(staticPaints, 50);
  staticServer.close();
  console.log(
    `2. share page first contentful paint: median ${shareFp.toFixed(0)} ms, worst ${Math.max(...sharePaints).toFixed(0)} ms over ${PAINTS} (budget 500 ms); a static page: ${staticFp.toFixed(0)} ms (ratio ${(shareFp / staticFp).toFixed(2)})`,
  );

  // 3. The stream, as the page reads it and as the screen shows it: on a new
  // chat, and (3b) on a long one: a visitor's chat of LONG_TURNS stored turns
  // (2 x LONG_TURNS messages, each answer 2,000 words) opened from the history,
  // where a streamed piece must still re-render only the live answer. DOM
  // mutations outside the live answer while it streams are counted too: the
  // history's nodes must stay untouched.
  await streamCase('3.', shareUrl);
  const visitor = 'visitor-bench-long';
  const chatId = 'bench-long-chat';
  for (let i = 0; i < LONG_TURNS; i++) {
    const res = await fetch(`${platform.url}/api/v1/chat/completions?shareId=${encodeURIComponent(shareId)}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ shareId, outLinkUid: visitor, chatId, stream: false, messages: [{ role: 'user', content: `Stored question ${i + 1}` }] }),
    });
    if (res.status !== 200) throw new Error(`seeding the long chat: ${res.status} ${await res.text()}`);
  }
  await streamCase('3b.', shareUrl, { visitor, shareId, storedTurns: LONG_TURNS });
} finally {
  await browser.close();
  await platform.close();
  await stack.close();
}

/** Streams one 2,000-token answer on the share page and prints its render delays (a long chat: `long` opened first). */
async function streamCase(label, url, long) {
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  const page = await context.newPage();
  if (long) await page.addInitScript(([key, uid]) => localStorage.setItem(key, uid), [`kbchat.outLinkUid.${long.shareId}`, long.visitor]);
  await page.addInitScript(() => {
    const w = window;
    w.__bench = { arrivals: [], renders: [], longTasks: [], shifts: 0, lag: 0, outside: [], watching: false };
    const words = (s) => (s.match(/\S+/g) ?? []).length;
    const realFetch = w.fetch;
    w.fetch = async (input, init) => {
      const res = await realFetch(input, init);
      if (!String(input).includes('/api/v1/chat/completions') || !res.body) return res;
      // A tee: the page reads one branch, this counts the words each piece brings as it arrives.
      const [mine, theirs] = res.body.tee();
      (async () => {
        const reader = mine.getReader();
        const decoder = new TextDecoder();
        let text = '';
        let buf = '';
        for (;;) {
          const { done, value } = await reader.read();
          if (done) break;
          buf += decoder.decode(value, { stream: true });
          for (const m of buf.matchAll(/"content":"((?:[^"\\]|\\.)*)"/g)) text += JSON.parse(`"${m[1]}"`);
          buf = buf.slice(buf.lastIndexOf('\n') + 1);
          w.__bench.arrivals.push({ t: performance.now(), words: words(text) });
        }
      })();
      return new Response(theirs, { status: res.status, headers: res.headers });
    };
    new PerformanceObserver((list) => list.getEntries().forEach((e) => w.__bench.longTasks.push(e.duration))).observe({ type: 'longtask', buffered: true });
    new PerformanceObserver((list) => list.getEntries().forEach((e) => (w.__bench.shifts += e.hadRecentInput ? 0 : e.value))).observe({
      type: 'layout-shift',
      buffered: true,
    });
    // Rendered words of the streaming answer, checked every frame.
    const frame = () => {
      const live = document.querySelector('.streaming .markdown');
      if (live) {
        const n = words(live.textContent ?? '');
        const last = w.__bench.renders.at(-1);
        if (!last || last.words !== n) w.__bench.renders.push({ t: performance.now(), words: n });
      }
      requestAnimationFrame(frame);
    };
    requestAnimationFrame(frame);
    // Mutations outside the live answer and the Message box while it streams (the history's messages must not be touched).
    new MutationObserver((records) => {
      if (!w.__bench.watching) return;
      for (const r of records)
        if (!(r.target instanceof Element ? r.target : r.target.parentElement)?.closest('.streaming, form')) w.__bench.outside.push(performance.now());
    }).observe(document, { subtree: true, childList: true, characterData: true, attributes: true });
    // Event-loop stalls: a 10 ms timer that fires late.
    let expected = performance.now() + 10;
    setInterval(() => {
      const now = performance.now();
      w.__bench.lag = Math.max(w.__bench.lag, now - expected);
      expected = now + 10;
    }, 10);
  });
  await page.goto(url);
  if (long) {
    await page.getByRole('button', { name: 'Stored question 1', exact: true }).click();
    await page.getByText(`Stored question ${long.storedTurns}`, { exact: true }).waitFor();
  }
  const box = page.getByRole('textbox', { name: 'Message' });
  await box.fill('Tell me a long story');
  const started = Date.now();
  await page.getByRole('button', { name: 'Send' }).click();
  await page.getByRole('button', { name: 'Stop' }).waitFor();
  // From the first words on: the question and the answer's frame are added before.
  await page.locator('.streaming .markdown').waitFor();
  await page.evaluate(() => (window.__bench.watching = true));
  // Type while it streams: the box must keep up.
  let typed = '';
  while (await page.getByRole('button', { name: 'Stop' }).isVisible()) {
    if (typed.length < 200) {
      await box.press('a');
      typed += 'a';
    }
    await page.waitForTimeout(20);
    if (Date.now() - started > 60_000) throw new Error('the stream did not end within 60 s');
  }
  const kept = (await box.inputValue()).length;
  const b = await page.evaluate(() => ((window.__bench.watching = false), window.__bench));
  const messages = await page.locator('.msg').count();
  // Until the live answer's last words: the finished answer then replaces it (a mutation outside by design).
  const lastRender = b.renders.at(-1)?.t ?? 0;
  const outside = b.outside.filter((t) => t < lastRender).length;
  const streamMs = Date.now() - started;
  // For each piece that brings words (not the status events before the answer): when did the screen first hold them?
  const delays = [];
  let r = 0;
  for (const [i, a] of b.arrivals.entries()) {
    if (a.words <= (b.arrivals[i - 1]?.words ?? 0)) continue;
    while (r < b.renders.length && b.renders[r].words < a.words) r++;
    if (r < b.renders.length) delays.push(Math.max(0, b.renders[r].t - a.t));
  }
  const finalWords = b.arrivals.at(-1)?.words ?? 0;
  const over = delays.filter((d) => d > 50).length;
  const overAt = delays.flatMap((d, i) => (d > 50 ? [`piece ${i + 1}: ${d.toFixed(0)} ms`] : []));
  console.log(
    `${label} ${long ? `long chat (${messages} messages on the page, ${long.storedTurns} stored turns before): ` : ''}${TOKENS}-token answer at 200 tokens/s: ${b.arrivals.length} pieces read by the page (${delays.length} with words; ${finalWords} words) in ${(streamMs / 1000).toFixed(1)} s; ` +
      `render delay p50 ${percentile(delays, 50).toFixed(1)} ms, p99 ${percentile(delays, 99).toFixed(1)} ms, max ${Math.max(...delays).toFixed(1)} ms, ${over} of ${delays.length} over the 50 ms budget${over ? ` (${overAt.slice(0, 5).join(', ')})` : ''}; ` +
      `long tasks over 50 ms: ${b.longTasks.filter((d) => d > 50).length} (longest ${Math.max(0, ...b.longTasks).toFixed(0)} ms); largest event-loop stall ${b.lag.toFixed(0)} ms; ` +
      `typed during the stream: ${kept} of ${typed.length} keys kept; layout shift ${b.shifts.toFixed(3)}; DOM mutations outside the live answer while it streamed: ${outside}`,
  );
  await context.close();
}
