// The gateway's API documents: /openapi.json (OpenAPI 3.1, from the zod
// schemas the admin routes declare, plus the relay's POSTs from their wire
// schemas) and /docs (Swagger UI). Who may call, the error envelope and the
// page's groups are said here; @kbchat/server-kit builds the document.
import { createRequire } from 'node:module';
import { openAIErrorSchema as errorBody } from '@kbchat/contracts';
import type { ApiDocsOptions } from '@kbchat/server-kit';
import { SESSION_COOKIE } from './admin/auth.js';
import { relayPathItems } from './relay/routes.js';

const { version } = createRequire(import.meta.url)('../package.json') as { version: string };

const TAGS: [string, string][] = [
  ['/v1', 'relay'],
  ['/api/auth', 'sign-in'],
  ['/api/users', 'users'],
  ['/api/tokens', 'tokens'],
  ['/api/channels', 'channels'],
  ['/api/prices', 'prices'],
  ['/api/groups', 'groups'],
  ['/api/logs', 'logs'],
  ['/api/dashboard', 'dashboard'],
];

/** What the document says beyond the routes, for the base (buildServiceApp) to register first. */
export function gatewayApiDocs(): ApiDocsOptions {
  return {
    title: 'kbchat gateway',
    version,
    description:
      "The OpenAI-compatible relay under /v1 (a gateway token) and the admin API under /api (an administrator's session or token; " +
      '/api/tokens and /api/auth/me for any signed-in user). Money is in currency units, kept as micro-units. Every answer carries X-Request-Id.',
    securitySchemes: {
      token: { type: 'http', scheme: 'bearer', description: 'A gateway token (sk-…): POST /api/tokens, or INITIAL_ROOT_TOKEN' },
      admin: { type: 'http', scheme: 'bearer', description: 'A session from POST /api/auth/login, or a token whose owner is an administrator (root or admin)' },
      session: {
        type: 'apiKey',
        in: 'cookie',
        name: SESSION_COOKIE,
        description: "The console's session (POST /api/auth/login with cookie: true); a change also sends X-CSRF-Token",
      },
    },
    security: [{ admin: [] }, { session: [] }],
    errorBody,
    paths: relayPathItems(),
    tagOf: (url) => TAGS.find(([prefix]) => url.startsWith(prefix))?.[1] ?? 'service',
  };
}
