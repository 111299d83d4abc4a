// The `kbchat` command: start (everything, embedded), gateway, replay, help.
import { parseArgs } from 'node:util';
import { replayCommand } from './replay.js';
import { runEverything, runGateway, runPlatform, runWorker } from './services.js';

const USAGE = `kbchat <command> [options]

Commands:
  start              start the model gateway and the platform in one process, on the embedded stores
  gateway            start the model gateway alone
  platform           start the platform alone (GATEWAY_URL, GATEWAY_TOKEN name the gateway)
  worker             run an indexing worker alone, against the platform store (DATABASE_URL)
  replay <requestId> replay a failed request's stored upstream body against the gateway

Options:
  --data-dir <dir>   where embedded stores and secrets live (default ./data, env DATA_DIR)
  --port <port>      gateway port (default 3001, env GATEWAY_PORT)
  --platform-port <p> platform port (default 3000, env PORT)
  --gateway-url <u>  (replay) the gateway to use (default http://127.0.0.1:$GATEWAY_PORT)
  --token <t>        (replay) admin token or session (default env GATEWAY_ADMIN_TOKEN or INITIAL_ROOT_TOKEN)
  -h, --help         this text

Configuration is read from the environment: see README.md.`;

async function main(argv: string[]): Promise<number> {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      'data-dir': { type: 'string' },
      port: { type: 'string' },
      'platform-port': { type: 'string' },
      'gateway-url': { type: 'string' },
      token: { type: 'string' },
      help: { type: 'boolean', short: 'h' },
    },
  });
  const [command, ...rest] = positionals;
  if (values.help || !command) {
    console.log(USAGE);
    return command || values.help ? 0 : 1;
  }
  const env = { ...process.env };
  if (values['data-dir']) env.DATA_DIR = values['data-dir'];
  if (values.port) env.GATEWAY_PORT = values.port;
  if (values['platform-port']) env.PORT = values['platform-port'];

  switch (command) {
    case 'start':
    case 'gateway':
    case 'platform':
    case 'worker': {
      const run = { start: runEverything, gateway: runGateway, platform: runPlatform, worker: runWorker }[command];
      const running = await run(env);
      const stop = async (signal: string) => {
        console.log(`[kbchat] ${signal}: shutting down`);
        await running.close();
        process.exit(0);
      };
      process.once('SIGINT', () => void stop('SIGINT'));
      process.once('SIGTERM', () => void stop('SIGTERM'));
      return -1; // keep running
    }
    case 'replay':
      return replayCommand(rest[0], {
        gatewayUrl: values['gateway-url'] ?? `http://127.0.0.1:${env.GATEWAY_PORT || 3001}`,
        token: values.token ?? env.GATEWAY_ADMIN_TOKEN ?? env.INITIAL_ROOT_TOKEN,
      });
    default:
      console.error(`kbchat: unknown command "${command}"\n\n${USAGE}`);
      return 1;
  }
}

// A long-running service must not die of one request's stray promise: say what
// happened and keep serving (the request itself already got its error).
process.on('unhandledRejection', (err) => {
  console.error(`kbchat: unhandled rejection: ${(err as Error)?.stack ?? String(err)}`);
});

main(process.argv.slice(2)).then(
  (code) => {
    if (code >= 0) process.exit(code);
  },
  (err) => {
    console.error(`kbchat: ${(err as Error).message}`);
    process.exit(1);
  },
);
