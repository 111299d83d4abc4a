// What is checked before a service creates anything (a store, the root user
// and its one-time password, a token file): that its ports can be had, that
// no other process has its embedded store open, and that config.json is
// valid. A start that fails after creating things would print a secret that
// nobody then uses, or none at all.
import { createServer } from 'node:net';
import { resolve } from 'node:path';
import { pgliteTarget } from '@kbchat/shared/pglite';
import { storeHolder, StoreInUseError } from '@kbchat/shared/store-lock';

export interface PortToCheck {
  /** Whose port, for the message: "the gateway's (GATEWAY_PORT, --gateway-port)". */
  whose: string;
  host: string;
  port: number;
}

/** Listens on the port for a moment. Port 0 (any free port) always passes. */
function tryPort({ whose, host, port }: PortToCheck): Promise<void> {
  if (port === 0) return Promise.resolve();
  return new Promise((resolvePort, reject) => {
    const server = createServer();
    server.once('error', (err: NodeJS.ErrnoException) => {
      const why =
        err.code === 'EADDRINUSE'
          ? 'is already in use (another kbchat, or another program): stop it, or choose another port'
          : err.code === 'EACCES'
            ? 'needs privileges this user does not have: choose a port above 1023'
            : err.code === 'EADDRNOTAVAIL' || err.code === 'ENOTFOUND'
              ? `cannot be had: ${host} is not an address of this machine`
              : `cannot be had: ${err.message}`;
      reject(new Error(`port ${port} on ${host}, ${whose}, ${why}`));
    });
    server.listen({ host, port, exclusive: true }, () => server.close(() => resolvePort()));
  });
}

export async function checkPorts(ports: PortToCheck[]): Promise<void> {
  const [a, b] = ports;
  if (a && b && a.port !== 0 && a.port === b.port) throw new Error(`${a.whose} and ${b.whose} are both ${a.port}: give them different ports`);
  for (const port of ports) await tryPort(port);
}

/**
 * The directory of an embedded store that a database URL leaves to the data
 * dir (or names with pglite:<dir>); undefined for a server or memory.
 */
export function embeddedStoreDir(url: string | undefined, dataDir: string, dirName: string): string | undefined {
  if (url && !url.startsWith('pglite:')) return undefined;
  const target = pgliteTarget(url, dataDir, dirName);
  return target === 'memory://' ? undefined : resolve(target);
}

/** Refuses, naming the holder, when another live process has one of these stores open. */
export function checkStoresFree(stores: (string | undefined)[]): void {
  for (const store of stores) {
    if (!store) continue;
    const holder = storeHolder(store);
    if (holder) throw new StoreInUseError(store, holder);
  }
}
