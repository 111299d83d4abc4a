// Shared test fixtures: a real gateway over HTTP, in front of the project's
// upstream simulator over HTTP, on a real store (PGlite in memory by default;
// PostgreSQL and MariaDB/MySQL where the machine has them).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startUpstreamSim, type UpstreamSim, type UpstreamSimOptions } from '@kbchat/upstream-sim';
import { loadGatewayConfig, startGateway, type GatewayConfig, type RunningGateway } from '../src/index.js';

export const ROOT_TOKEN = 'sk-test-root-token-0123456789';
export const ROOT_PASSWORD = 'test-root-password';

export const SIM_MODELS = [
  'sim-chat',
  'sim-echo-prompt',
  'sim-tools',
  'sim-strict',
  'sim-503',
  'sim-500',
  'sim-400',
  'sim-slow',
  'sim-drop',
  'sim-hang',
  'sim-nousage',
  'sim-no-stream-options',
  'sim-big-3000000',
  'sim-embed-384',
  'sim-embed-raw-384',
  'sim-rerank',
];

export interface TestGateway {
  gw: RunningGateway;
  sim: UpstreamSim;
  url: string;
  /** The gateway's OpenAI base URL ({url}/v1). */
  baseURL: string;
  dataDir: string;
  /** fetch against the gateway with the root token. */
  api(path: string, init?: RequestInit & { json?: unknown; token?: string }): Promise<Response>;
  close(): Promise<void>;
}

export interface TestGatewayOptions {
  sim?: UpstreamSimOptions;
  /** Extra environment for the gateway (e.g. another provider). */
  env?: Record<string, string>;
  config?: Partial<GatewayConfig>;
  /** Database URL (default: PGlite in memory). */
  databaseUrl?: string;
  /** Models of the SIM channel (default SIM_MODELS). */
  models?: string[];
  /** Reuse a running simulator instead of starting one. */
  simInstance?: UpstreamSim;
}

export async function startTestGateway(opts: TestGatewayOptions = {}): Promise<TestGateway> {
  const sim = opts.simInstance ?? (await startUpstreamSim({ port: 0, ...opts.sim }));
  const dataDir = mkdtempSync(join(tmpdir(), 'kbchat-gw-'));
  const env: Record<string, string> = {
    SIM_API_KEY: opts.sim?.key ?? 'sk-sim-upstream-key',
    SIM_BASE_URL: `${sim.url}/v1`,
    SIM_MODELS: (opts.models ?? SIM_MODELS).join(','),
    INITIAL_ROOT_TOKEN: ROOT_TOKEN,
    ROOT_PASSWORD,
    // The in-process models load a 220 MB graph: only the tests about them turn them on.
    LOCAL_MODELS: 'off',
    ...opts.env,
  };
  const config = loadGatewayConfig(env, {
    host: '127.0.0.1',
    port: 0,
    dataDir,
    databaseUrl: opts.databaseUrl ?? 'pglite:memory',
    logLevel: 'warn',
    logFlushMs: 20,
    retestIntervalMs: 0,
    ...opts.config,
  });
  const gw = await startGateway(config, () => {});
  const url = gw.url;
  return {
    gw,
    sim,
    url,
    baseURL: `${url}/v1`,
    dataDir,
    api(path, init = {}) {
      const { json, token, ...rest } = init;
      const headers: Record<string, string> = { authorization: `Bearer ${token ?? ROOT_TOKEN}`, ...(rest.headers as Record<string, string>) };
      if (json !== undefined) headers['content-type'] = 'application/json';
      return fetch(url + path, { ...rest, headers, body: json !== undefined ? JSON.stringify(json) : rest.body });
    },
    async close() {
      await gw.close();
      if (!opts.simInstance) await sim.close();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/** Reads an SSE response into its data payloads (without the [DONE] marker). */
export async function readSse(res: Response): Promise<{ data: string[]; done: boolean; raw: string }> {
  const raw = await res.text();
  const data: string[] = [];
  let done = false;
  for (const block of raw.split('\n\n')) {
    const line = block.split('\n').find((l) => l.startsWith('data: '));
    if (!line) continue;
    const payload = line.slice(6);
    if (payload === '[DONE]') done = true;
    else data.push(payload);
  }
  return { data, done, raw };
}
