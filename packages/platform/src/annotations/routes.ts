// /api/core/app/annotation/*: an application's annotations, for its team
// (general key or session; never a share link's visitor).
import { Readable } from 'node:stream';
import type { FastifyPluginAsync } from 'fastify';
import {
  annotationIdQuery,
  annotationPageSchema,
  annotationsExportQuery,
  annotationsImportedSchema,
  createAnnotationBody,
  envelopeOf,
  importAnnotationsBody,
  listAnnotationsQuery,
  publicAnnotationSchema,
  updateAnnotationBody,
  type PublicAnnotation,
} from '@kbchat/contracts';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import type { RequestAuth } from '../accounts/request-auth.js';
import { done, ok } from '../datasets/routes.js';
import { authenticated } from '../http/caller.js';
import { attachment, CSV_BOM, csvLine } from '../http/csv.js';
import type { AnnotationsService } from './service.js';
import type { AnnotationRow } from './store.js';

const BODY_LIMIT = 256 * 1024;
const IMPORT_BODY_LIMIT = 6 * 1024 * 1024;

export function publicAnnotation(a: AnnotationRow & { hit_count?: number }): PublicAnnotation {
  return {
    _id: a.id,
    id: a.id,
    appId: a.app_id,
    question: a.question,
    answer: a.answer,
    ...(a.chat_id && a.data_id ? { chatId: a.chat_id, dataId: a.data_id } : {}),
    hitCount: a.hit_count ?? 0,
    createTime: new Date(Number(a.created_at)).toISOString(),
    updateTime: new Date(Number(a.updated_at)).toISOString(),
  };
}

export const annotationsPlugin: FastifyPluginAsync<{ annotations: AnnotationsService; auth: RequestAuth }> = async (fastify, { annotations, auth }) => {
  const app = fastify.withTypeProvider<ZodTypeProvider>();
  app.addHook(
    'onRequest',
    authenticated((req) => auth.general(req)),
  );

  app.post(
    '/api/core/app/annotation/create',
    { bodyLimit: BODY_LIMIT, schema: { body: createAnnotationBody, response: { 200: envelopeOf(z.string().describe("The new annotation's id")) } } },
    async (req) => ok(await annotations.create(req.caller, req.body)),
  );
  app.get(
    '/api/core/app/annotation/list',
    { schema: { querystring: listAnnotationsQuery, response: { 200: envelopeOf(annotationPageSchema) } } },
    async (req) => {
      const { list, total } = await annotations.list(req.caller, req.query);
      return ok({ list: list.map(publicAnnotation), total });
    },
  );
  app.put(
    '/api/core/app/annotation/update',
    { bodyLimit: BODY_LIMIT, schema: { body: updateAnnotationBody, response: { 200: envelopeOf(publicAnnotationSchema) } } },
    async (req) => ok(publicAnnotation(await annotations.update(req.caller, req.body))),
  );
  app.delete('/api/core/app/annotation/delete', { schema: { querystring: annotationIdQuery, response: done } }, async (req) => {
    await annotations.delete(req.caller, req.query.id);
    return ok(null);
  });
  app.post(
    '/api/core/app/annotation/import',
    { bodyLimit: IMPORT_BODY_LIMIT, schema: { body: importAnnotationsBody, response: { 200: envelopeOf(annotationsImportedSchema) } } },
    async (req) => ok(await annotations.import(req.caller, req.body.appId, req.body.csv)),
  );
  app.get(
    '/api/core/app/annotation/export',
    { schema: { querystring: annotationsExportQuery, description: 'Every annotation of the application as CSV (question,answer), streamed' } },
    async (req, reply) => {
      const pages = await annotations.exportPages(req.caller, req.query.appId);
      async function* lines() {
        yield CSV_BOM + csvLine(['question', 'answer']);
        for await (const page of pages) yield page.map((a) => csvLine([a.question, a.answer])).join('');
      }
      reply.header('content-type', 'text/csv; charset=utf-8').header('content-disposition', attachment(`annotations-${req.query.appId}.csv`));
      return reply.send(Readable.from(lines()));
    },
  );
};
