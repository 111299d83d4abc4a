// The admin API under /api: log-in and log-out are open; /api/auth/me and
// /api/tokens need any signed-in user (a plain user manages its own tokens in
// the console); everything else needs an administrator's session (bearer or
// the console's cookie) or API token (auth.ts). Each feature is a plugin of
// its own, registered in the group whose onRequest guard it needs. JSON in and
// out, each answer checked against its route's schema (server-kit's
// answer-check.ts, set at the root); errors go through the server's handler,
// so they are OpenAI-shaped.
import cookie from '@fastify/cookie';
import type { FastifyPluginAsync } from 'fastify';
import type { GatewayServices } from '../gateway.js';
import { apiGuard, mePlugin, publicAuthPlugin } from './auth.js';
import { adminValidatorCompiler } from './input.js';
import { channelsPlugin } from './channels.js';
import { dashboardPlugin } from './dashboard.js';
import { logsPlugin } from './logs.js';
import { fallbacksPlugin } from './fallbacks.js';
import { groupsPlugin } from './groups.js';
import { pricesPlugin } from './prices.js';
import { rateLimitsPlugin } from './rate-limits.js';
import { redemptionsPlugin, topupPlugin } from './redemptions.js';
import { tokensPlugin } from './tokens.js';
import { usersPlugin } from './users.js';

/** Register with `{ prefix: '/api', services }`. */
export const adminPlugin: FastifyPluginAsync<{ services: GatewayServices }> = async (api, { services }) => {
  // Cookies are parsed for /api only: the relay's routes never pay for it.
  await api.register(cookie);
  // Bodies are validated by Fastify from the routes' zod schemas (after the guards' onRequest hooks).
  api.setValidatorCompiler(adminValidatorCompiler);
  await api.register(publicAuthPlugin, { services });
  await api.register(async (signedIn) => {
    signedIn.addHook('onRequest', apiGuard(services, 'signed-in'));
    await signedIn.register(mePlugin, { services });
    // Tokens check per token whom the caller may manage: a plain user only its own.
    await signedIn.register(tokensPlugin, { services });
    await signedIn.register(topupPlugin, { services });
  });
  await api.register(async (admins) => {
    admins.addHook('onRequest', apiGuard(services, 'admins'));
    for (const plugin of [
      usersPlugin,
      channelsPlugin,
      pricesPlugin,
      logsPlugin,
      dashboardPlugin,
      redemptionsPlugin,
      fallbacksPlugin,
      rateLimitsPlugin,
      groupsPlugin,
    ])
      await admins.register(plugin, { services });
  });
};
