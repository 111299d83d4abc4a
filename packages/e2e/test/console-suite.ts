// The gateway console's browser tests: the real `kbchat gateway` (its own
// process, embedded store, no local models) with the project's upstream
// simulator as its provider, the way an operator runs it: one channel comes
// from OPENAI_API_KEY (marked as from the environment), the rest are made in
// the console. Chromium beside it; signing in as root through the form.
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser, BrowserContextOptions, Page } from 'playwright-core';
import { startUpstreamSim, type UpstreamSim } from '@kbchat/upstream-sim';
import { afterAll, afterEach, beforeAll } from 'vitest';
import { CLI, freePorts, plainEnv, startUntil, type Started } from '../../cli/test/helpers.js';
import { launch, openPage } from './browser.js';
import { SHOTS } from './kbchat-start.js';

export const CONSOLE_ROOT_PASSWORD = 'console-test-root-password';
/** The simulator's key; OPENAI_API_KEY holds it, so the environment's channel works. */
export const SIM_KEY = 'sk-sim-console-test-key';
/** The models of the channel from the environment. */
export const ENV_MODELS = ['sim-chat', 'sim-embed-8'];

export interface ConsoleSuite {
  /** The gateway's address (set before the first test). */
  url: string;
  sim: UpstreamSim;
  browser: Browser;
  gateway: Started;
  /** The page saved as <name>-FAILED.png when a test fails. */
  onFail?: Page;
  /** The admin API as a script calls it (root's bearer session): what a page says is checked against it. */
  api<T = any>(path: string, init?: { method?: string; json?: unknown }): Promise<T>;
}

/**
 * For a describe block of console tests: the simulator, `kbchat gateway` and
 * Chromium, started before its tests and closed after them.
 */
export function consoleSuite(name: string, env: Record<string, string> = {}): ConsoleSuite {
  const suite = {} as ConsoleSuite;
  let dataDir = '';
  beforeAll(async () => {
    mkdirSync(SHOTS, { recursive: true });
    dataDir = mkdtempSync(join(tmpdir(), `kbchat-console-${name}-`));
    suite.sim = await startUpstreamSim({ key: SIM_KEY });
    const [port] = await freePorts();
    const gatewayEnv = plainEnv({
      LOCAL_MODELS: 'off',
      ROOT_PASSWORD: CONSOLE_ROOT_PASSWORD,
      OPENAI_API_KEY: SIM_KEY,
      OPENAI_BASE_URL: `${suite.sim.url}/v1`,
      OPENAI_MODELS: ENV_MODELS.join(','),
      ...env,
    });
    [suite.gateway, suite.browser] = await Promise.all([
      startUntil(process.execPath, [CLI, 'gateway', '--data-dir', dataDir, '--port', String(port)], gatewayEnv, /\[gateway\] listening on/),
      launch(),
    ]);
    suite.url = `http://127.0.0.1:${port}`;
    const login = await fetch(`${suite.url}/api/auth/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ username: 'root', password: CONSOLE_ROOT_PASSWORD }),
    });
    const { session } = (await login.json()) as { session: string };
    suite.api = async (path, init = {}) => {
      const res = await fetch(`${suite.url}${path}`, {
        method: init.method ?? (init.json === undefined ? 'GET' : 'POST'),
        headers: { authorization: `Bearer ${session}`, ...(init.json === undefined ? {} : { 'content-type': 'application/json' }) },
        body: init.json === undefined ? undefined : JSON.stringify(init.json),
      });
      const body = await res.json();
      if (!res.ok) throw new Error(`${path}: ${res.status} ${JSON.stringify(body)}`);
      return body;
    };
  }, 120_000);
  afterEach(async (ctx) => {
    if (ctx.task.result?.state === 'fail' && suite.onFail && !suite.onFail.isClosed())
      await suite.onFail.screenshot({ path: join(SHOTS, `${name}-FAILED.png`), fullPage: true });
  });
  afterAll(async () => {
    await suite.browser?.close();
    const gateway = suite.gateway;
    if (gateway && gateway.child.exitCode === null) {
      const exited = new Promise((resolve) => gateway.child.once('exit', resolve));
      gateway.child.kill('SIGTERM');
      await Promise.race([exited, new Promise((resolve) => setTimeout(resolve, 10_000))]);
    }
    await suite.sim?.close();
    rmSync(dataDir, { recursive: true, force: true });
  });
  return suite;
}

/** Signs in through the console's form (root unless told otherwise) and waits for the navigation. */
export async function signInToConsole(page: Page, url: string, username = 'root', password = CONSOLE_ROOT_PASSWORD): Promise<void> {
  await page.goto(`${url}/`);
  await page.getByLabel('Username').fill(username);
  await page.getByLabel('Password').fill(password);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('navigation', { name: 'main' }).waitFor();
}

/** A fresh page signed in as root (kept as the suite's page to save if the test fails), on the console's first page. */
export async function openConsole(suite: ConsoleSuite, options: BrowserContextOptions = {}): Promise<Awaited<ReturnType<typeof openPage>>> {
  const opened = await openPage(suite.browser, options);
  suite.onFail = opened.page;
  await signInToConsole(opened.page, suite.url);
  return opened;
}
