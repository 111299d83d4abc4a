// `kbchat start` as a user runs it (the real command, in its own process, on
// the embedded stores with the local models and no provider key), for the
// browser tests; and signing in to it in a page.
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll } from 'vitest';
import { freePorts, plainEnv, startKbchat } from '../../cli/test/helpers.js';
import { launch } from './browser.js';

/** Where the browser tests save their screenshots. */
export const SHOTS = join(import.meta.dirname, '../../../test-output/web');

export const ROOT_PASSWORD = 'browser-test-root-password';

export interface KbchatForBrowser {
  /** The platform's address. */
  url: string;
  gatewayUrl: string;
  /** Its data dir (removed by close). */
  dataDir: string;
  close(): Promise<void>;
}

/** `env`: more settings for `kbchat start` (LINK_ALLOW_PRIVATE for a page served by the test, say). */
export async function startKbchatForBrowser(env: Record<string, string> = {}): Promise<KbchatForBrowser> {
  const dataDir = mkdtempSync(join(tmpdir(), 'kbchat-browser-'));
  const [port, gatewayPort] = await freePorts();
  const started = await startKbchat(['start'], plainEnv({ ...env, DATA_DIR: dataDir, PORT: String(port), GATEWAY_PORT: String(gatewayPort), ROOT_PASSWORD }));
  return {
    url: `http://127.0.0.1:${port}`,
    gatewayUrl: `http://127.0.0.1:${gatewayPort}`,
    dataDir,
    async close() {
      const exited = new Promise((resolve) => started.child.once('exit', resolve));
      started.child.kill('SIGTERM');
      await Promise.race([exited, new Promise((resolve) => setTimeout(resolve, 10_000))]);
      if (started.child.exitCode === null) started.child.kill('SIGKILL');
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

export interface BrowserSuite {
  /** `kbchat start` (set before the first test). */
  k: KbchatForBrowser;
  browser: Browser;
  /** The page saved as <name>-FAILED.png when a test fails. */
  onFail?: Page;
}

/**
 * For a describe block of browser tests: `kbchat start` and Chromium, started
 * before its tests and closed after them; a failed test's `onFail` page is
 * saved under SHOTS as <name>-FAILED.png.
 */
export function browserSuite(name: string, env: Record<string, string> = {}): BrowserSuite {
  const suite = {} as BrowserSuite;
  beforeAll(async () => {
    mkdirSync(SHOTS, { recursive: true });
    [suite.k, suite.browser] = await Promise.all([startKbchatForBrowser(env), launch()]);
  }, 120_000);
  afterEach(async (ctx) => {
    if (ctx.task.result?.state === 'fail' && suite.onFail && !suite.onFail.isClosed())
      await suite.onFail.screenshot({ path: join(SHOTS, `${name}-FAILED.png`), fullPage: true });
  });
  afterAll(async () => {
    await suite.browser?.close();
    await suite.k?.close();
  });
  return suite;
}

/** Signs in as root through the sign-in form and waits for the app's navigation. */
export async function signIn(page: Page, url: string, password = ROOT_PASSWORD): Promise<void> {
  await page.goto(`${url}/`);
  await page.getByLabel('Username').fill('root');
  await page.getByLabel('Password').fill(password);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('navigation', { name: 'main' }).waitFor();
}
