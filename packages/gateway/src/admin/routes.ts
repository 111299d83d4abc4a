// The admin API under /api: log-in and log-out are open; everything else
// needs an administrator's session or API token (auth.ts). JSON in and out;
// errors go through the server's handler, so they are OpenAI-shaped.
import type { FastifyInstance } from 'fastify';
import type { GatewayServices } from '../gateway.js';
import { adminGuard, meRoutes, publicAuthRoutes } from './auth.js';
import { channelRoutes } from './channels.js';
import { dashboardRoutes } from './dashboard.js';
import { logRoutes } from './logs.js';
import { priceRoutes } from './prices.js';
import { tokenRoutes } from './tokens.js';
import { userRoutes } from './users.js';

export function adminRoutes(app: FastifyInstance, services: GatewayServices): void {
  app.register(
    async (api) => {
      publicAuthRoutes(api, services);
      await api.register(async (guarded) => {
        guarded.addHook('onRequest', adminGuard(services));
        meRoutes(guarded, services);
        userRoutes(guarded, services);
        tokenRoutes(guarded, services);
        channelRoutes(guarded, services);
        priceRoutes(guarded, services);
        logRoutes(guarded, services);
        dashboardRoutes(guarded, services);
      });
    },
    { prefix: '/api' },
  );
}
