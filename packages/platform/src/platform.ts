// Builds the platform's services from its configuration, in dependency order,
// and takes them down in reverse. The HTTP layer only sees this.
import cookie from '@fastify/cookie';
import multipart from '@fastify/multipart';
import { loadTokenizer } from '@kbchat/shared';
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { accountMigrations } from './accounts/migration.js';
import { RequestAuth } from './accounts/request-auth.js';
import { accountsPlugin } from './accounts/routes.js';
import { AccountsService } from './accounts/service.js';
import { UsersStore } from './accounts/store.js';
import { AnnotationMatcher } from './annotations/matcher.js';
import { annotationMigrations } from './annotations/migration.js';
import { annotationsPlugin } from './annotations/routes.js';
import { AnnotationsService } from './annotations/service.js';
import { AnnotationsStore } from './annotations/store.js';
import { toolMigrations } from './tools/migration.js';
import { toolSourcesPlugin } from './tools/routes.js';
import { SecretBox } from './tools/secret-box.js';
import { ToolSources } from './tools/service.js';
import { ToolSourcesStore } from './tools/store.js';
import { appMigrations } from './apps/migration.js';
import { appsPlugin } from './apps/routes.js';
import { AppsService } from './apps/service.js';
import { AppsStore } from './apps/store.js';
import { AnswerCosts } from './chat/answer-costs.js';
import { RunningAnswers } from './chat/answer-recorder.js';
import { ChatHistoryStore } from './chat/history-store.js';
import { chatHistoryPlugin } from './chat/history-routes.js';
import { chatLogsPlugin } from './chat-log/routes.js';
import { ChatLogService } from './chat-log/service.js';
import { ChatLogStore } from './chat-log/store.js';
import { modelCallsPlugin } from './chat/trace-routes.js';
import { ChatService } from './chat/pipeline.js';
import { chatPlugin } from './chat/routes.js';
import { mcpServerPlugin } from './mcp-server/routes.js';
import { AppMcpService } from './mcp-server/service.js';
import { datasetMigrations } from './datasets/migration.js';
import { datasetsPlugin } from './datasets/routes.js';
import { DatasetsService } from './datasets/service.js';
import { LinkSyncTimer } from './datasets/link-sync.js';
import { CustomFileReader } from './ingest/index.js';
import type { IndexingHooks } from './datasets/types.js';
import { DatasetsStore } from './datasets/store.js';
import { decorateCaller } from './http/caller.js';
import { zodValidatorCompiler } from './http/validate.js';
import { embedScriptRoute } from './http/embed-script.js';
import { publicFileRoutes } from './http/public-files.js';
import { platformWebApp } from './http/web-app.js';
import { buildHttpApp } from './http/server.js';
import { platformApiDocs } from './http/openapi.js';
import { ensureRootTeam, KeyAuthenticator } from './keys/auth.js';
import { keysPlugin } from './keys/routes.js';
import { KeysService } from './keys/service.js';
import { KeysStore } from './keys/store.js';
import type { PlatformConfig } from './config.js';
import { GatewayClient } from './gateway-client/index.js';
import { enqueue, enqueueStatement, IndexingEstimates, indexingMigrations, progress, queueDepth, sumProgress, type IndexingWorker } from './indexing/index.js';
import { createIndexingWorker } from './indexing/wiring.js';
import { modelsPlugin } from './models/routes.js';
import { shareMigrations } from './share/migration.js';
import { chatMigrations } from './chat/migration.js';
import { sharePlugin } from './share/routes.js';
import { ShareService } from './share/service.js';
import { OutLinksStore } from './share/store.js';
import { ConfigFileError, loadModelConfig, modelsMissingFromGateway, type ModelConfig } from './models/config-file.js';
import { retrievalMigrations, vacuumSearchTables } from './retrieval/index.js';
import { searchPlugin } from './search/routes.js';
import { SearchService } from './search/service.js';
import { retrievalCheckMigrations } from './retrieval-checks/migration.js';
import { retrievalChecksPlugin } from './retrieval-checks/routes.js';
import { RetrievalChecksService } from './retrieval-checks/service.js';
import { ChecksStore } from './retrieval-checks/store.js';
import { PlatformMetrics } from './metrics/index.js';
import { metricsRoutes } from './metrics/routes.js';
import { openPlatformStore, type PlatformStore } from './store/db.js';
import { pendingMigrations } from './store/migrations.js';
import { createUploads, uploadMigrations, uploadsPlugin, type Uploads } from './uploads/index.js';

