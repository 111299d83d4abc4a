// /api/support/outLink/*: share links of an application (FastGPT's paths),
// managed with a general key or a session; init is public (the share page's
// first call) and says only what the page shows.
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { appIdQuery as appQuery, createOutLinkBody as createLink, idQuery, shareIdQuery as shareQuery, type PublicOutLink, type ShareInit } from '@kbchat/contracts';
import type { RequestAuth } from '../accounts/request-auth.js';
import type { AppsService } from '../apps/service.js';
import { ok } from '../datasets/routes.js';
import { parseInput } from '../http/validate.js';
import type { ShareService } from './service.js';
import type { OutLinkRow } from './store.js';

const BODY_LIMIT = 64 * 1024;

export function publicOutLink(l: OutLinkRow): PublicOutLink {
  return {
    _id: l.id, id: l.id, shareId: l.share_id, appId: l.app_id, name: l.name, createTime: new Date(l.created_at).toISOString(),
    lastTime: l.last_used_at ? new Date(l.last_used_at).toISOString() : undefined,
    limit: { expiredTime: l.expires_at ? new Date(l.expires_at).toISOString() : undefined, QPM: l.qpm ?? undefined },
  };
}

export type { ShareInit };

/** The {{name}} placeholders of a prompt: the variables a chat with it takes. */
export function promptVariables(prompt: string): string[] {
  return [...new Set([...prompt.matchAll(/\{\{\s*([A-Za-z_][\w-]*)\s*\}\}/g)].map((m) => m[1]!))];
}

export function shareRoutes(app: FastifyInstance, deps: { share: ShareService; apps: AppsService; auth: RequestAuth }): void {
  const caller = (req: FastifyRequest) => deps.auth.general(req);

  app.post('/api/support/outLink/create', { bodyLimit: BODY_LIMIT, schema: { body: createLink } }, async (req) => {
    const who = await caller(req);
    const b = parseInput(createLink, req.body);
    return ok(await deps.share.create(who, { appId: b.appId, name: b.name, expiresAt: b.limit?.expiredTime ?? undefined, qpm: b.limit?.QPM ?? undefined }));
  });
  app.get('/api/support/outLink/list', { schema: { querystring: appQuery } }, async (req) => {
    const who = await caller(req);
    const { appId } = parseInput(appQuery, req.query);
    return ok((await deps.share.list(who, appId)).map(publicOutLink));
  });
  app.delete('/api/support/outLink/delete', { bodyLimit: BODY_LIMIT, schema: { querystring: idQuery } }, async (req) => {
    const who = await caller(req);
    await deps.share.remove(who, parseInput(idQuery, req.query).id);
    return ok(null);
  });
  // Public: what the share page shows. Never the app's prompts or settings.
  app.get('/api/support/outLink/init', { schema: { querystring: shareQuery, security: [] } }, async (req) => {
    const { shareId } = parseInput(shareQuery, req.query);
    const link = await deps.share.open(shareId);
    const a = await deps.apps.app({ keyId: null, teamId: link.team_id, appId: null }, link.app_id);
    const extracted = new Set(a.settings.extract?.fields.map((f) => f.key) ?? []);
    const init: ShareInit = { app: { name: a.name, intro: a.intro, variables: promptVariables(a.settings.systemPrompt).filter((v) => !extracted.has(v)) } };
    return ok(init);
  });
}
