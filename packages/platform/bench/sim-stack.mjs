// What the platform benches stand on: the simulator, a real gateway in front
// of it (sim-chat, sim-embed-384), a config.json for them, and platforms
// opened on that gateway, all in this process. Also the API client, the wait
// for indexing, and percentiles.
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const { startUpstreamSim } = await import('@kbchat/upstream-sim');
const { loadGatewayConfig, startGateway } = await import('@kbchat/gateway');
const { loadPlatformConfig, startPlatform } = await import('../dist/index.js');

export async function startSimStack(name, { key, token, simOptions = {}, rootPassword }) {
  // BENCH_DIR keeps the stores between runs (the indexing bench then reuses a loaded search store).
  const dir = process.env.BENCH_DIR
    ? (mkdirSync(process.env.BENCH_DIR, { recursive: true }), process.env.BENCH_DIR)
    : mkdtempSync(join(tmpdir(), `kbchat-${name}-`));
  const sim = await startUpstreamSim({ port: 0, ...simOptions });
  const gw = await startGateway(
    loadGatewayConfig(
      {
        INITIAL_ROOT_TOKEN: token,
        ROOT_INITIAL_BALANCE: '1000000000',
        SIM_API_KEY: 'sk-sim',
        SIM_BASE_URL: `${sim.url}/v1`,
        SIM_MODELS: 'sim-chat,sim-embed-384',
        LOCAL_MODELS: 'off',
        LOG_LEVEL: 'warn',
      },
      { host: '127.0.0.1', port: 0, dataDir: join(dir, 'gw') },
    ),
    () => {},
  );
  writeFileSync(
    join(dir, 'config.json'),
    JSON.stringify({
      llmModels: [{ model: 'sim-chat' }],
      vectorModels: [{ model: 'sim-embed-384', defaultToken: 256, maxToken: 512 }],
      systemEnv: { vectorMaxProcess: 4 },
    }),
  );
  return {
    dir,
    sim,
    gw,
    /** A platform on its own store in `<dir>/<subdir>`, with `key` as its general key. */
    openPlatform: (subdir) =>
      startPlatform(
        loadPlatformConfig(
          { INITIAL_API_KEY: key, ...(rootPassword ? { ROOT_PASSWORD: rootPassword } : {}) },
          {
            host: '127.0.0.1',
            port: 0,
            dataDir: join(dir, subdir),
            configPath: join(dir, 'config.json'),
            gatewayUrl: gw.url,
            gatewayToken: token,
            logLevel: 'warn',
          },
        ),
      ),
    /** The platform's API: GET without a body, POST with one; the envelope's data, or an error naming the path. */
    client:
      (platform, withKey = key) =>
      async (path, json) => {
        const res = await fetch(`${platform.url}${path}`, {
          method: json === undefined ? 'GET' : 'POST',
          headers: { authorization: `Bearer ${withKey}`, ...(json === undefined ? {} : { 'content-type': 'application/json' }) },
          body: json === undefined ? undefined : JSON.stringify(json),
        });
        const body = await res.json();
        if (res.status !== 200) throw new Error(`${path}: ${res.status} ${JSON.stringify(body)}`);
        return body.data;
      },
    async close() {
      await gw.close();
      await sim.close();
    },
  };
}

/** Polls trainingDetail until every chunk has its vectors (with `hnsw`, until the HNSW graph is built too). */
export async function waitIndexed(api, datasetId, { hnsw = false, everyMs = 200 } = {}) {
  for (;;) {
    const p = await api(`/api/core/dataset/trainingDetail?datasetId=${datasetId}`);
    if (p.failed) throw new Error(`indexing failed: ${p.lastError}`);
    if (p.total > 0 && p.done === p.total && (!hnsw || p.vectorIndex === 'hnsw')) return p;
    await new Promise((r) => setTimeout(r, everyMs));
  }
}

/** The p-th percentile of `values` (any order). */
export function percentile(values, p) {
  const s = [...values].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))];
}