/** Every module's migrations, run after the store's own (and checked by /readyz). */
const MODULE_MIGRATIONS = {
  ...retrievalMigrations,
  ...indexingMigrations,
  ...appMigrations,
  ...accountMigrations,
  ...shareMigrations,
  ...chatMigrations,
  ...retrievalCheckMigrations,
  ...uploadMigrations,
  ...datasetMigrations,
  ...annotationMigrations,
  ...toolMigrations,
};

export interface PlatformServices {
  config: PlatformConfig;
  models: ModelConfig;
  store: PlatformStore;
  keys: KeysStore;
  auth: KeyAuthenticator;
  /** An API key or a signed-in session. */
  requestAuth: RequestAuth;
  accounts: AccountsService;
  datasets: DatasetsService;
  uploads: Uploads;
  search: SearchService;
  apps: AppsService;
  keyService: KeysService;
  chat: ChatService;
  chatHistory: ChatHistoryStore;
  chatLog: ChatLogService;
  annotations: AnnotationsService;
  answerCosts: AnswerCosts;
  /** The stored chats' answers this process is making. */
  runningAnswers: RunningAnswers;
  share: ShareService;
  /** The team's tool sources, and the ToolRunner the chat calls their tools through. */
  tools: ToolSources;
  checks: RetrievalChecksService;
  gateway: GatewayClient;
  worker?: IndexingWorker;
  metrics: PlatformMetrics;
  rootTeamId: string;
  startupNotes: string[];
  close(): Promise<void>;
}

/**
 * Every model config.json names must be served by the gateway. A gateway that
 * cannot be reached yet (started after the platform) is a note, not a failure;
 * a gateway that answers without a configured model stops the start, naming it.
 */
async function checkModels(gateway: GatewayClient, models: ModelConfig): Promise<string[]> {
  const required = models.llmModels.length + models.vectorModels.length + models.reRankModels.length;
  let missing: string[];
  try {
    missing = modelsMissingFromGateway(models, new Set(await gateway.models()));
  } catch (err) {
    return [`models not checked: the gateway did not answer (${(err as Error).message})`];
  }
  if (missing.length)
    throw new ConfigFileError(
      `config.json names models the gateway at ${gateway.url} does not serve: ${missing.join(', ')} (add a channel for them, or remove them from config.json)`,
    );
  return [`all ${required} configured models are served by the gateway`];
}

