// GET /metrics (Prometheus text; who may read it: shared/observability.ts),
// GET /readyz (the store answers with every migration run, and the gateway
// answers), and the hook that counts every request by its route pattern.
import { metricsRefusal, readiness } from '@kbchat/shared';
import type { FastifyInstance } from 'fastify';
import type { GatewayClient } from '../gateway-client/index.js';
import { PlatformError } from '../http/errors.js';
import { pingStore, type PlatformStore } from '../store/db.js';
import type { PlatformMetrics } from './index.js';

/** Each readiness check's time limit: a probe gets its answer well within the usual 5 s. */
export const READY_CHECK_TIMEOUT_MS = 2000;

export interface MetricsRouteDeps {
  metrics: PlatformMetrics;
  store: PlatformStore;
  gateway: GatewayClient;
  /** The migrations this build knows that the store has not run. */
  pendingMigrations(): Promise<string[]>;
  metricsToken?: string;
}

export function metricsRoutes(app: FastifyInstance, o: MetricsRouteDeps): void {
  app.addHook('onResponse', (req, reply, done) => {
    // The pattern (/api/core/dataset/:id), never the URL: a scanner's random paths all count as one series.
    o.metrics.httpRequest(req.method, req.routeOptions.url ?? 'unmatched', reply.statusCode, reply.elapsedTime / 1000);
    done();
  });

  const metricsDoc = {
    summary: 'Prometheus metrics (text format 0.0.4)',
    description: 'With METRICS_TOKEN set: that token as a Bearer token, from anywhere. Without: callers on this machine only (a loopback peer, no X-Forwarded-For); 403 otherwise.',
    security: [],
  };
  app.get('/metrics', { schema: metricsDoc }, async (req, reply) => {
    const refusal = metricsRefusal({ token: o.metricsToken, authorization: req.headers.authorization, remoteAddress: req.socket.remoteAddress, forwarded: req.headers['x-forwarded-for'] !== undefined });
    if (refusal) throw new PlatformError(refusal.status, refusal.status === 401 ? 'unauthorized' : 'forbidden', refusal.message);
    reply.header('content-type', o.metrics.contentType);
    return o.metrics.text();
  });

  const readyDoc = { summary: 'Readiness: 200 when the store answers with every migration run and the gateway answers, else 503 naming the failing checks', security: [] };
  app.get('/readyz', { schema: readyDoc }, async (_req, reply) => {
    const result = await readiness(
      {
        store: () => pingStore(o.store.db),
        migrations: async () => {
          const pending = await o.pendingMigrations();
          if (pending.length) throw new Error(`not run yet: ${pending.join(', ')}`);
        },
        gateway: () => o.gateway.ping(READY_CHECK_TIMEOUT_MS),
      },
      READY_CHECK_TIMEOUT_MS,
    );
    reply.code(result.ok ? 200 : 503);
    return result;
  });
}
