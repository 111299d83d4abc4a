// Builds the platform's services from its configuration, in dependency order,
// and takes them down in reverse. The HTTP layer only sees this.
import multipart from '@fastify/multipart';
import type { FastifyInstance } from 'fastify';
import { datasetRoutes } from './datasets/routes.js';
import { DatasetsService, type IndexingHooks } from './datasets/service.js';
import { DatasetsStore } from './datasets/store.js';
import { buildHttpApp } from './http/server.js';
import { ensureRootTeam, KeyAuthenticator } from './keys/auth.js';
import { KeysStore } from './keys/store.js';
import type { PlatformConfig } from './config.js';
import { loadModelConfig, type ModelConfig } from './models/config-file.js';
import { openPlatformStore, type PlatformStore } from './store/db.js';

export interface PlatformServices {
  config: PlatformConfig;
  models: ModelConfig;
  store: PlatformStore;
  keys: KeysStore;
  auth: KeyAuthenticator;
  datasets: DatasetsService;
  rootTeamId: string;
  startupNotes: string[];
  close(): Promise<void>;
}

/** Until the indexing queue is wired, new data is only stored. */
const NO_INDEXING: IndexingHooks = { enqueue: async () => {} };

export async function createPlatformServices(config: PlatformConfig, opts: { indexing?: IndexingHooks } = {}): Promise<PlatformServices> {
  const models = loadModelConfig(config.configPath);
  const store = await openPlatformStore({ url: config.databaseUrl, dataDir: config.dataDir });
  const keys = new KeysStore(store.db);
  const root = await ensureRootTeam(keys, config.initialApiKey);
  const auth = new KeyAuthenticator(keys);
  const datasets = new DatasetsService(new DatasetsStore(store.db), models, opts.indexing ?? NO_INDEXING);
  const startupNotes = [...root.notes, `store: ${store.description}`];
  if (models.vectorModels.length === 0) startupNotes.push('no vector model configured: datasets can be made, but nothing is indexed');
  return {
    config, models, store, keys, auth, datasets, rootTeamId: root.teamId, startupNotes,
    async close() {
      await store.close();
    },
  };
}

export function buildPlatformApp(services: PlatformServices): FastifyInstance {
  const app = buildHttpApp({ logLevel: services.config.logLevel });
  app.get('/healthz', async () => ({ ok: true, store: services.store.kind }));
  void app.register(multipart);
  app.after(() => datasetRoutes(app, services.datasets, services.auth, { linkAllowPrivate: services.config.linkAllowPrivate }));
  return app;
}