export async function createPlatformServices(config: PlatformConfig, log: (msg: string) => void = console.error): Promise<PlatformServices> {
  const models = loadModelConfig(config.configPath, config.embeddedModels);
  // Exact counts from the first request: questions are cut and checked against model limits in tokens.
  const tokenizer = loadTokenizer();
  const gateway = new GatewayClient({ url: config.gatewayUrl, token: config.gatewayToken });
  const notes = await checkModels(gateway, models);
  const store = await openPlatformStore({ url: config.databaseUrl, dataDir: config.dataDir, migrations: MODULE_MIGRATIONS });
  const metrics = new PlatformMetrics(() => queueDepth(store.db));
  const keys = new KeysStore(store.db);
  const root = await ensureRootTeam(keys, config.initialApiKey);
  const auth = new KeyAuthenticator(keys);
  const accounts = new AccountsService(new UsersStore(store.db));
  const rootUser = await accounts.ensureRoot(root.teamId, config.rootPassword, config.rootPasswordGenerated);
  // Shown now, not with the notes printed after the listen: a later step can still fail, and the password is never shown again.
  if (rootUser.generatedPassword) log(`kbchat platform: root user created; password (shown once): ${rootUser.generatedPassword}`);
  else if (rootUser.created) root.notes.push('root user created (password from ROOT_PASSWORD)');
  const requestAuth = new RequestAuth(auth, accounts);
  const onError = (err: unknown) => console.error(`kbchat platform: indexing: ${(err as Error)?.message ?? err}`);
  const datasetsStore = new DatasetsStore(store.db);
  // On the embedded store this worker is the only one: leases a dead process held can be given back at start.
  const worker = config.runWorker
    ? createIndexingWorker(store.db, datasetsStore, gateway, models, onError, {
        embeddedStore: store.kind === 'pglite',
        metrics,
        retryBaseMs: config.indexRetryBaseMs,
      })
    : undefined;
  const indexing: IndexingHooks = {
    async enqueue(tx, items) {
      await enqueue(tx, items);
      // New work: the worker looks at once instead of at its next poll (after the commit).
      setImmediate(() => worker?.wake());
    },
    enqueueStatement: (items) => enqueueStatement(items),
    enqueued: () => setImmediate(() => worker?.wake()),
    async progress(datasetId, collectionIds) {
      const list = await progress(store.db, { datasetId, collectionIds });
      return new Map(list.map((p) => [p.collectionId, { waiting: p.queued + p.indexing, failed: p.failed }]));
    },
  };
  const datasets = new DatasetsService(
    datasetsStore,
    models,
    indexing,
    {
      batchRows: config.collectionBatchRows,
      vacuumAfterRows: config.collectionBatchRows,
      embeddedStore: store.kind === 'pglite',
      vacuumSearchTables: () => vacuumSearchTables(store.db),
      onError: (err) => console.error(`kbchat platform: collections: ${(err as Error)?.message ?? err}`),
    },
    { customReader: config.customReadFile && new CustomFileReader(config.customReadFile), ocrLanguages: config.ocrLanguages },
  );
  // Deletes (and imports) a stopped process left unfinished are finished now.
  datasets.jobs.start();
  const linkSync = new LinkSyncTimer({
    store: datasets.syncStore,
    sync: (c) => datasets.syncLinkCollection(c, config.linkAllowPrivate),
    checkMs: config.linkSyncCheckMs,
    onError: (err, c) => console.error(`kbchat platform: link sync${c ? ` of collection ${c.id}` : ''}: ${(err as Error)?.message ?? err}`),
  });
  linkSync.start();
  // An estimate with nothing measured yet times one embeddings call of the file's chunks (marked bulk, as indexing's are).
  const estimates = new IndexingEstimates(
    store.db,
    models.vectorModels.length ? (model, texts) => gateway.embeddings(model, texts, { priority: 'bulk' }) : undefined,
  );
  const uploads = createUploads(store.db, datasets, config.dataDir, (err) => console.error(`kbchat platform: uploads: ${(err as Error)?.message ?? err}`), {
    indexing: estimates,
    confirmAboveSeconds: config.importConfirmSeconds,
  });
  const search = new SearchService(store.db, datasetsStore, gateway, models, metrics);
  // Headers of tool sources are stored sealed under the platform secret.
  const tools = new ToolSources(new ToolSourcesStore(store.db), SecretBox.fromConfig(config.secretKey, config.dataDir), {
    allowPrivate: config.toolAllowPrivate,
    timeoutMs: config.toolTimeoutMs,
  });
  const appsStore = new AppsStore(store.db);
  const keyService = new KeysService(keys, auth, async (teamId, appId) => !!(await appsStore.app(teamId, appId)));
  const apps = new AppsService(appsStore, datasetsStore, models, (caller, appId) => keyService.revokeForApp(caller.teamId, appId), tools);
  const chatHistory = new ChatHistoryStore(store.db);
  const annotationsStore = new AnnotationsStore(store.db);
  const matcher = new AnnotationMatcher(annotationsStore, datasetsStore, models);
  const annotations = new AnnotationsService(annotationsStore, apps, chatHistory, matcher);
  const chat = new ChatService(gateway, search, models, matcher, tools);
  const chatLog = new ChatLogService(new ChatLogStore(store.db), apps);

  const outLinks = new OutLinksStore(store.db);
  const share = new ShareService(outLinks, apps, { allowPrivate: config.shareHookAllowPrivate }, (err) =>
    console.error(`kbchat platform: ${(err as Error)?.message ?? err}`),
  );
  const answerCosts = new AnswerCosts(
    gateway,
    chatHistory,
    (err) => console.error(`kbchat platform: answer costs: ${(err as Error)?.message ?? err}`),
    (shareId, cost) => outLinks.addUsage(shareId, cost),
  );
  const pending = async (datasetId: string) => ((p) => p.queued + p.indexing)(sumProgress(await progress(store.db, { datasetId })));
  const checks = new RetrievalChecksService(new ChecksStore(store.db), datasets, search, models, {
    defaultExtensionModel: defaultExtensionModel(models),
    pending,
  });
  const startupNotes = [...root.notes, ...notes, `store: ${store.description}`];
  if (models.vectorModels.length === 0) {
    startupNotes.push(
      'warning: no vector model configured (config.json has no vectorModels): datasets can be made, but their items are not indexed until one is; chat searches by full text only',
    );
  }
  await tokenizer;
  if (worker) {
    worker.start();
    startupNotes.push(`indexing worker running (${models.systemEnv.vectorMaxProcess} batches at once)`);
  }
  return {
    config,
    models,
    store,
    keys,
    auth,
    requestAuth,
    accounts,
    datasets,
    uploads,
    search,
    apps,
    keyService,
    chat,
    chatHistory,
    chatLog,
    annotations,
    answerCosts,
    runningAnswers: new RunningAnswers(),
    share,
    tools,
    checks,
    gateway,
    worker,
    metrics,
    rootTeamId: root.teamId,
    startupNotes,
    async close() {
      uploads.close();
      answerCosts.stop();
      await linkSync.stop();
      await datasets.jobs.stop();
      await worker?.stop();
      await checks.stop();
      await gateway.close();
      await store.close();
    },
  };
}

