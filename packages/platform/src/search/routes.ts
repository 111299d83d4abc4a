// searchTest, and the indexing progress, problem list and retry endpoints of collections.
import {
  collectionIdQuery as collectionQuery,
  collectionTrainingDetailSchema as collectionTraining,
  datasetTrainingDetailSchema as datasetTraining,
  datasetIdQuery as datasetQuery,
  envelopeOf,
  retriedSchema,
  retryFailedBody as retryFailedItems,
  searchTestAnswerSchema as searchAnswer,
  searchTestBody as searchTest,
  trainingErrorPageSchema as trainingErrorPage,
  trainingErrorsBody as trainingErrors,
  updateTrainingDataBody as updateTrainingData,
  type PublicTrainingError,
} from '@kbchat/contracts';
import type { FastifyPluginAsync } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { ok } from '../datasets/routes.js';
import type { DatasetsService } from '../datasets/service.js';
import { errors } from '../http/errors.js';
import { authenticated } from '../http/caller.js';
import { listProblems, progress, retryFailed, retryItem, sumProgress, type TrainingProblem } from '../indexing/index.js';
import type { RequestAuth } from '../accounts/request-auth.js';
import { vectorIndexState } from '../retrieval/index.js';
import type { PlatformDb } from '../store/database.js';
import type { SearchService } from './service.js';

/** These bodies are a few fields (searchTest's text is at most 10,000 characters): more is not read. */
const BODY_LIMIT = 1024 * 1024;
/** Queue item ids are integers; anything else names no item (and must not reach SQL as one). */
const itemId = (s: string) => (/^\d{1,9}$/.test(s) ? Number(s) : undefined);
const retried = { 200: envelopeOf(retriedSchema) };

/** A problem item as the API shows it: FastGPT's getTrainingError fields, then kbchat's own. */
export function publicTrainingError(p: TrainingProblem): PublicTrainingError {
  return {
    _id: String(p.id),
    datasetId: p.datasetId,
    collectionId: p.collectionId,
    dataId: p.dataId,
    mode: p.mode,
    chunkIndex: p.chunkIndex,
    q: p.preview,
    errorMsg: p.error,
    // FastGPT's retryCount is what is left, not what was used.
    retryCount: Math.max(0, p.maxAttempts - p.attempts),
    status: p.status,
    reason: p.reason,
    attempts: p.attempts,
    maxAttempts: p.maxAttempts,
    nextAttemptAt: p.nextAttemptAt === null ? null : new Date(p.nextAttemptAt).toISOString(),
    updateTime: new Date(p.updatedAt).toISOString(),
  };
}

