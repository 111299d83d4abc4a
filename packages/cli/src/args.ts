// The command line: options, usage, and messages a person can act on for a
// mistyped option or a missing value (Node's parseArgs words them for
// programmers: "Option '--port <value>' argument is ambiguous...").
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';

export const USAGE = `kbchat <command> [options]

Commands:
  start              start the model gateway and the platform in one process, on the embedded stores
  gateway            start the model gateway alone
  platform           start the platform alone (GATEWAY_URL, GATEWAY_TOKEN name the gateway)
  worker             run an indexing worker alone, against the platform store (DATABASE_URL)
  replay <requestId> replay a failed request's stored upstream body against the gateway
  doctor             check the stores, ports, services and every configured model (kbchat doctor --help)

Options:
  --data-dir <dir>       where embedded stores and secrets live (default ./data, env DATA_DIR)
  --port <port>          the platform's port (default 3000, env PORT); with \`gateway\`, the gateway's
  --gateway-port <port>  the gateway's port (default 3001, env GATEWAY_PORT)
  --platform-port <port> deprecated: the same as --port
  --gateway-url <url>    (replay) the gateway to use (default http://127.0.0.1:$GATEWAY_PORT)
  --token <token>        (replay, doctor) admin token or session (default env GATEWAY_ADMIN_TOKEN or INITIAL_ROOT_TOKEN)
  -v, --version          the version
  -h, --help             this text

\`kbchat start\` listens on 127.0.0.1 unless HOST (platform) or GATEWAY_HOST say otherwise;
\`kbchat gateway\` and \`kbchat platform\` listen on 0.0.0.0.
Configuration is read from the environment: see README.md.`;

export const DOCTOR_USAGE = `kbchat doctor [options]

Checks, in order, one row each: both stores reachable; the platform's and the
gateway's ports (free, or held by a running kbchat, the data dir's found by its
store locks; taken by another program: the remap to use); the gateway (its admin API) and the platform token's
models and balance; config.json (CONFIG_PATH, else the embedded default) and
its models the gateway does not serve; the platform and its key. Then every
configured model in config.json's order, stopping at its first failure:
  upstream         each enabled channel that lists it, tested by the gateway itself
                   (POST /api/channels/:id/test): the channel's key stays in the gateway
  gateway request  chat: a streamed completion with the platform's token and the model's
                   defaultConfig (a stream that ends empty or breaks is repeated with
                   stream=false, to show the exact error); vectors: embeddings, the
                   dimension, the norm; rerank: a rerank
  platform request chat: a throwaway application answers; vectors: a vector search in a
                   throwaway knowledge base (both deleted afterwards)
  tool call/result chat models with toolChoice or functionCall in config.json: a streamed
                   call with tools (tool_choice auto), then the answer from its result
Last, knowledge bases bound to a vector model config.json no longer has.

Options:
  --gateway-url <url>    the gateway (default GATEWAY_URL, else http://127.0.0.1:$GATEWAY_PORT,
                         else where the data dir's running kbchat listens, else port 3001)
  --platform-url <url>   the platform (default http://127.0.0.1:$PORT, else where the data
                         dir's running kbchat listens, else port 3000)
  --token <token>        a root or admin token of the gateway (default GATEWAY_ADMIN_TOKEN,
                         INITIAL_ROOT_TOKEN, else <data-dir>/platform-gateway-token)
  --platform-key <key>   a general key of the platform (default PLATFORM_API_KEY, INITIAL_API_KEY)
  --data-dir, --port, --gateway-port   as for kbchat start
  --compose              also check the ports compose.yaml publishes (MariaDB's: MARIADB_PORT)
  --json                 one JSON document: { ok, checks: [{ name, model?, status, detail, remedy? }] }

The platform's own token at the gateway is GATEWAY_TOKEN, INITIAL_ROOT_TOKEN, else the data
dir's token file. Colour only when stdout is a terminal and NO_COLOR is unset.
Exit status: 0 when nothing failed (warnings do not fail), 1 otherwise. See docs/operations.md.`;

