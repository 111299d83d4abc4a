// The kbchat command as users run it, in real processes.
import { spawn, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:net';
import { join } from 'node:path';

export const CLI = join(import.meta.dirname, '../bin/kbchat.js');
export const REPO = join(import.meta.dirname, '../../..');

/** The environment of a user with no provider configured: no <PROVIDER>_API_KEY, no HOST, no npm. */
export function plainEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const kept = Object.entries(process.env).filter(
    ([k]) =>
      !k.endsWith('_API_KEY') && !k.endsWith('_BASE_URL') && !/^(HOST|GATEWAY_HOST|PORT|GATEWAY_PORT|CONFIG_PATH|DATA_DIR)$/.test(k) && !k.startsWith('npm_'),
  );
  return { ...Object.fromEntries(kept), LOG_LEVEL: 'warn', ...extra };
}

/**
 * Each vitest worker hands out ports from its own range (VITEST_POOL_ID), below
 * the OS's ephemeral ports (32768 and up) that listen(0) and outgoing
 * connections take: two files running side by side can then never both find
 * one port free between the check here and the bind of the process given it.
 */
const RANGE = 2000;
const rangeStart = 20_000 + (Number(process.env.VITEST_POOL_ID ?? 0) % 6) * RANGE;
let nextPort = rangeStart + Math.floor(Math.random() * RANGE);

function isFree(port: number): Promise<boolean> {
  const server = createServer();
  return new Promise((resolve) => {
    server.once('error', () => resolve(false));
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
  });
}

/** Two ports free right now, from this worker's own range. */
export async function freePorts(): Promise<[number, number]> {
  const ports: number[] = [];
  while (ports.length < 2) {
    const port = nextPort;
    nextPort = nextPort + 1 < rangeStart + RANGE ? nextPort + 1 : rangeStart;
    if (await isFree(port)) ports.push(port);
  }
  return [ports[0]!, ports[1]!];
}

export interface Started {
  child: ChildProcess;
  out: () => string;
}

/** Spawns `command args…` and resolves once the output matches `ready` (rejects if it exits first). */
export function startUntil(
  command: string,
  args: string[],
  env: NodeJS.ProcessEnv,
  ready: RegExp = /\[platform\] listening on/,
  timeoutMs = 120_000,
): Promise<Started> {
  const child = spawn(command, args, { env, cwd: REPO, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`not ready:\n${out}`)), timeoutMs);
    const onData = (d: Buffer) => {
      out += d;
      if (ready.test(out)) {
        clearTimeout(timer);
        resolve({ child, out: () => out });
      }
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', onData);
    child.on('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`exited with ${code}:\n${out}`));
    });
  });
}

export function startKbchat(args: string[], env: NodeJS.ProcessEnv): Promise<Started> {
  return startUntil(process.execPath, [CLI, ...args], env);
}

/** Runs kbchat to its end: exit code and everything it printed. */
export function runKbchat(args: string[], env: NodeJS.ProcessEnv, timeoutMs = 60_000): Promise<{ code: number | null; out: string; ms: number }> {
  const began = Date.now();
  const child = spawn(process.execPath, [CLI, ...args], { env, cwd: REPO, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout.on('data', (d: Buffer) => (out += d));
  child.stderr.on('data', (d: Buffer) => (out += d));
  const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
  return new Promise((resolve) =>
    child.on('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, out, ms: Date.now() - began });
    }),
  );
}

/** SIGTERM, then the exit code. */
export function stop(child: ChildProcess): Promise<number | null> {
  return new Promise((resolve) => {
    child.removeAllListeners('exit');
    if (child.exitCode !== null) return resolve(child.exitCode);
    child.on('exit', (code) => resolve(code));
    child.kill('SIGTERM');
  });
}

export function exited(child: ChildProcess): Promise<number | null> {
  child.removeAllListeners('exit');
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve(child.exitCode);
  return new Promise((resolve) => child.once('exit', (code) => resolve(code)));
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export interface Service extends Started {
  /** The API's origin (http://127.0.0.1:<port>); none for a worker. */
  url?: string;
}

const READY: Record<'gateway' | 'platform' | 'worker', RegExp> = {
  gateway: /\[gateway\] listening on \S+ \([^)]*API at (\S+)\/v1\)/,
  platform: /\[platform\] listening on \S+ \([^)]*API at (\S+)\/api\)/,
  worker: /\[worker\] indexing: waiting for work/,
};

/**
 * `kbchat gateway|platform|worker` as its own OS process, on a free port of
 * 127.0.0.1 (GATEWAY_HOST / HOST are set so), resolved once it is ready.
 * `env` is the whole environment (see plainEnv).
 */
export async function startService(command: keyof typeof READY, env: NodeJS.ProcessEnv): Promise<Service> {
  const [port] = await freePorts();
  const args = command === 'worker' ? [command] : [command, '--port', String(port)];
  const s = await startUntil(process.execPath, [CLI, ...args], { ...env, HOST: '127.0.0.1', GATEWAY_HOST: '127.0.0.1' }, READY[command], 60_000);
  return { ...s, url: READY[command].exec(s.out())?.[1] };
}
