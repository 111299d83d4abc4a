// Builds every gateway service from the configuration, in dependency order,
// and takes them down in reverse. The HTTP layer (server.ts) only sees this.
import { loadTokenizer } from '@kbchat/shared';
import { TokenAuthenticator } from './accounts/auth.js';
import { BalanceLedger } from './accounts/ledger.js';
import { LedgerStore } from './accounts/ledger-store.js';
import { PriceBook, unitsToMicros } from './accounts/pricing.js';
import { PricesStore } from './accounts/prices-store.js';
import { AccountsService } from './accounts/service.js';
import { AccountsStore } from './accounts/store.js';
import { ChannelHealth } from './channels/health.js';
import { KeyBox } from './channels/key-box.js';
import { ChannelRegistry } from './channels/registry.js';
import { ChannelsService, DEFAULT_TEST_TIMEOUT_MS } from './channels/service.js';
import { ChannelsStore } from './channels/store.js';
import { startLocalModels } from './providers/local/index.js';
import type { GatewayConfig } from './config.js';
import { LogsStore } from './logs/store.js';
import { LogRetention } from './logs/retention.js';
import { GatewayMetrics } from './metrics/index.js';
import type { RelayDeps } from './relay/context.js';
import { UpstreamClient } from './relay/upstream.js';
import { openStore, type Store } from './store/db.js';
import { RedemptionsStore } from './accounts/redemptions.js';
import { FallbackBook, FallbacksStore } from './channels/fallbacks.js';
import { LimitsBook } from './limits/book.js';
import { openCounters } from './limits/counters.js';
import { RateLimiter } from './limits/rate-limits.js';
import { RateLimitsStore } from './limits/store.js';
import { GroupBook } from './accounts/groups.js';
import { GroupsStore } from './accounts/groups-store.js';

export interface GatewayServices {
  config: GatewayConfig;
  store: Store;
  accountsStore: AccountsStore;
  accounts: AccountsService;
  /** Top-up codes. */
  redemptions: RedemptionsStore;
  auth: TokenAuthenticator;
  ledger: BalanceLedger;
  prices: PriceBook;
  fallbacks: FallbackBook;
  /** Price groups and their ratios. */
  groups: GroupBook;
  groupsStore: GroupsStore;
  /** Rate limits: their book and where windows are counted. */
  limits: RateLimiter;
  registry: ChannelRegistry;
  health: ChannelHealth;
  channels: ChannelsService;
  logsStore: LogsStore;
  logRetention: LogRetention;
  upstream: UpstreamClient;
  relay: RelayDeps;
  metrics: GatewayMetrics;
  /** Lines worth printing at start (generated root password, env channel sync). */
  startupNotes: string[];
  close(): Promise<void>;
}

