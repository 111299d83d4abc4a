// The gateway's /metrics and /readyz (the store answers and has every
// migration; a note while rate limits are counted per process): the routes
// themselves are shared (server-kit/src/observability.ts).
import { migrationsCheck, observabilityRoutes } from '@kbchat/server-kit';
import type { FastifyInstance } from 'fastify';
import { GatewayError } from '../errors.js';
import { pendingMigrations } from '../store/migrations.js';
import { pingStore, type Store } from '../store/db.js';
import type { GatewayMetrics } from './index.js';

export function metricsRoutes(
  app: FastifyInstance,
  o: { metrics: GatewayMetrics; store: Store; metricsToken?: string; rateLimitsProblem: () => string | undefined },
): void {
  observabilityRoutes(app, {
    metrics: o.metrics,
    metricsToken: o.metricsToken,
    readySummary:
      'Readiness: 200 when the store answers and has every migration, else 503 naming the failing checks; `notes.rateLimits` says when rate limits are counted per process because Redis (or the store) is unreachable, which never fails readiness',
    notes: { rateLimits: o.rateLimitsProblem },
    checks: {
      store: () => pingStore(o.store.db),
      migrations: migrationsCheck(() => pendingMigrations(o.store.db, o.store.kind)),
    },
    refusal: (status, message) => new GatewayError(status, message, 'invalid_request_error', status === 401 ? 'unauthorized' : 'forbidden'),
  });
}
