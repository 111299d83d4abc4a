// The platform as a library: start it (the CLI does), or embed it in tests.
import { listenService, type RunningService } from '@kbchat/server-kit';
import type { PlatformConfig } from './config.js';
import { buildPlatformApp, createPlatformServices, type PlatformServices } from './platform.js';

export { loadPlatformConfig, type PlatformConfig } from './config.js';
export type { PlatformServices } from './platform.js';
export { PlatformError } from './http/errors.js';
// Shapes the web app reads (packages/web imports these types; nothing is copied).
export type { PublicUser } from './accounts/service.js';
export type PublicDataset = ReturnType<typeof import('./datasets/routes.js').publicDataset>;
export type PublicCollection = ReturnType<typeof import('./datasets/routes.js').publicCollection>;
export type PublicData = ReturnType<typeof import('./datasets/routes.js').publicData>;
export type PublicApp = ReturnType<typeof import('./apps/routes.js').publicApp>;
export type PublicKey = ReturnType<typeof import('./keys/routes.js').publicKey>;
export type { AppSettings, AppCategory, AppExtractField } from './apps/schema.js';
/** The default quote texts as literal types: the web app's copies must equal them to compile. */
export type DefaultQuoteTemplate = typeof import('./chat/prompt.js').DEFAULT_QUOTE_TEMPLATE;
export type DefaultQuotePrompt = typeof import('./chat/prompt.js').DEFAULT_QUOTE_PROMPT;
export type { CollectionProgress, DatasetProgress } from './indexing/progress.js';
export type { IndexingReason } from './indexing/errors.js';
export type PublicTrainingError = ReturnType<typeof import('./search/routes.js').publicTrainingError>;
export type { StepRecord, TokenUsage } from './chat/records.js';
export type { ModelList, ModelStatus, ModelKind } from './models/routes.js';
export type { SearchOutcome } from './search/service.js';
export type { DroppedItem, DropReason } from './retrieval/index.js';
export type { ModelCall } from './gateway-client/index.js';
export type { GatewayCall, GatewayCalls } from './chat/model-calls.js';
export type PublicOutLink = ReturnType<typeof import('./share/routes.js').publicOutLink>;
export type { ShareInit } from './share/routes.js';
export type PublicRetrievalCheck = ReturnType<typeof import('./retrieval-checks/routes.js').publicCheck>;
export type { Expectation as CheckExpectation, CheckSettings, CheckResult, ExpectationResult } from './retrieval-checks/evaluate.js';
export type { Run as CheckRun, Chunking as CheckChunking } from './retrieval-checks/store.js';
export type { RunDiff, CheckDiff, CheckChange, RankChange } from './retrieval-checks/diff.js';
export type { UnfinishedUpload, UploadCheck, UploadEstimate, UploadImported } from './uploads/routes.js';
export type PublicChatLog = ReturnType<typeof import('./chat/log-routes.js').publicChatLog>;
export type { ChatSource } from './chat/history-store.js';
export type PublicChatHistory = ReturnType<typeof import('./chat/history-routes.js').publicHistory>;
export type PublicChatItem = ReturnType<typeof import('./chat/history-routes.js').publicItem>;
export { ConfigFileError, loadModelConfig, modelsMissingFromGateway, type LlmModel, type ModelConfig, type ProviderModels, type VectorModel } from './models/config-file.js';

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
