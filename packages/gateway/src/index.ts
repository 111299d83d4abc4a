// The gateway as a library: start it (the CLI does), or embed it in tests.
import type { FastifyInstance } from 'fastify';
import { loadGatewayConfig, type GatewayConfig } from './config.js';
import { createGatewayServices, type GatewayServices } from './gateway.js';
import { buildGatewayApp } from './server.js';

export { loadGatewayConfig, type GatewayConfig } from './config.js';
export type { GatewayServices } from './gateway.js';
export { GatewayError, errors } from './errors.js';
export { openStore, type Store, type StoreKind } from './store/db.js';

export interface RunningGateway {
  url: string;
  app: FastifyInstance;
  services: GatewayServices;
  close(): Promise<void>;
}

export async function startGateway(config: GatewayConfig = loadGatewayConfig(), log: (msg: string) => void = console.error): Promise<RunningGateway> {
  const services = await createGatewayServices(config, log);
  const app = buildGatewayApp(services);
  let address: string;
  try {
    address = await app.listen({ host: config.host, port: config.port });
  } catch (err) {
    await services.close();
    throw err;
  }
  const port = (app.server.address() as { port: number }).port;
  const host = config.host === '0.0.0.0' || config.host === '::' ? '127.0.0.1' : config.host;
  void address;
  return {
    url: `http://${host}:${port}`,
    app,
    services,
    async close() {
      await app.close();
      await services.close();
    },
  };
}
