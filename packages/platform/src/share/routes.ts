// /api/support/outLink/*: share links of an application (FastGPT's paths),
// managed with a general key or a session; init is public (the share page's
// first call) and says only what the page shows.
import type { FastifyPluginAsync } from 'fastify';
import {
  appIdQuery as appQuery,
  createOutLinkBody as createLink,
  envelopeOf,
  idQuery,
  publicOutLinkSchema,
  shareInitSchema,
  shareIdQuery as shareQuery,
  type PublicOutLink,
  type ShareInit,
} from '@kbchat/contracts';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import type { RequestAuth } from '../accounts/request-auth.js';
import type { AppsService } from '../apps/service.js';
import { done, ok } from '../datasets/routes.js';
import { authenticated } from '../http/caller.js';
import type { ShareService } from './service.js';
import type { OutLinkRow } from './store.js';

const BODY_LIMIT = 64 * 1024;

export function publicOutLink(l: OutLinkRow): PublicOutLink {
  return {
    _id: l.id,
    id: l.id,
    shareId: l.share_id,
    appId: l.app_id,
    name: l.name,
    createTime: new Date(l.created_at).toISOString(),
    lastTime: l.last_used_at ? new Date(l.last_used_at).toISOString() : undefined,
    limit: { expiredTime: l.expires_at ? new Date(l.expires_at).toISOString() : undefined, QPM: l.qpm ?? undefined },
  };
}

export type { ShareInit };

/** The {{name}} placeholders of a prompt: the variables a chat with it takes. */
export function promptVariables(prompt: string): string[] {
  return [...new Set([...prompt.matchAll(/\{\{\s*([A-Za-z_][\w-]*)\s*\}\}/g)].map((m) => m[1]!))];
}

type ShareDeps = { share: ShareService; apps: AppsService; auth: RequestAuth };

/** Share links: their management (general keys or a session, checked before the body is read), and the visitors' open init. */
export const sharePlugin: FastifyPluginAsync<ShareDeps> = async (scope, deps) => {
  const app = scope.withTypeProvider<ZodTypeProvider>();
  await app.register(managementRoutes, deps);

  // A visitor's: the share id is the credential.
  app.get('/api/support/outLink/init', { schema: { querystring: shareQuery, security: [], response: { 200: envelopeOf(shareInitSchema) } } }, async (req) => {
    const link = await deps.share.open(req.query.shareId);
    const a = await deps.apps.app({ keyId: null, teamId: link.team_id, appId: null }, link.app_id);
    const extracted = new Set(a.settings.extract?.fields.map((f) => f.key) ?? []);
    const init: ShareInit = { app: { name: a.name, intro: a.intro, variables: promptVariables(a.settings.systemPrompt).filter((v) => !extracted.has(v)) } };
    return ok(init);
  });
};

const managementRoutes: FastifyPluginAsync<ShareDeps> = async (scope, deps) => {
  const app = scope.withTypeProvider<ZodTypeProvider>();
  app.addHook(
    'onRequest',
    authenticated((req) => deps.auth.general(req)),
  );

  app.post(
    '/api/support/outLink/create',
    { bodyLimit: BODY_LIMIT, schema: { body: createLink, response: { 200: envelopeOf(z.string().describe("The new link's shareId")) } } },
    async (req) => {
      const b = req.body;
      return ok(
        await deps.share.create(req.caller, { appId: b.appId, name: b.name, expiresAt: b.limit?.expiredTime ?? undefined, qpm: b.limit?.QPM ?? undefined }),
      );
    },
  );
  app.get('/api/support/outLink/list', { schema: { querystring: appQuery, response: { 200: envelopeOf(z.array(publicOutLinkSchema)) } } }, async (req) =>
    ok((await deps.share.list(req.caller, req.query.appId)).map(publicOutLink)),
  );
  app.delete('/api/support/outLink/delete', { bodyLimit: BODY_LIMIT, schema: { querystring: idQuery, response: done } }, async (req) => {
    await deps.share.remove(req.caller, req.query.id);
    return ok(null);
  });
};
