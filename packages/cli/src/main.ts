// The `kbchat` command: start (everything, embedded), gateway, platform,
// worker, replay, doctor; how a running service stops.
import { DOCTOR_USAGE, environmentFor, parseCommandLine, USAGE, UsageError, version } from './args.js';
import { doctorCommand, doctorOptions } from './doctor/index.js';
import { replayCommand } from './replay.js';
import { runEverything, runGateway, runPlatform, runWorker, type Running } from './services.js';
import { installMemoryDiag } from './memory-diag.js';

const parentAtStart = process.ppid;

/**
 * `npx kbchat start` runs kbchat under `sh -c` below npm, and npm 11 answers
 * SIGTERM by ending that shell, which does not pass the signal on: kbchat went
 * on serving, orphaned (`npx kbchat start & kill $!` left it under init).
 * Started by npm, kbchat stops cleanly when the process that started it is gone.
 */
function stopWithParent(stop: (why: string) => void): void {
  if (!process.env.npm_command && !process.env.npm_execpath) return;
  const parent = parentAtStart;
  const watch = setInterval(() => {
    if (process.ppid === parent) return;
    clearInterval(watch);
    stop(`the npm process that started kbchat (pid ${parent}) has gone`);
  }, 500);
  watch.unref();
}

/**
 * Stops cleanly on SIGINT / SIGTERM, from the moment the start begins (a
 * signal that came before the handlers would end the process mid-write): a
 * stop during the start waits for it, then closes. A second signal ends the
 * process at once.
 */
function stopCleanly(starting: Promise<Running>): void {
  let stopping = false;
  const stop = (why: string) => {
    if (stopping) return;
    stopping = true;
    console.log(`[kbchat] ${why}: shutting down`);
    starting.then(
      (running) =>
        running.close().then(
          () => process.exit(0),
          (err: Error) => {
            console.error(`kbchat: shutting down failed: ${err.message}`);
            process.exit(1);
          },
        ),
      () => {}, // a start that failed has said why, and main ends the process
    );
  };
  process.once('SIGINT', () => stop('SIGINT'));
  process.once('SIGTERM', () => stop('SIGTERM'));
  stopWithParent(stop);
}

async function main(argv: string[]): Promise<number> {
  const line = parseCommandLine(argv);
  if (line.options.version) {
    console.log(version());
    return 0;
  }
  if (line.options.help && line.command === 'doctor') {
    console.log(DOCTOR_USAGE);
    return 0;
  }
  if (line.options.help || !line.command) {
    console.log(USAGE);
    return line.command || line.options.help ? 0 : 1;
  }
  const env = environmentFor(line, process.env, (message) => console.warn(`kbchat: ${message}`));
  switch (line.command) {
    case 'start':
    case 'gateway':
    case 'platform':
    case 'worker': {
      installMemoryDiag(env);
      const run = { start: runEverything, gateway: runGateway, platform: runPlatform, worker: runWorker }[line.command];
      const starting = run(env);
      stopCleanly(starting);
      await starting;
      return -1; // keep running
    }
    case 'replay':
      return replayCommand(line.rest[0], {
        gatewayUrl: line.options['gateway-url'] ?? `http://127.0.0.1:${env.GATEWAY_PORT || 3001}`,
        token: line.options.token ?? env.GATEWAY_ADMIN_TOKEN ?? env.INITIAL_ROOT_TOKEN,
      });
    case 'doctor': {
      const { options } = line;
      const opts = doctorOptions(env, {
        token: options.token,
        platformKey: options['platform-key'],
        gatewayUrl: options['gateway-url'],
        platformUrl: options['platform-url'],
        compose: options.compose,
      });
      return doctorCommand(opts, { json: Boolean(options.json), colour: Boolean(process.stdout.isTTY) && !process.env.NO_COLOR });
    }
    default:
      throw new UsageError(`unknown command "${line.command}"`);
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
    console.error(err instanceof UsageError ? err.message : `kbchat: ${(err as Error).message}`);
    process.exit(err instanceof UsageError ? 2 : 1);
  },
);
