// /api/core/dataset/check/*: a dataset's saved retrieval checks and their
// runs, with a general key or a session. Settings take searchTest's names.
import type { FastifyPluginAsync } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import type { RequestAuth } from '../accounts/request-auth.js';
import { ok } from '../datasets/routes.js';
import { errors } from '../http/errors.js';
import { authenticated } from '../http/caller.js';
import type { CheckWithLast, RetrievalChecksService } from './service.js';

const BODY_LIMIT = 256 * 1024;
const id = z.string().min(1).max(64);
const expectation = z
  .object({
    text: z.string().trim().min(1).max(2000).optional(),
    collectionId: id.optional(),
    dataId: id.optional(),
    label: z.string().max(500).optional(),
  })
  .strict()
  .refine((e) => e.text || e.collectionId || e.dataId, { message: 'name a text, a collectionId or a dataId that a found chunk must match', path: ['text'] });
/** searchTest's settings and defaults. */
const settings = z
  .object({
    searchMode: z.enum(['embedding', 'fullTextRecall', 'mixedRecall']).default('embedding'),
    similarity: z.number().min(0).max(1).default(0),
    limit: z.number().int().min(1).max(100_000).default(5000),
    embeddingWeight: z.number().min(0).max(1).optional(),
    usingReRank: z.boolean().default(false),
    rerankModel: z.string().min(1).max(200).optional(),
    datasetSearchUsingExtensionQuery: z.boolean().default(false),
    datasetSearchExtensionModel: z.string().min(1).max(200).optional(),
    datasetSearchExtensionBg: z.string().max(10_000).optional(),
  })
  .strict();
const question = z.string().trim().min(1).max(10_000);
const expected = z.array(expectation).min(1, 'name at least one source the question should find').max(20);
const createCheck = z.object({ datasetId: id, question, expected, settings: z.preprocess((v) => v ?? {}, settings) });
const updateCheck = z.object({ id, question: question.optional(), expected: expected.optional(), settings: settings.optional() });
const runChecks = z.object({ datasetId: id, wait: z.boolean().default(false) });
const datasetQuery = z.object({ datasetId: id });
const idQuery = z.object({ id });
const runQuery = z.object({ id: id.optional(), datasetId: id.optional() });

export function publicCheck(c: CheckWithLast) {
  return { _id: c.id, ...c };
}

/** General keys or a session, checked before the body is read. */
export const retrievalChecksPlugin: FastifyPluginAsync<{ checks: RetrievalChecksService; auth: RequestAuth }> = async (scope, deps) => {
  const app = scope.withTypeProvider<ZodTypeProvider>();
  app.addHook('onRequest', authenticated((req) => deps.auth.general(req)));

  app.post('/api/core/dataset/check/create', { bodyLimit: BODY_LIMIT, schema: { body: createCheck } }, async (req) => {
    const who = req.caller;
    return ok(await deps.checks.create(who, req.body));
  });
  app.get('/api/core/dataset/check/list', { schema: { querystring: datasetQuery } }, async (req) => {
    const who = req.caller;
    const { datasetId } = req.query;
    return ok((await deps.checks.list(who, datasetId)).map(publicCheck));
  });
  app.get('/api/core/dataset/check/detail', { schema: { querystring: idQuery } }, async (req) => {
    const who = req.caller;
    return ok(publicCheck(await deps.checks.check(who, req.query.id)));
  });
  app.put('/api/core/dataset/check/update', { bodyLimit: BODY_LIMIT, schema: { body: updateCheck } }, async (req) => {
    const who = req.caller;
    const { id: checkId, ...patch } = req.body;
    return ok(publicCheck(await deps.checks.update(who, checkId, patch)));
  });
  app.delete('/api/core/dataset/check/delete', { schema: { querystring: idQuery } }, async (req) => {
    const who = req.caller;
    await deps.checks.remove(who, req.query.id);
    return ok(null);
  });
  // Starts a run; with wait: true answers when it has ended, with the run and its diff.
  app.post('/api/core/dataset/check/run', { bodyLimit: BODY_LIMIT, schema: { body: runChecks } }, async (req) => {
    const who = req.caller;
    const b = req.body;
    const { runId, finished } = await deps.checks.startRun(who, b.datasetId);
    if (!b.wait) return ok({ runId });
    await finished;
    return ok({ runId, ...(await deps.checks.runWithDiff(who, { runId })) });
  });
  app.get('/api/core/dataset/check/runs', { schema: { querystring: datasetQuery } }, async (req) => {
    const who = req.caller;
    const { datasetId } = req.query;
    return ok(await deps.checks.runs(who, datasetId));
  });
  app.get('/api/core/dataset/check/run', { schema: { querystring: runQuery } }, async (req) => {
    const who = req.caller;
    const q = req.query;
    if (!q.id && !q.datasetId) throw errors.badField('id', 'name a run id, or a datasetId for its latest run');
    return ok(await deps.checks.runWithDiff(who, { runId: q.id, datasetId: q.datasetId }));
  });
};
