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
/** The default quote texts as literal types: the web app's copies must equal them to compile. */
export type DefaultQuoteTemplate = typeof import('./chat/prompt.js').DEFAULT_QUOTE_TEMPLATE;
export type DefaultQuotePrompt = typeof import('./chat/prompt.js').DEFAULT_QUOTE_PROMPT;
export type { StepRecord, TokenUsage } from './chat/records.js';
export type { ModelList, ModelStatus, ModelKind } from './models/routes.js';
export type { GatewayCall, GatewayCalls } from './chat/model-calls.js';
export type PublicRetrievalCheck = ReturnType<typeof import('./retrieval-checks/routes.js').publicCheck>;
export type { Expectation as CheckExpectation, CheckSettings, CheckResult, ExpectationResult } from './retrieval-checks/evaluate.js';
export type { Run as CheckRun, Chunking as CheckChunking } from './retrieval-checks/store.js';
export type { RunDiff, CheckDiff, CheckChange, RankChange } from './retrieval-checks/diff.js';
export type PublicChatLog = ReturnType<typeof import('./chat/log-routes.js').publicChatLog>;
export type { ChatSource } from './chat/history-store.js';
export type PublicChatHistory = ReturnType<typeof import('./chat/history-routes.js').publicHistory>;
export type PublicChatItem = ReturnType<typeof import('./chat/history-routes.js').publicItem>;
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
