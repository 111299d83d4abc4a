// Debian's Chromium driven by playwright-core, as the project's browser tests
// use it; where it is not installed the tests skip and say so.
import { existsSync } from 'node:fs';
import { chromium, type Browser } from 'playwright-core';

export const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
export const noBrowser = existsSync(CHROMIUM) ? undefined : `no Chromium at ${CHROMIUM} (apt-get install chromium; .ci/run does)`;

export function launch(): Promise<Browser> {
  return chromium.launch({ executablePath: CHROMIUM, args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking'] });
}
