// CLI: upstream-sim [--port 4010] [--host 127.0.0.1] [--key sk-sim]
// Port defaults to SIM_PORT or 4010, key to SIM_API_KEY; other settings come from SIM_* env vars.
import { startUpstreamSim } from './index.js';

const args = process.argv.slice(2);
const arg = (name: string): string | undefined => {
  const i = args.indexOf(name);
  return i >= 0 ? args[i + 1] : undefined;
};

try {
  const sim = await startUpstreamSim({
    port: Number(arg('--port') ?? (process.env.SIM_PORT || 4010)),
    host: arg('--host'),
    key: arg('--key'),
  });
  console.log(`upstream-sim listening on ${sim.url}`);
  let closing = false;
  for (const sig of ['SIGINT', 'SIGTERM'] as const) {
    process.on(sig, () => {
      if (closing) return;
      closing = true;
      void sim.close().then(() => process.exit(0));
    });
  }
} catch (err) {
  console.error(`upstream-sim: ${(err as Error).message}`);
  process.exit(1);
}
