// The gateway as a library: start it (the CLI does), or embed it in tests.
import { listenService, type RunningService } from '@kbchat/server-kit';
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

/** Where it listens (url, listening), its app and services, and close(): the app, then the services. */
export type RunningGateway = RunningService<GatewayServices>;

export async function startGateway(config: GatewayConfig = loadGatewayConfig(), log: (msg: string) => void = console.error): Promise<RunningGateway> {
  const services = await createGatewayServices(config, log);
  const app = buildGatewayApp(services);
  return listenService(app, services, config);
}
