// The platform as a library: start it (the CLI does), or embed it in tests.
import type { AddressInfo } from 'node:net';
import type { FastifyInstance } from 'fastify';
import type { PlatformConfig } from './config.js';
import { buildPlatformApp, createPlatformServices, type PlatformServices } from './platform.js';

export { loadPlatformConfig, type PlatformConfig } from './config.js';
export type { PlatformServices } from './platform.js';
export { PlatformError } from './http/errors.js';
// The API's shapes and request schemas are @kbchat/contracts' (the web app reads them there).
export type * from '@kbchat/contracts/platform';
export { ConfigFileError, loadModelConfig, modelsMissingFromGateway, type LlmModel, type ModelConfig, type ProviderModels, type VectorModel } from './models/config-file.js';

export interface RunningPlatform {
  /** Where this machine reaches it: loopback when it listens on every interface. */
  url: string;
  /** The address it listens on, as bound: 0.0.0.0 or :: is every interface, reachable from the network. */
  listening: { address: string; port: number };
  app: FastifyInstance;
  services: PlatformServices;
  close(): Promise<void>;
}

export async function startPlatform(config: PlatformConfig, log?: (msg: string) => void): Promise<RunningPlatform> {
  const services = await createPlatformServices(config, log);
  const app = buildPlatformApp(services);
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

/** An indexing worker alone (`kbchat worker`): no HTTP, the same store and gateway. */
export async function startWorker(config: PlatformConfig): Promise<{ services: PlatformServices; close(): Promise<void> }> {
  const services = await createPlatformServices({ ...config, runWorker: true });
  return { services, close: () => services.close() };
}
