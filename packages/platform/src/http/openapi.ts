// The platform's API documents: /openapi.json (OpenAPI 3.1, from the zod
// schemas the routes declare) and /docs (Swagger UI). What the document says
// beyond the routes' schemas is here: who may call (keys, the session), the
// error envelope, and the groups of the page. @kbchat/server-kit builds it.
import { createRequire } from 'node:module';
import { envelopeSchema as envelope, errorBodySchema as errorBody } from '@kbchat/contracts';
import type { ApiDocsOptions } from '@kbchat/server-kit';
import { SESSION_COOKIE } from '../accounts/request-auth.js';
import { TUS_PATH } from '../uploads/tus.js';

const { version } = createRequire(import.meta.url)('../../package.json') as { version: string };

/** Longest prefix first. */
const TAGS: [string, string][] = [
  ['/api/core/dataset/check', 'retrieval checks'],
  ['/api/core/dataset/collection/upload', 'uploads'],
  ['/api/core/dataset/collection/create/localFile', 'uploads'],
  ['/api/core/dataset/collection/create/upload', 'uploads'],
  ['/api/core/dataset/searchTest', 'search'],
  ['/api/core/dataset/training', 'indexing'],
  ['/api/core/dataset/trainingDetail', 'indexing'],
  ['/api/core/dataset/collection/trainingDetail', 'indexing'],
  ['/api/core/dataset', 'knowledge bases'],
  ['/api/core/app/getChatLogs', 'chat history'],
  ['/api/core/app', 'applications'],
  ['/api/core/chat', 'chat history'],
  ['/api/core/ai', 'models'],
  ['/api/core/tool', 'tool sources'],
  ['/api/v1', 'chat (OpenAI-compatible)'],
  ['/api/support/openapi', 'API keys'],
  ['/api/mcp', 'MCP server'],
  ['/api/support/outLink', 'share links'],
  ['/api/auth', 'accounts'],
  ['/api/team', 'accounts'],
];

/** What the document says beyond the routes, for the base (buildServiceApp) to register first. */
export function platformApiDocs(): ApiDocsOptions {
  return {
    title: 'kbchat platform',
    version,
    description:
      "Knowledge bases, applications and their chat, in FastGPT's paths and shapes. Answers are the envelope " +
      '{code, statusText, message, data} with the real HTTP status; POST /api/v1/chat/completions answers as OpenAI does. ' +
      'Every answer carries X-Request-Id.',
    securitySchemes: {
      apiKey: {
        type: 'http',
        scheme: 'bearer',
        description:
          'A general API key (POST /api/support/openapi/create without appId) for the management API; an application key (with appId) for its chat only',
      },
      session: {
        type: 'apiKey',
        in: 'cookie',
        name: SESSION_COOKIE,
        description: "The web app's session (POST /api/auth/login); a change (POST, PUT, DELETE) also sends the session's X-CSRF-Token",
      },
    },
    security: [{ apiKey: [] }, { session: [] }],
    errorBody,
    tagOf: (url) => TAGS.find(([prefix]) => url.startsWith(prefix))?.[1] ?? 'service',
    // Everything under /api answers the envelope but the OpenAI-compatible chat, the tus protocol and the MCP server (JSON-RPC).
    success: {
      name: 'Envelope',
      description: 'The envelope, with the answer in data',
      body: envelope,
      at: (url) => url.startsWith('/api/') && !url.startsWith('/api/v1/') && !url.startsWith(TUS_PATH) && !url.startsWith('/api/mcp/'),
    },
  };
}
