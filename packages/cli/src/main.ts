// The `kbchat` command: start (everything, embedded), gateway, replay, help.
import { parseArgs } from 'node:util';
import { resolve } from 'node:path';
import { loadGatewayConfig, startGateway } from '@kbchat/gateway';
import { replayCommand } from './replay.js';

const USAGE = `kbchat <command> [options]

Commands:
  start              start everything there is (today: the model gateway) on the embedded store
  gateway            start the model gateway alone
  replay <requestId> replay a failed request's stored upstream body against the gateway

Options:
  --data-dir <dir>   where embedded stores and secrets live (default ./data, env DATA_DIR)
  --port <port>      gateway port (default 3001, env GATEWAY_PORT)
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

  switch (command) {
    case 'start':
    case 'gateway': {
      const config = loadGatewayConfig(env);
      config.dataDir = resolve(config.dataDir);
      const gw = await startGateway(config);
      for (const note of gw.services.startupNotes) console.log(`[gateway] ${note}`);
      console.log(`[gateway] store: ${gw.services.store.description}`);
      console.log(`[gateway] listening on ${gw.url} (OpenAI-compatible API at ${gw.url}/v1)`);
      const stop = async (signal: string) => {
        console.log(`[gateway] ${signal}: shutting down`);
        await gw.close();
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
