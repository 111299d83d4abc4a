// The gateway as a library: start it (the CLI does), or embed it in tests.
import type { AddressInfo } from 'node:net';
import type { FastifyInstance } from 'fastify';
import { loadGatewayConfig, type GatewayConfig } from './config.js';
import { createGatewayServices, type GatewayServices } from './gateway.js';
import { buildGatewayApp } from './server.js';

export { loadGatewayConfig, type GatewayConfig } from './config.js';
export type { GatewayServices } from './gateway.js';
export type { PublicUser, PublicToken } from './accounts/service.js';
// The console's logs page.
export type { LogPage, PublicLog, PublicLogDetail } from './admin/logs.js';
export type { ReplayResult } from './logs/replay.js';
// The console's dashboard and prices pages.
export type { DashboardAnswer, Point as DashboardPoint, Group as DashboardGroup, TopUser, DisabledChannels } from './logs/dashboard.js';
export type { Dimension as DashboardDimension } from './logs/rollup.js';
export type { PricesAnswer, PublicPrice, UnpricedModel } from './admin/prices.js';
// The console's channels page.
export type { ChannelInput, ChannelPage, PublicChannel, PublicDisabledModel, PublicModelTest } from './channels/service.js';
export type { ChannelModelTestResult, ModelTestResult, RetestResult, TestAllResult } from './channels/testing.js';
export type { ChannelFailure } from './channels/health.js';
export type { ChannelProviders } from './admin/channels.js';
export { GatewayError, errors } from './errors.js';
export { openStore, type Store, type StoreKind } from './store/db.js';
export { endpointOfModel } from './providers/index.js';

export interface RunningGateway {
  /** Where this machine reaches it: loopback when it listens on every interface. */
  url: string;
  /** The address it listens on, as bound: 0.0.0.0 or :: is every interface, reachable from the network. */
  listening: { address: string; port: number };
  app: FastifyInstance;
  services: GatewayServices;
  close(): Promise<void>;
}

export async function startGateway(config: GatewayConfig = loadGatewayConfig(), log: (msg: string) => void = console.error): Promise<RunningGateway> {
  const services = await createGatewayServices(config, log);
  const app = buildGatewayApp(services);
  try {
    await app.listen({ host: config.host, port: config.port });
  } catch (err) {
    await services.close();
    throw err;
  }
  const { address, port } = app.server.address() as AddressInfo;
  const host = address === '0.0.0.0' || address === '::' ? '127.0.0.1' : address.includes(':') ? `[${address}]` : address;
  return {
    url: `http://${host}:${port}`,
    listening: { address, port },
    app,
    services,
    async close() {
      await app.close();
      await services.close();
    },
  };
}
