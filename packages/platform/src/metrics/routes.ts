// The platform's /metrics and /readyz (the store answers with every migration
// run, and the gateway answers): the routes themselves are shared
// (server-kit/src/observability.ts).
import { migrationsCheck, observabilityRoutes, READY_CHECK_TIMEOUT_MS } from '@kbchat/server-kit';
import type { FastifyInstance } from 'fastify';
import type { GatewayClient } from '../gateway-client/index.js';
import { PlatformError } from '../http/errors.js';
import { pingStore, type PlatformStore } from '../store/db.js';
import type { PlatformMetrics } from './index.js';

export interface MetricsRouteDeps {
  metrics: PlatformMetrics;
  store: PlatformStore;
  gateway: GatewayClient;
  /** The migrations this build knows that the store has not run. */
  pendingMigrations(): Promise<string[]>;
  metricsToken?: string;
}

export function metricsRoutes(app: FastifyInstance, o: MetricsRouteDeps): void {
  observabilityRoutes(app, {
    metrics: o.metrics,
    metricsToken: o.metricsToken,
    readySummary: 'Readiness: 200 when the store answers with every migration run and the gateway answers, else 503 naming the failing checks',
    checks: {
      store: () => pingStore(o.store.db),
      migrations: migrationsCheck(o.pendingMigrations),
      gateway: () => o.gateway.ping(READY_CHECK_TIMEOUT_MS),
    },
    refusal: (status, message) => new PlatformError(status, status === 401 ? 'unauthorized' : 'forbidden', message),
  });
}
