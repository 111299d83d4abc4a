// Starts one gateway build (its dist/index.js) on the embedded store for compare-builds.mjs
// (and limits-cost.mjs, which adds settings as JSON in BENCH_GATEWAY_ENV).
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

const [dist, port, simPort] = process.argv.slice(2);
const { loadGatewayConfig, startGateway } = await import(pathToFileURL(dist).href);
const env = {
  INITIAL_ROOT_TOKEN: 'sk-compare',
  ROOT_INITIAL_BALANCE: '1000000',
  SIM_API_KEY: 'sk-sim',
  SIM_BASE_URL: `http://127.0.0.1:${simPort}/v1`,
  SIM_MODELS: 'sim-chat',
  LOG_LEVEL: 'warn',
  LOCAL_MODELS: 'off',
  ...JSON.parse(process.env.BENCH_GATEWAY_ENV ?? '{}'),
};
await startGateway(loadGatewayConfig(env, { host: '127.0.0.1', port: Number(port), dataDir: mkdtempSync(join(tmpdir(), 'kbchat-compare-')) }));
console.log(`listening on ${port}`);
