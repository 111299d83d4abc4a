// /api/core/dataset/check/*: a dataset's saved retrieval checks and their
// runs, with a general key or a session. Settings take searchTest's names.
import {
  createCheckBody as createCheck, datasetIdQuery as datasetQuery, idQuery, runChecksBody as runChecks, runQuery, updateCheckBody as updateCheck, type PublicRetrievalCheck,
} from '@kbchat/contracts';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { RequestAuth } from '../accounts/request-auth.js';
import { ok } from '../datasets/routes.js';
import { errors } from '../http/errors.js';
import { parseInput } from '../http/validate.js';
import type { CheckWithLast, RetrievalChecksService } from './service.js';

const BODY_LIMIT = 256 * 1024;
export function publicCheck(c: CheckWithLast): PublicRetrievalCheck {
  return { _id: c.id, ...c };
}

export function retrievalCheckRoutes(app: FastifyInstance, deps: { checks: RetrievalChecksService; auth: RequestAuth }): void {
  const caller = (req: FastifyRequest) => deps.auth.general(req);

  app.post('/api/core/dataset/check/create', { bodyLimit: BODY_LIMIT, schema: { body: createCheck } }, async (req) => {
    const who = await caller(req);
    return ok(await deps.checks.create(who, parseInput(createCheck, req.body)));
  });
  app.get('/api/core/dataset/check/list', { schema: { querystring: datasetQuery } }, async (req) => {
    const who = await caller(req);
    const { datasetId } = parseInput(datasetQuery, req.query);
    return ok((await deps.checks.list(who, datasetId)).map(publicCheck));
  });
  app.get('/api/core/dataset/check/detail', { schema: { querystring: idQuery } }, async (req) => {
    const who = await caller(req);
    return ok(publicCheck(await deps.checks.check(who, parseInput(idQuery, req.query).id)));
  });
  app.put('/api/core/dataset/check/update', { bodyLimit: BODY_LIMIT, schema: { body: updateCheck } }, async (req) => {
    const who = await caller(req);
    const { id: checkId, ...patch } = parseInput(updateCheck, req.body);
    return ok(publicCheck(await deps.checks.update(who, checkId, patch)));
  });
  app.delete('/api/core/dataset/check/delete', { schema: { querystring: idQuery } }, async (req) => {
    const who = await caller(req);
    await deps.checks.remove(who, parseInput(idQuery, req.query).id);
    return ok(null);
  });
  // Starts a run; with wait: true answers when it has ended, with the run and its diff.
  app.post('/api/core/dataset/check/run', { bodyLimit: BODY_LIMIT, schema: { body: runChecks } }, async (req) => {
    const who = await caller(req);
    const b = parseInput(runChecks, req.body);
    const { runId, finished } = await deps.checks.startRun(who, b.datasetId);
    if (!b.wait) return ok({ runId });
    await finished;
    return ok({ runId, ...(await deps.checks.runWithDiff(who, { runId })) });
  });
  app.get('/api/core/dataset/check/runs', { schema: { querystring: datasetQuery } }, async (req) => {
    const who = await caller(req);
    const { datasetId } = parseInput(datasetQuery, req.query);
    return ok(await deps.checks.runs(who, datasetId));
  });
  app.get('/api/core/dataset/check/run', { schema: { querystring: runQuery } }, async (req) => {
    const who = await caller(req);
    const q = parseInput(runQuery, req.query);
    if (!q.id && !q.datasetId) throw errors.badField('id', 'name a run id, or a datasetId for its latest run');
    return ok(await deps.checks.runWithDiff(who, { runId: q.id, datasetId: q.datasetId }));
  });
}
