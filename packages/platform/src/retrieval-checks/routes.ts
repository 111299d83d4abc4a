// /api/core/dataset/check/*: a dataset's saved retrieval checks and their
// runs, with a general key or a session. Settings take searchTest's names.
import {
  createCheckBody as createCheck,
  checkRunAnswerSchema as runAnswer,
  checkRunStartedSchema as runStarted,
  checkRunSummarySchema,
  datasetIdQuery as datasetQuery,
  envelopeOf,
  idQuery,
  publicRetrievalCheckSchema as publicCheckSchema,
  runChecksBody as runChecks,
  runQuery,
  updateCheckBody as updateCheck,
  type PublicRetrievalCheck,
} from '@kbchat/contracts';
import type { FastifyPluginAsync } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import type { RequestAuth } from '../accounts/request-auth.js';
import { done, ok } from '../datasets/routes.js';
import { errors } from '../http/errors.js';
import { authenticated } from '../http/caller.js';
import type { CheckWithLast, RetrievalChecksService } from './service.js';

const BODY_LIMIT = 256 * 1024;
const oneCheck = { 200: envelopeOf(publicCheckSchema) };
export function publicCheck(c: CheckWithLast): PublicRetrievalCheck {
  return { _id: c.id, ...c };
}

/** General keys or a session, checked before the body is read. */
export const retrievalChecksPlugin: FastifyPluginAsync<{ checks: RetrievalChecksService; auth: RequestAuth }> = async (scope, deps) => {
  const app = scope.withTypeProvider<ZodTypeProvider>();
  app.addHook(
    'onRequest',
    authenticated((req) => deps.auth.general(req)),
  );

  app.post(
    '/api/core/dataset/check/create',
    { bodyLimit: BODY_LIMIT, schema: { body: createCheck, response: { 200: envelopeOf(z.string().describe("The new check's id")) } } },
    async (req) => {
      const who = req.caller;
      return ok(await deps.checks.create(who, req.body));
    },
  );
  app.get('/api/core/dataset/check/list', { schema: { querystring: datasetQuery, response: { 200: envelopeOf(z.array(publicCheckSchema)) } } }, async (req) => {
    const who = req.caller;
    const { datasetId } = req.query;
    return ok((await deps.checks.list(who, datasetId)).map(publicCheck));
  });
  app.get('/api/core/dataset/check/detail', { schema: { querystring: idQuery, response: oneCheck } }, async (req) => {
    const who = req.caller;
    return ok(publicCheck(await deps.checks.check(who, req.query.id)));
  });
  app.put('/api/core/dataset/check/update', { bodyLimit: BODY_LIMIT, schema: { body: updateCheck, response: oneCheck } }, async (req) => {
    const who = req.caller;
    const { id: checkId, ...patch } = req.body;
    return ok(publicCheck(await deps.checks.update(who, checkId, patch)));
  });
  app.delete('/api/core/dataset/check/delete', { schema: { querystring: idQuery, response: done } }, async (req) => {
    const who = req.caller;
    await deps.checks.remove(who, req.query.id);
    return ok(null);
  });
  // Starts a run; with wait: true answers when it has ended, with the run and its diff.
  app.post('/api/core/dataset/check/run', { bodyLimit: BODY_LIMIT, schema: { body: runChecks, response: { 200: envelopeOf(runStarted) } } }, async (req) => {
    const who = req.caller;
    const b = req.body;
    const { runId, finished } = await deps.checks.startRun(who, b.datasetId);
    if (!b.wait) return ok({ runId });
    await finished;
    return ok({ runId, ...(await deps.checks.runWithDiff(who, { runId })) });
  });
  app.get(
    '/api/core/dataset/check/runs',
    { schema: { querystring: datasetQuery, response: { 200: envelopeOf(z.array(checkRunSummarySchema)) } } },
    async (req) => {
      const who = req.caller;
      const { datasetId } = req.query;
      return ok(await deps.checks.runs(who, datasetId));
    },
  );
  app.get('/api/core/dataset/check/run', { schema: { querystring: runQuery, response: { 200: envelopeOf(runAnswer) } } }, async (req) => {
    const who = req.caller;
    const q = req.query;
    if (!q.id && !q.datasetId) throw errors.badField('id', 'name a run id, or a datasetId for its latest run');
    return ok(await deps.checks.runWithDiff(who, { runId: q.id, datasetId: q.datasetId }));
  });
};
