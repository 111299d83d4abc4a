// Starting a service: listen where it is configured to, say where this machine
// reaches it, and close the app and then its services. A failed listen (the
// port is taken) closes the services it would have served.
import type { AddressInfo } from 'node:net';
import type { FastifyInstance } from 'fastify';

export interface RunningService<S> {
  /** Where this machine reaches it: loopback when it listens on every interface. */
  url: string;
  /** The address it listens on, as bound: 0.0.0.0 or :: is every interface, reachable from the network. */
  listening: { address: string; port: number };
  app: FastifyInstance;
  services: S;
  close(): Promise<void>;
}

/** Listens on `host`:`port` (0: an ephemeral port) with the app built on `services`. */
export async function listenService<S extends { close(): Promise<void> }>(
  app: FastifyInstance,
  services: S,
  at: { host: string; port: number },
): Promise<RunningService<S>> {
  try {
    await app.listen({ host: at.host, port: at.port });
  } catch (err) {
    await services.close();
    throw err;
  }
  const { address, port } = app.server.address() as AddressInfo;
  return {
    url: `http://${reachableHost(address)}:${port}`,
    listening: { address, port },
    app,
    services,
    async close() {
      await app.close();
      await services.close();
    },
  };
}

/** The host of a URL to a bound address: loopback for every interface, IPv6 in brackets. */
export function reachableHost(address: string): string {
  return address === '0.0.0.0' || address === '::' ? '127.0.0.1' : address.includes(':') ? `[${address}]` : address;
}
