// The platform as a library: start it (the CLI does), or embed it in tests.
import type { FastifyInstance } from 'fastify';
import type { PlatformConfig } from './config.js';
import { buildPlatformApp, createPlatformServices, type PlatformServices } from './platform.js';

export { loadPlatformConfig, type PlatformConfig } from './config.js';
export type { PlatformServices } from './platform.js';
export { PlatformError } from './http/errors.js';

export interface RunningPlatform {
  url: string;
  app: FastifyInstance;
  services: PlatformServices;
  close(): Promise<void>;
}

export async function startPlatform(config: PlatformConfig): Promise<RunningPlatform> {
  const services = await createPlatformServices(config);
  const app = buildPlatformApp(services);
  try {
    await app.listen({ host: config.host, port: config.port });
  } catch (err) {
    await services.close();
    throw err;
  }
  const port = (app.server.address() as { port: number }).port;
  const host = config.host === '0.0.0.0' || config.host === '::' ? '127.0.0.1' : config.host;
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

/** An indexing worker alone (`kbchat worker`): no HTTP, the same store and gateway. */
export async function startWorker(config: PlatformConfig): Promise<{ services: PlatformServices; close(): Promise<void> }> {
  const services = await createPlatformServices({ ...config, runWorker: true });
  return { services, close: () => services.close() };
}
