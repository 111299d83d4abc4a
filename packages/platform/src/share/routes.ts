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
  shareInitQuery,
  shareInitSchema,
  updateOutLinkBody as updateLink,
  type PublicOutLink,
  type ShareInit,
} from '@kbchat/contracts';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import type { RequestAuth } from '../accounts/request-auth.js';
import type { AppsService } from '../apps/service.js';
import { done, ok } from '../datasets/routes.js';
import { authenticated } from '../http/caller.js';
import type { OutLinkSettings, ShareService } from './service.js';
import { allowedOrigins, type OutLinkRow } from './store.js';

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
    limit: {
      expiredTime: l.expires_at ? new Date(l.expires_at).toISOString() : undefined,
      QPM: l.qpm ?? undefined,
      linkQPM: l.link_qpm ?? undefined,
      maxUsagePoints: l.max_usage_points ?? undefined,
      hookUrl: l.hook_url ?? undefined,
    },
    usedPoints: l.used_points,
    allowedOrigins: allowedOrigins(l),
  };
}

/** A body's limit and origins as the service's settings (absent: unchanged). */
function settingsOf(b: { limit?: z.output<typeof createLink>['limit']; allowedOrigins?: string[] }): OutLinkSettings {
  const l = b.limit ?? {};
  return {
    expiresAt: l.expiredTime,
    qpm: l.QPM,
    linkQpm: l.linkQPM,
    maxUsagePoints: l.maxUsagePoints,
    hookUrl: l.hookUrl,
    allowedOrigins: b.allowedOrigins,
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

  // A visitor's: the share id is the credential (and, for a link with a hook, the visitor's token).
  app.get(
    '/api/support/outLink/init',
    {
      schema: { querystring: shareInitQuery, security: [], response: { 200: envelopeOf(shareInitSchema) } },
      // Read by the embed script on the operator's own site: public and without credentials, so any origin may (its refusals too).
      onRequest: async (_req, reply) => void reply.header('access-control-allow-origin', '*'),
    },
    async (req) => {
      const { link, uid, allowedOrigins } = await deps.share.init(req.query.shareId, req.query.authToken);
      const a = await deps.apps.app({ keyId: null, teamId: link.team_id, appId: null }, link.app_id);
      const extracted = new Set(a.settings.extract?.fields.map((f) => f.key) ?? []);
      const init: ShareInit = {
        app: { name: a.name, intro: a.intro, variables: promptVariables(a.settings.systemPrompt).filter((v) => !extracted.has(v)) },
        ...(uid ? { uid } : {}),
        authRequired: link.hook_url !== null,
        allowedOrigins,
      };
      return ok(init);
    },
  );
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
      return ok(await deps.share.create(req.caller, { appId: b.appId, name: b.name, ...settingsOf(b) }));
    },
  );
  app.put(
    '/api/support/outLink/update',
    { bodyLimit: BODY_LIMIT, schema: { body: updateLink, response: { 200: envelopeOf(publicOutLinkSchema) } } },
    async (req) => ok(publicOutLink(await deps.share.update(req.caller, req.body.id, { name: req.body.name, ...settingsOf(req.body) }))),
  );
  app.get('/api/support/outLink/list', { schema: { querystring: appQuery, response: { 200: envelopeOf(z.array(publicOutLinkSchema)) } } }, async (req) =>
    ok((await deps.share.list(req.caller, req.query.appId)).map(publicOutLink)),
  );
  app.delete('/api/support/outLink/delete', { bodyLimit: BODY_LIMIT, schema: { querystring: idQuery, response: done } }, async (req) => {
    await deps.share.remove(req.caller, req.query.id);
    return ok(null);
  });
};
