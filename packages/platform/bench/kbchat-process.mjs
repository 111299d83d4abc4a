// `kbchat start` as a user with no provider key runs it, for the benchmarks
// that measure the embedded default through its real front door: its own
// process on a data dir the caller owns, ready once the platform listens.
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createServer } from 'node:net';
import { join, resolve } from 'node:path';

export const REPO = resolve(new URL('../../..', import.meta.url).pathname);

export function freePort() {
  return new Promise((done) => {
    const server = createServer();
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => done(port));
    });
  });
}

/**
 * Starts `kbchat start` of the checkout at `repoDir` on `dataDir` with the
 * platform key `key` (INITIAL_API_KEY) and `env` on top of a plain
 * environment (no provider keys, ports or data dir of the caller's own).
 * Resolves to the platform's URL, the process's pid, output() (all it has
 * printed so far, stdout and stderr) and a stop() that ends the process.
 */
export async function startKbchat({ repoDir = REPO, dataDir, key, env = {} }) {
  const plain = Object.fromEntries(
    Object.entries(process.env).filter(
      ([k]) =>
        !k.endsWith('_API_KEY') &&
        !k.endsWith('_BASE_URL') &&
        !/^(HOST|GATEWAY_HOST|PORT|GATEWAY_PORT|CONFIG_PATH|DATA_DIR|ROOT_PASSWORD)$/.test(k) &&
        !k.startsWith('npm_'),
    ),
  );
  const args = ['start', '--data-dir', dataDir, '--port', String(await freePort()), '--gateway-port', String(await freePort())];
  // What `npx kbchat` runs: the launcher (it sets glibc's malloc threshold and
  // execs node, so the pid is node's), or node itself in checkouts before it.
  const launcher = join(repoDir, 'packages/cli/bin/kbchat');
  const [command, argv] = existsSync(launcher) ? [launcher, args] : [process.execPath, [join(repoDir, 'packages/cli/bin/kbchat.js'), ...args]];
  const child = spawn(command, argv, { cwd: repoDir, env: { ...plain, INITIAL_API_KEY: key, LOG_LEVEL: 'warn', ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  const url = await new Promise((done, fail) => {
    const timer = setTimeout(() => fail(new Error(`kbchat start not ready after 180 s:\n${out}`)), 180_000);
    const onData = (d) => {
      out += d;
      const m = /\[platform\] listening on \S+ \([^)]*API at (\S+)\/api\)/.exec(out);
      if (m) {
        clearTimeout(timer);
        done(m[1]);
      }
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', onData);
    child.once('exit', (code) => fail(new Error(`kbchat start exited with ${code}:\n${out}`)));
  });
  return {
    url,
    pid: child.pid,
    output: () => out,
    async stop() {
      child.removeAllListeners('exit');
      if (child.exitCode === null) await new Promise((done) => (child.once('exit', done), child.kill('SIGTERM')));
    },
  };
}
