// A platform on a real gateway in front of the upstream simulator, all in this
// process, with Chromium: for the browser tests that need models the local
// ones cannot play (a failing channel, a reranker). Started before a describe
// block's tests and closed after them.
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadGatewayConfig, startGateway } from '@kbchat/gateway';
import { startUpstreamSim, type UpstreamSimOptions } from '@kbchat/upstream-sim';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll } from 'vitest';
import { loadPlatformConfig, startPlatform, type PlatformConfig, type RunningPlatform } from '@kbchat/platform';
import { launch } from './browser.js';
import { SHOTS, signIn } from './kbchat-start.js';

export const SIM_ROOT_PASSWORD = 'sim-platform-root-password';
const TOKEN = 'sk-sim-platform-token';

export interface SimPlatformSuite {
  sim: Awaited<ReturnType<typeof startUpstreamSim>>;
  gw: Awaited<ReturnType<typeof startGateway>>;
  p: RunningPlatform;
  browser: Browser;
}

/**
 * `simModels`: the gateway's sim channel (SIM_MODELS); `config`: the platform's config.json; `gatewayEnv`: more gateway
 * settings; `sim`: the simulator's (tokens and tokenDelayMs make an answer that takes a while); `platform`: more
 * platform settings (toolAllowPrivate for a tool server on loopback).
 */
export function simPlatformSuite(opts: {
  simModels: string;
  config: unknown;
  gatewayEnv?: Record<string, string>;
  sim?: UpstreamSimOptions;
  platform?: Partial<PlatformConfig>;
}): SimPlatformSuite {
  const suite = {} as SimPlatformSuite;
  beforeAll(async () => {
    mkdirSync(SHOTS, { recursive: true });
    const dir = mkdtempSync(join(tmpdir(), 'kbchat-sim-web-'));
    mkdirSync(join(dir, 'platform'));
    suite.sim = await startUpstreamSim({ ...opts.sim, port: 0 });
    suite.gw = await startGateway(
      loadGatewayConfig(
        {
          INITIAL_ROOT_TOKEN: TOKEN,
          ROOT_INITIAL_BALANCE: '1000000000',
          SIM_API_KEY: 'sk-sim',
          SIM_BASE_URL: `${suite.sim.url}/v1`,
          SIM_MODELS: opts.simModels,
          LOCAL_MODELS: 'off',
          LOG_LEVEL: 'warn',
          ...opts.gatewayEnv,
        },
        { host: '127.0.0.1', port: 0, dataDir: join(dir, 'gw') },
      ),
      () => {},
    );
    writeFileSync(join(dir, 'config.json'), JSON.stringify(opts.config));
    suite.p = await startPlatform(
      loadPlatformConfig(
        { ROOT_PASSWORD: SIM_ROOT_PASSWORD },
        {
          host: '127.0.0.1',
          port: 0,
          dataDir: join(dir, 'platform'),
          databaseUrl: 'pglite:memory',
          configPath: join(dir, 'config.json'),
          gatewayUrl: suite.gw.url,
          gatewayToken: TOKEN,
          logLevel: 'warn',
          ...opts.platform,
        },
      ),
    );
    suite.browser = await launch();
  }, 90_000);
  afterAll(async () => {
    await suite.browser?.close();
    await suite.p?.close();
    await suite.gw?.close().catch(() => {}); // a test may have stopped it
    await suite.sim?.close();
  });
  return suite;
}

/** Signs in as root (this suite's password) through the form and waits for the app's navigation. */
export const signInRoot = (page: Page, url: string): Promise<void> => signIn(page, url, SIM_ROOT_PASSWORD);