/** The LLM query extension uses when a request names none. */
function defaultExtensionModel(models: ModelConfig): string | undefined {
  return models.llmModels.find((m) => m.usedInQueryExtension)?.model ?? models.llmModels[0]?.model;
}

export function buildPlatformApp(services: PlatformServices): FastifyInstance {
  return buildHttpApp({
    logLevel: services.config.logLevel,
    requestStallTimeoutMs: services.config.requestStallTimeoutMs,
    docs: platformApiDocs(),
    routes: (app) => platformRoutes(app, services),
    webApp: platformWebApp(services.config.webDir, (shareId) => services.share.frameOrigins(shareId)),
  });
}

const healthSchema = z.object({ ok: z.literal(true), store: z.enum(['pglite', 'postgres']) });

/** Every route of the platform: in app.after, since the document sees only the routes declared after it loads. */
function platformRoutes(app: FastifyInstance, services: PlatformServices): void {
  // Every route's zod schemas validate its input (in place of the document helper's noValidation: see http/validate.ts).
  app.setValidatorCompiler(zodValidatorCompiler);
  void app.register(multipart);
  void app.register(cookie);
  decorateCaller(app);
  app.after(() => {
    metricsRoutes(app, {
      metrics: services.metrics,
      store: services.store,
      gateway: services.gateway,
      metricsToken: services.config.metricsToken,
      pendingMigrations: () => pendingMigrations(services.store.db, MODULE_MIGRATIONS),
    });
    app.get(
      '/healthz',
      { schema: { summary: 'Liveness: the process answers (and which store it runs on)', security: [], response: { 200: healthSchema } } },
      async () => ({ ok: true, store: services.store.kind }),
    );
  });
  // One encapsulated plugin per feature folder, each authenticating its group of routes in onRequest
  // hooks (http/caller.ts); the API document lists their routes in this order (the OpenAI-compatible last).
  const { requestAuth: auth } = services;
  void app.register(accountsPlugin, { accounts: services.accounts, auth });
  void app.register(datasetsPlugin, { datasets: services.datasets, auth, linkAllowPrivate: services.config.linkAllowPrivate });
  void app.register(uploadsPlugin, { uploads: services.uploads.service, tus: services.uploads.tus, auth });
  void app.register(searchPlugin, {
    db: services.store.db,
    search: services.search,
    datasets: services.datasets,
    auth,
    defaultExtensionModel: defaultExtensionModel(services.models),
  });
  void app.register(retrievalChecksPlugin, { checks: services.checks, auth });
  void app.register(appsPlugin, { apps: services.apps, auth });
  void app.register(keysPlugin, { keys: services.keyService, auth });
  void app.register(modelsPlugin, { models: services.models, gateway: services.gateway, auth });
  void app.register(annotationsPlugin, { annotations: services.annotations, auth });
  void app.register(toolSourcesPlugin, { tools: services.tools, auth });
  void app.register(chatHistoryPlugin, {
    auth,
    apps: services.apps,
    history: services.chatHistory,
    share: services.share,
    running: services.runningAnswers,
    annotations: services.annotations,
  });
  void app.register(chatLogsPlugin, { auth, chatLog: services.chatLog });
  void app.register(modelCallsPlugin, { auth, apps: services.apps, history: services.chatHistory, gateway: services.gateway });
  void app.register(sharePlugin, { share: services.share, apps: services.apps, auth });
  // The application as an MCP server: its chat turn and its search, for MCP clients (its own key).
  void app.register(mcpServerPlugin, {
    keys: services.auth,
    apps: services.apps,
    mcp: new AppMcpService({
      chat: services.chat,
      history: services.chatHistory,
      running: services.runningAnswers,
      share: services.share,
      costs: services.answerCosts,
      search: services.search,
      stopOnDisconnect: services.config.chatOnDisconnect === 'stop',
    }),
  });
  // The OpenAI-compatible routes, with their own error body.
  void app.register(chatPlugin, {
    auth,
    apps: services.apps,
    chat: services.chat,
    history: services.chatHistory,
    share: services.share,
    running: services.runningAnswers,
    stopOnDisconnect: services.config.chatOnDisconnect === 'stop',
    costs: services.answerCosts,
  });
  app.after(() => {
    embedScriptRoute(app, services.config.webDir);
    publicFileRoutes(app, services.config.publicDir);
  });
}
