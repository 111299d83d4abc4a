// /api/core/app/*: applications, general keys only.
import type { FastifyPluginAsync } from 'fastify';
import {
  appIdQuery,
  appPageSchema,
  createAppSchema,
  envelopeOf,
  listAppsBody as listBody,
  publicAppSchema,
  updateAppSchema,
  type PublicApp,
} from '@kbchat/contracts';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { done, ok } from '../datasets/routes.js';
import { authenticated } from '../http/caller.js';
import type { RequestAuth } from '../accounts/request-auth.js';
import type { App, AppsService } from './service.js';

/** An app's settings: prompts and categories can be long (100,000 characters of system prompt), never megabytes more. */
const SETTINGS_BODY_LIMIT = 8 * 1024 * 1024;
const LIST_BODY_LIMIT = 64 * 1024;

/** FastGPT's envelope with the settings' warnings (accepted, but not working as asked) as its message. */
const okWithWarnings = <T>(data: T, warnings: string[]) => ({ ...ok(data), message: warnings.join(' ') });

export function publicApp(app: App): PublicApp {
  return {
    _id: app.id,
    id: app.id,
    name: app.name,
    intro: app.intro,
    type: 'simple',
    ...app.settings,
    createTime: new Date(app.createdAt).toISOString(),
    updateTime: new Date(app.updatedAt).toISOString(),
  };
}

/** General keys or a session, checked before the body is read. */
export const appsPlugin: FastifyPluginAsync<{ apps: AppsService; auth: RequestAuth }> = async (scope, { apps, auth }) => {
  const app = scope.withTypeProvider<ZodTypeProvider>();
  app.addHook(
    'onRequest',
    authenticated((req) => auth.general(req)),
  );

  app.post(
    '/api/core/app/create',
    { bodyLimit: SETTINGS_BODY_LIMIT, schema: { body: createAppSchema, response: { 200: envelopeOf(z.string().describe("The new application's id")) } } },
    async (req) => {
      const { id, warnings } = await apps.create(req.caller, req.body);
      return okWithWarnings(id, warnings);
    },
  );
  app.post('/api/core/app/list', { bodyLimit: LIST_BODY_LIMIT, schema: { body: listBody, response: { 200: envelopeOf(appPageSchema) } } }, async (req) => {
    const { list, total } = await apps.list(req.caller, req.body);
    return ok({ list: list.map(publicApp), total });
  });
  app.get('/api/core/app/detail', { schema: { querystring: appIdQuery, response: { 200: envelopeOf(publicAppSchema) } } }, async (req) =>
    ok(publicApp(await apps.app(req.caller, req.query.appId))),
  );
  app.put(
    '/api/core/app/update',
    { bodyLimit: SETTINGS_BODY_LIMIT, schema: { body: updateAppSchema, response: { 200: envelopeOf(publicAppSchema) } } },
    async (req) => {
      const { app: updated, warnings } = await apps.update(req.caller, req.body.appId, req.body);
      return okWithWarnings(publicApp(updated), warnings);
    },
  );
  app.delete('/api/core/app/del', { schema: { querystring: appIdQuery, response: done } }, async (req) => {
    await apps.delete(req.caller, req.query.appId);
    return ok(null);
  });
};