const HINT = 'run `kbchat --help` for the commands and options';

const OPTIONS = {
  'data-dir': { type: 'string' },
  port: { type: 'string' },
  'gateway-port': { type: 'string' },
  'platform-port': { type: 'string' },
  'gateway-url': { type: 'string' },
  token: { type: 'string' },
  'platform-url': { type: 'string' },
  'platform-key': { type: 'string' },
  json: { type: 'boolean' },
  compose: { type: 'boolean' },
  version: { type: 'boolean', short: 'v' },
  help: { type: 'boolean', short: 'h' },
} as const;

/** A command line kbchat cannot run: one line saying why, then the hint. */
export class UsageError extends Error {
  constructor(problem: string) {
    super(`kbchat: ${problem}\n${HINT}`);
  }
}

export interface CommandLine {
  command?: string;
  rest: string[];
  options: { [K in keyof typeof OPTIONS]?: (typeof OPTIONS)[K]['type'] extends 'string' ? string : boolean };
}

/** The option the user most likely meant: at most two letters away. */
function closest(typed: string): string | undefined {
  const distance = (a: string, b: string) => {
    let row = Array.from({ length: b.length + 1 }, (_, i) => i);
    for (let i = 1; i <= a.length; i++) {
      const next = [i];
      for (let j = 1; j <= b.length; j++) next[j] = Math.min(row[j]! + 1, next[j - 1]! + 1, row[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1));
      row = next;
    }
    return row[b.length]!;
  };
  const ranked = Object.keys(OPTIONS).map((name) => ({ name, d: distance(typed.replace(/^-+/, ''), name) }));
  ranked.sort((a, b) => a.d - b.d);
  return ranked[0] && ranked[0].d <= 2 ? `--${ranked[0].name}` : undefined;
}

/** The option a parseArgs message is about: "'--port <value>'" or "'-h, --help'" give --port and --help. */
function optionIn(message: string): string {
  return /'(?:-\w, )?(-[^' ]+)/.exec(message)?.[1] ?? message;
}

export function parseCommandLine(argv: string[]): CommandLine {
  let parsed;
  try {
    parsed = parseArgs({ args: argv, allowPositionals: true, strict: true, options: OPTIONS });
  } catch (err) {
    const { code, message } = err as { code?: string; message: string };
    const option = optionIn(message);
    if (code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION') {
      const guess = closest(option);
      throw new UsageError(`unknown option ${option}${guess ? ` (did you mean ${guess}?)` : ''}`);
    }
    if (code === 'ERR_PARSE_ARGS_INVALID_OPTION_VALUE') {
      throw new UsageError(/does not take an argument/.test(message) ? `${option} takes no value` : `${option} needs a value`);
    }
    throw new UsageError(message);
  }
  const { values, positionals } = parsed;
  for (const name of ['port', 'gateway-port', 'platform-port'] as const) {
    const raw = values[name];
    if (raw !== undefined && !(/^\d+$/.test(raw) && Number(raw) <= 65535))
      throw new UsageError(`--${name} must be a port number from 0 to 65535 (got "${raw}")`);
  }
  const [command, ...rest] = positionals;
  return { command, rest, options: values };
}

/** The environment a command runs with: the options put where the services read them. */
export function environmentFor(line: CommandLine, env: NodeJS.ProcessEnv, warn: (message: string) => void): Record<string, string | undefined> {
  const out: Record<string, string | undefined> = { ...env };
  const { options } = line;
  if (options['data-dir']) out.DATA_DIR = options['data-dir'];
  if (options['platform-port']) {
    warn("--platform-port is deprecated: use --port (the platform's port) instead");
    out.PORT = options['platform-port'];
  }
  // --port is the port of the service people talk to: the platform's, or with `kbchat gateway` the gateway's.
  if (options.port) out[line.command === 'gateway' ? 'GATEWAY_PORT' : 'PORT'] = options.port;
  if (options['gateway-port']) out.GATEWAY_PORT = options['gateway-port'];
  return out;
}

export function version(): string {
  const pkg = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string };
  return pkg.version;
}
