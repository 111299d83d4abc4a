// `kbchat start` as a user runs it (the real command, in its own process, on
// the embedded stores with the local models and no provider key), for the
// browser tests; and signing in to it in a page.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { freePorts, plainEnv, startKbchat } from '../../cli/test/helpers.js';

export const ROOT_PASSWORD = 'browser-test-root-password';

export interface KbchatForBrowser {
  /** The platform's address. */
  url: string;
  gatewayUrl: string;
  close(): Promise<void>;
}

export async function startKbchatForBrowser(): Promise<KbchatForBrowser> {
  const dataDir = mkdtempSync(join(tmpdir(), 'kbchat-browser-'));
  const [port, gatewayPort] = await freePorts();
  const started = await startKbchat(['start'], plainEnv({ DATA_DIR: dataDir, PORT: String(port), GATEWAY_PORT: String(gatewayPort), ROOT_PASSWORD }));
  return {
    url: `http://127.0.0.1:${port}`,
    gatewayUrl: `http://127.0.0.1:${gatewayPort}`,
    async close() {
      const exited = new Promise((resolve) => started.child.once('exit', resolve));
      started.child.kill('SIGTERM');
      await Promise.race([exited, new Promise((resolve) => setTimeout(resolve, 10_000))]);
      if (started.child.exitCode === null) started.child.kill('SIGKILL');
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/** Signs in as root through the sign-in form and waits for the app's navigation. */
export async function signIn(page: Page, url: string): Promise<void> {
  await page.goto(`${url}/`);
  await page.getByLabel('Username').fill('root');
  await page.getByLabel('Password').fill(ROOT_PASSWORD);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('navigation', { name: 'main' }).waitFor();
}
