// The admin API under /api: log-in and log-out are open; /api/auth/me and
// /api/tokens need any signed-in user (a plain user manages its own tokens in
// the console); everything else needs an administrator's session (bearer or
// the console's cookie) or API token (auth.ts). JSON in and out; errors go
// through the server's handler, so they are OpenAI-shaped.
import cookie from '@fastify/cookie';
import type { FastifyInstance } from 'fastify';
import type { GatewayServices } from '../gateway.js';
import { apiGuard, meRoutes, publicAuthRoutes } from './auth.js';
import { adminValidatorCompiler } from './input.js';
import { channelRoutes } from './channels.js';
import { dashboardRoutes } from './dashboard.js';
import { logRoutes } from './logs.js';
import { priceRoutes } from './prices.js';
import { tokenRoutes } from './tokens.js';
import { userRoutes } from './users.js';

export function adminRoutes(app: FastifyInstance, services: GatewayServices): void {
  app.register(
    async (api) => {
      // Cookies are parsed for /api only: the relay's routes never pay for it.
      await api.register(cookie);
      // Bodies are validated by Fastify from the routes' zod schemas (after the guards' onRequest hooks).
      api.setValidatorCompiler(adminValidatorCompiler);
      publicAuthRoutes(api, services);
      await api.register(async (signedIn) => {
        signedIn.addHook('onRequest', apiGuard(services, 'signed-in'));
        meRoutes(signedIn, services);
        // Tokens check per token whom the caller may manage: a plain user only its own.
        await signedIn.register(async (tokens) => tokenRoutes(tokens, services));
      });
      await api.register(async (guarded) => {
        guarded.addHook('onRequest', apiGuard(services, 'admins'));
        userRoutes(guarded, services);
        channelRoutes(guarded, services);
        priceRoutes(guarded, services);
        logRoutes(guarded, services);
        dashboardRoutes(guarded, services);
      });
    },
    { prefix: '/api' },
  );
}