export async function createGatewayServices(config: GatewayConfig, log: (msg: string) => void = console.error): Promise<GatewayServices> {
  const tokenizer = loadTokenizer();
  const store = await openStore({ url: config.databaseUrl, dataDir: config.dataDir });
  const onError = (err: Error) => log(`kbchat gateway: ${err.message}`);
  const accountsStore = new AccountsStore(store.db);
  const logsStore = new LogsStore(store.db, store.kind === 'pglite');
  const ledger = new BalanceLedger(new LedgerStore(store.db, store.kind, logsStore), {
    leaseMicros: unitsToMicros(config.balanceLeaseUnits),
    flushMs: config.ledgerFlushMs,
    logFlushMs: config.logFlushMs,
    // The embedded store is opened by one process at a time: any other holder in it is dead.
    exclusiveStore: store.kind === 'pglite',
    onError,
  });
  const groupsStore = new GroupsStore(store.db);
  const groups = new GroupBook(groupsStore);
  const accounts = new AccountsService(accountsStore, ledger, groups, config.platformToken ?? config.initialRootToken);
  const auth = new TokenAuthenticator(accountsStore, config.channelRefreshMs);
  const prices = new PriceBook(new PricesStore(store.db), {
    inputPrice: unitsToMicros(config.defaultInputPrice),
    outputPrice: unitsToMicros(config.defaultOutputPrice),
  });
  const fallbacks = new FallbackBook(new FallbacksStore(store.db));
  const limitsStore = new RateLimitsStore(store.db, store.kind);
  const limits = new RateLimiter(
    new LimitsBook(limitsStore),
    openCounters({ redisUrl: config.redisUrl, redisPrefix: config.redisPrefix, store: limitsStore, sharedStore: store.kind !== 'pglite', log }),
    limitsStore,
    onError,
  );
  const keyBox = KeyBox.fromConfig(config.secretKey, config.dataDir);
  const channelsStore = new ChannelsStore(store.db);
  const local = config.localModels
    ? await startLocalModels({
        ggufPath: config.localGgufPath,
        embedWorkers: config.localEmbedWorkers,
        embedPriority: config.localEmbedPriority,
        warmup: config.localWarmup,
      })
    : undefined;
  const registry = new ChannelRegistry(channelsStore, keyBox, new Map(local ? [[local.provider.type, local.provider]] : []));
  const health = new ChannelHealth(channelsStore, registry, { threshold: config.disableThreshold, windowMs: config.disableWindowMs });
  const upstream = new UpstreamClient({
    connectTimeoutMs: config.connectTimeoutMs,
    headersTimeoutMs: config.upstreamTimeoutMs,
    idleTimeoutMs: config.upstreamIdleTimeoutMs,
  });
  const channels = new ChannelsService(channelsStore, registry, health, keyBox, upstream, {
    testTimeoutMs: Math.min(DEFAULT_TEST_TIMEOUT_MS, config.upstreamTimeoutMs),
    groupExists: (name) => groups.exists(name),
  });
  const logRetention = new LogRetention(logsStore, onError);

  const startupNotes: string[] = [];
  const root = await accounts.ensureRoot({
    rootPassword: config.rootPassword,
    rootPasswordGenerated: config.rootPasswordGenerated,
    initialBalanceUnits: config.initialRootBalance,
    initialRootToken: config.initialRootToken,
  });
  // Shown now, not with the notes printed after the listen: a later step can
  // still fail, and the password is never shown again.
  if (root.generatedPassword) log(`kbchat gateway: root user created; password (shown once): ${root.generatedPassword}`);
  await registry.load();
  startupNotes.push(...(await channels.syncFromEnv(config.env)));
  if (local) startupNotes.push(await channels.syncLocalModels(local.models));
  await prices.load();
  await fallbacks.load();
  await limits.book.load();
  await groups.load();
  // In-process models cost nothing unless the operator prices them.
  for (const m of local?.models ?? []) prices.markFree(m.id);
  await tokenizer;
  await ledger.start();

  // Channels, prices, fallbacks and groups other processes change are in force here within CHANNEL_REFRESH_MS.
  registry.startRefresh(config.channelRefreshMs, onError);
  prices.startRefresh(config.channelRefreshMs, onError);
  fallbacks.startRefresh(config.channelRefreshMs, onError);
  limits.book.startRefresh(config.channelRefreshMs, onError);
  groups.startRefresh(config.channelRefreshMs, onError);
  logRetention.start(config.logRetentionDays);
  // The periodic re-test of auto-disabled models (channels/testing.ts); close() stops it.
  channels.startRetestLoop(config.retestIntervalMs, onError);

  const metrics = new GatewayMetrics({ channels: () => registry.all(), pendingLogRows: () => ledger.pendingRows });
  const relay: RelayDeps = { config, registry, health, upstream, ledger, prices, fallbacks, groups, limits, metrics: metrics.relay, onError };
  return {
    config,
    store,
    accountsStore,
    accounts,
    redemptions: new RedemptionsStore(store.db),
    auth,
    ledger,
    prices,
    fallbacks,
    groups,
    groupsStore,
    limits,
    registry,
    health,
    channels,
    logsStore,
    logRetention,
    upstream,
    relay,
    metrics,
    startupNotes,
    async close() {
      await channels.stopRetestLoop();
      registry.stop();
      prices.stopRefresh();
      fallbacks.stopRefresh();
      limits.book.stopRefresh();
      await limits.counters.close();
      groups.stopRefresh();
      logRetention.stop();
      await ledger.close();
      await upstream.close();
      await local?.close();
      await store.close();
    },
  };
}
