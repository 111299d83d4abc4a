// The platform as a library: start it (the CLI does), or embed it in tests.
import { listenService, type RunningService } from '@kbchat/server-kit';
import type { PlatformConfig } from './config.js';
import { buildPlatformApp, createPlatformServices, type PlatformServices } from './platform.js';

export { loadPlatformConfig, type PlatformConfig } from './config.js';
export type { PlatformServices } from './platform.js';
export { PlatformError } from './http/errors.js';
// The API's shapes and request schemas are @kbchat/contracts' (the web app reads them there).
export type * from '@kbchat/contracts/platform';
export {
  ConfigFileError,
  loadModelConfig,
  modelsMissingFromGateway,
  type LlmModel,
  type ModelConfig,
  type ProviderModels,
  type VectorModel,
} from './models/config-file.js';

/** Where it listens (url, listening), its app and services, and close(): the app, then the services. */
export type RunningPlatform = RunningService<PlatformServices>;

export async function startPlatform(config: PlatformConfig, log?: (msg: string) => void): Promise<RunningPlatform> {
  const services = await createPlatformServices(config, log);
  const app = buildPlatformApp(services);
  return listenService(app, services, config);
}

/** An indexing worker alone (`kbchat worker`): no HTTP, the same store and gateway. */
export async function startWorker(config: PlatformConfig): Promise<{ services: PlatformServices; close(): Promise<void> }> {
  const services = await createPlatformServices({ ...config, runWorker: true });
  return { services, close: () => services.close() };
}
