// The ports: free, or held by a running kbchat (it answers /healthz as
// kbchat does); held by anything else, the row names the remap to use. The
// kbchat of the data dir (its store locks say where it listens) is named, and
// a port given that is not its port says where it is.
import { createServer } from 'node:net';
import { fail, ok, warn, type Check } from './check.js';
import { request } from './http.js';
import type { DoctorOptions, Listener } from './options.js';

type PortState = 'free' | 'taken' | string;

function tryListen(host: string, port: number): Promise<PortState> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once('error', (err: NodeJS.ErrnoException) => resolve(err.code === 'EADDRINUSE' ? 'taken' : `cannot be had: ${err.code ?? err.message}`));
    server.listen({ host, port, exclusive: true }, () => server.close(() => resolve('free')));
  });
}

/** The next port above `port` that is free on `host` (within 100), for the remap. */
async function nextFree(host: string, port: number): Promise<number | undefined> {
  for (let p = port + 1; p <= Math.min(port + 100, 65535); p++) if ((await tryListen(host, p)) === 'free') return p;
  return undefined;
}

/** Whether what listens there is kbchat: its /healthz says { ok: true, store }. */
async function isKbchat(host: string, port: number): Promise<boolean> {
  const at = host === '0.0.0.0' || host === '::' ? '127.0.0.1' : host;
  try {
    const a = await request(`http://${at.includes(':') ? `[${at}]` : at}:${port}/healthz`, { timeoutMs: 2000 });
    return a.status === 200 && a.json?.ok === true && typeof a.json?.store === 'string';
  } catch {
    return false;
  }
}

interface PortRole {
  name: string;
  host: string;
  port: number;
  /** The remap, given the free port to use. */
  remap: (free: number) => string;
  /** Something other than kbchat may rightly hold it (compose's own database). */
  otherMayOwn?: string;
  /** The data dir's kbchat serving this: its process, and where its store lock says it listens. */
  listener?: Listener;
  /** How to give its port instead: `--port 3100`. */
  option?: (port: number) => string;
}

async function checkPort(role: PortRole): Promise<Check> {
  const state = await tryListen(role.host, role.port);
  const where = `${role.port} on ${role.host}`;
  const { listener } = role;
  if (listener && listener.at.port !== role.port && role.option) {
    // A port given by hand, while the data dir's kbchat listens elsewhere: the checks after this one look at the given port.
    const its = `the kbchat of this data dir (pid ${listener.holder.pid}) listens on ${listener.at.host}:${listener.at.port}`;
    return warn(
      role.name,
      `${where}: ${state === 'free' ? 'free' : 'taken'}; ${its}`,
      `to check that kbchat, leave the port out or give ${role.option(listener.at.port)}`,
    );
  }
  if (state === 'free') return ok(role.name, `${where}: free`);
  if (state !== 'taken') return fail(role.name, `${where} ${state}`, 'choose a port above 1023 that this machine has');
  if (!role.otherMayOwn && (await isKbchat(role.host, role.port))) {
    const which = listener ? `the running kbchat of this data dir (pid ${listener.holder.pid})` : 'a running kbchat';
    return ok(role.name, `${where}: held by ${which}`);
  }
  const free = await nextFree(role.host, role.port);
  const remedy = free ? role.remap(free) : `free port ${role.port}, or choose another`;
  if (role.otherMayOwn) return warn(role.name, `${where}: in use (${role.otherMayOwn}, or another program)`, `if it is another program: ${remedy}`);
  return fail(role.name, `${where}: taken by another program (not kbchat)`, remedy);
}

export async function portChecks(opts: DoctorOptions): Promise<Check[]> {
  const { platform, gateway } = opts.ports;
  const { running } = opts;
  const roles: PortRole[] = [
    {
      name: 'platform port',
      ...platform,
      remap: (p) => `kbchat start --port ${p} (or PORT=${p})${opts.compose ? `; with compose: PLATFORM_PORT=${p} docker compose up -d` : ''}`,
      listener: running.listeners.platform,
      option: (p) => `--port ${p}`,
    },
    {
      name: 'gateway port',
      ...gateway,
      remap: (p) => `kbchat start --gateway-port ${p} (or GATEWAY_PORT=${p})${opts.compose ? `; with compose: GATEWAY_PORT=${p} docker compose up -d` : ''}`,
      listener: running.listeners.gateway,
      option: (p) => `--gateway-port ${p}`,
    },
  ];
  if (opts.compose) {
    roles.push({
      name: 'mariadb port',
      host: '127.0.0.1',
      port: opts.ports.mariadb,
      remap: (p) => `MARIADB_PORT=${p} docker compose up -d`,
      otherMayOwn: "this compose's MariaDB",
    });
  }
  const checks: Check[] = [];
  for (const role of roles) checks.push(await checkPort(role));
  return checks;
}