/** General keys or a session, checked before the body is read. */
export const searchPlugin: FastifyPluginAsync<{
  db: PlatformDb;
  search: SearchService;
  datasets: DatasetsService;
  auth: RequestAuth;
  defaultExtensionModel?: string;
}> = async (scope, deps) => {
  const app = scope.withTypeProvider<ZodTypeProvider>();
  app.addHook(
    'onRequest',
    authenticated((req) => deps.auth.general(req)),
  );

  app.post(
    '/api/core/dataset/searchTest',
    { bodyLimit: BODY_LIMIT, schema: { body: searchTest, response: { 200: envelopeOf(searchAnswer) } } },
    async (req) => {
      const who = req.caller;
      const b = req.body;
      const extensionModel = b.datasetSearchExtensionModel ?? deps.defaultExtensionModel;
      const r = await deps.search.forRequest(req.id).search(who, {
        datasetIds: [b.datasetId],
        text: b.text,
        mode: b.searchMode,
        limit: b.limit,
        similarity: b.similarity,
        embeddingWeight: b.embeddingWeight,
        usingReRank: b.usingReRank,
        rerankModel: b.rerankModel,
        extension: b.datasetSearchUsingExtensionQuery && extensionModel ? { model: extensionModel, background: b.datasetSearchExtensionBg } : undefined,
      });
      return ok({
        list: r.list,
        duration: r.duration,
        searchMode: r.searchMode,
        limit: r.limit,
        similarity: r.similarity,
        usingReRank: r.usingReRank,
        queryExtensionModel: r.extension?.model,
        queryExtensionResult: r.extension ? { model: r.extension.model, queries: r.extension.queries } : undefined,
        questionCut: r.questionCut,
        note: r.note,
        dropped: r.dropped,
        found: r.found,
        modelCalls: r.modelCalls,
      });
    },
  );

  // Counts of a collection's items by state, and the last error, so that "indexing" never sits without a reason.
  app.get(
    '/api/core/dataset/collection/trainingDetail',
    { schema: { querystring: collectionQuery, response: { 200: envelopeOf(collectionTraining) } } },
    async (req) => {
      const who = req.caller;
      const { collectionId } = req.query;
      const c = await deps.datasets.collection(who, collectionId);
      const [p] = await progress(deps.db, { datasetId: c.dataset_id, collectionIds: [collectionId] });
      const counts = p ?? { queued: 0, indexing: 0, failed: 0, done: 0, total: 0, lastError: null, rateLimited: 0, rateLimitedUntil: null };
      return ok({
        trainingType: c.training_type,
        queuedCounts: counts.queued,
        trainingCounts: counts.indexing,
        errorCounts: counts.failed,
        trainedCount: counts.done,
        ...counts,
      });
    },
  );

  app.get('/api/core/dataset/trainingDetail', { schema: { querystring: datasetQuery, response: { 200: envelopeOf(datasetTraining) } } }, async (req) => {
    const who = req.caller;
    const { datasetId } = req.query;
    const dataset = await deps.datasets.dataset(who, datasetId);
    const list = await progress(deps.db, { datasetId });
    // 'exact' until the worker builds the HNSW graph (when its queue is quiet): searches scan every vector meanwhile.
    const vectorIndex = await vectorIndexState(deps.db, dataset.vector_dimensions);
    return ok({ ...sumProgress(list), vectorIndex, collections: list });
  });

  // Failed items of a collection (or a whole dataset) are queued again, attempts reset.
  app.post('/api/core/dataset/training/retry', { bodyLimit: BODY_LIMIT, schema: { body: retryFailedItems, response: retried } }, async (req) => {
    const who = req.caller;
    const b = req.body;
    if (b.collectionId) await deps.datasets.collection(who, b.collectionId);
    if (b.datasetId) await deps.datasets.dataset(who, b.datasetId);
    return ok({ retried: await retryFailed(deps.db, { collectionId: b.collectionId, datasetId: b.datasetId, teamId: who.teamId }) });
  });

  // A collection's items that failed or wait on an error, each with its reason, attempts and next attempt; paged.
  app.post(
    '/api/core/dataset/training/getTrainingError',
    { bodyLimit: BODY_LIMIT, schema: { body: trainingErrors, response: { 200: envelopeOf(trainingErrorPage) } } },
    async (req) => {
      const who = req.caller;
      const b = req.body;
      await deps.datasets.collection(who, b.collectionId);
      const offset = b.offset ?? (b.pageNum ? (b.pageNum - 1) * b.pageSize : 0);
      const r = await listProblems(deps.db, { teamId: who.teamId, collectionId: b.collectionId, offset, limit: b.pageSize });
      return ok({ list: r.list.map(publicTrainingError), total: r.total });
    },
  );

  // FastGPT's retry: one item (dataId, the item's _id from getTrainingError), or every failed one of a collection or dataset.
  app.put('/api/core/dataset/training/updateTrainingData', { bodyLimit: BODY_LIMIT, schema: { body: updateTrainingData, response: retried } }, async (req) => {
    const who = req.caller;
    const b = req.body;
    if (b.dataId) {
      const n = itemId(b.dataId);
      const outcome = n === undefined ? 'missing' : await retryItem(deps.db, { teamId: who.teamId, id: n, collectionId: b.collectionId });
      if (outcome === 'missing') throw errors.notFound('training item');
      if (outcome === 'busy') throw errors.conflict('this item is being indexed right now; retry it if it fails again');
      return ok({ retried: 1 });
    }
    if (b.collectionId) await deps.datasets.collection(who, b.collectionId);
    if (b.datasetId) await deps.datasets.dataset(who, b.datasetId);
    return ok({ retried: await retryFailed(deps.db, { collectionId: b.collectionId, datasetId: b.datasetId, teamId: who.teamId }) });
  });
};
