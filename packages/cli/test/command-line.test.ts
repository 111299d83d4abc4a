// The command line as people type it: --version, a mistyped option or a
// missing value (one line and the hint, not Node's parser message), what
// --port means for each command, a stop that comes during the start.
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { CLI, exited, freePorts, plainEnv, runKbchat, sleep, startUntil, stop } from './helpers.js';

const HINT = 'run `kbchat --help` for the commands and options';
let running: ChildProcess | undefined;
afterEach(() => running?.kill('SIGKILL'));

describe('kbchat command line', () => {
  it('--version prints the version', async () => {
    const { version } = JSON.parse(readFileSync(join(import.meta.dirname, '../package.json'), 'utf8')) as { version: string };
    for (const flag of ['--version', '-v']) {
      const run = await runKbchat([flag], plainEnv());
      expect(run).toMatchObject({ code: 0, out: `${version}\n` });
    }
  });

  it('a mistyped option or a missing value gets one clear line and the hint', async () => {
    const cases: [string[], string][] = [
      [['start', '--prot', '3000'], 'kbchat: unknown option --prot (did you mean --port?)'],
      [['start', '--data-dri', 'x'], 'kbchat: unknown option --data-dri (did you mean --data-dir?)'],
      [['start', '--port'], 'kbchat: --port needs a value'],
      [['start', '--gateway-port', '--data-dir', 'x'], 'kbchat: --gateway-port needs a value'],
      [['start', '--help=yes'], 'kbchat: --help takes no value'],
      [['start', '--port', 'eighty'], 'kbchat: --port must be a port number from 0 to 65535 (got "eighty")'],
      [['strat'], 'kbchat: unknown command "strat"'],
    ];
    for (const [args, line] of cases) {
      const run = await runKbchat(args, plainEnv());
      expect(run.code, args.join(' ')).toBe(2);
      expect(run.out).toBe(`${line}\n${HINT}\n`);
    }
  });

  it("--platform-port still sets the platform's port, with a note that it is deprecated", async () => {
    const [gatewayPort, platformPort] = await freePorts();
    const taken = createServer();
    await new Promise<void>((resolve) => taken.listen(platformPort, '127.0.0.1', resolve));
    try {
      const dataDir = mkdtempSync(join(tmpdir(), 'kbchat-alias-'));
      const run = await runKbchat(['start', '--data-dir', dataDir, '--gateway-port', String(gatewayPort), '--platform-port', String(platformPort)], plainEnv());
      expect(run.out).toContain("kbchat: --platform-port is deprecated: use --port (the platform's port) instead");
      expect(run.out).toContain(`port ${platformPort} on 127.0.0.1, the platform's port (PORT, --port), is already in use`);
    } finally {
      taken.close();
    }
  });

  it('SIGTERM in the middle of the start still ends in a clean stop (stores closed, locks gone)', async () => {
    const [port] = await freePorts();
    const dataDir = mkdtempSync(join(tmpdir(), 'kbchat-early-stop-'));
    const child = spawn(process.execPath, [CLI, 'gateway', '--data-dir', dataDir, '--port', String(port)], {
      env: plainEnv({ LOCAL_MODELS: 'off' }),
      stdio: 'ignore',
    });
    running = child;
    const lock = join(dataDir, 'gateway-db.lock');
    while (!existsSync(lock)) await sleep(5);
    child.kill('SIGTERM');
    expect(await exited(child)).toBe(0);
    expect(existsSync(lock)).toBe(false);
    running = undefined;
  }, 60_000);

  it('kbchat gateway alone: --port is its port, and it says plainly that it listens on every interface', async () => {
    const [port] = await freePorts();
    const dataDir = mkdtempSync(join(tmpdir(), 'kbchat-gateway-alone-'));
    const s = await startUntil(
      process.execPath,
      [CLI, 'gateway', '--data-dir', dataDir, '--port', String(port)],
      plainEnv({ LOCAL_MODELS: 'off' }),
      /\[gateway\] listening on/,
    );
    running = s.child;
    expect(s.out()).toContain(
      `[gateway] listening on http://0.0.0.0:${port}: every network interface, reachable from other machines (GATEWAY_HOST=127.0.0.1 keeps it to this one); on this machine: http://127.0.0.1:${port}/v1; console at http://127.0.0.1:${port}/`,
    );
    expect(s.out()).toMatch(/root user created; password \(shown once\)/);
    expect(await stop(s.child)).toBe(0);
    running = undefined;
  }, 60_000);
});
