// /api/core/dataset/*: FastGPT's paths and shapes (docs/platform.md), general keys only.
import type { FastifyPluginAsync } from 'fastify';
import {
  collectionCreatedSchema as collectionCreated,
  collectionPageSchema as collectionPage,
  createDatasetBody as createDataset,
  createLinkCollectionBody as createLink,
  createTextCollectionBody as createText,
  dataIdRequired,
  dataPageSchema as dataPage,
  envelopeOf,
  idQuery,
  listCollectionsBody as listCollections,
  listDataBody as listData,
  listDatasetsBody as listDatasets,
  publicCollectionSchema,
  publicDataSchema,
  publicDatasetSchema,
  pushDataBody as pushData,
  pushedDataSchema as pushed,
  updateDataBody as updateData,
  updateDatasetBody as updateDataset,
  updateCollectionBody as updateCollection,
  syncCollectionBody as syncCollection,
  syncResultSchema,
  createWebsiteCollectionsBody as createWebsite,
  websiteImportedSchema,
  type PublicCollection,
  type PublicData,
  type PublicDataset,
} from '@kbchat/contracts';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { authenticated } from '../http/caller.js';
import { parseInput } from '../http/validate.js';
import type { RequestAuth } from '../accounts/request-auth.js';
import type { DatasetsService } from './service.js';
import type { CollectionRow, DataRow, DatasetRow } from './store.js';

/** FastGPT's envelope of a management route's answer (its schema: envelopeOf in @kbchat/contracts). */
export const ok = <T>(data: T) => ({ code: 200 as const, statusText: '' as const, message: '', data });
/** The answer of a route that answers ok(null): the change is made. */
export const done = { 200: envelopeOf(z.null()) };

export function publicDataset(d: DatasetRow & { collection_count?: number; data_count?: number }): PublicDataset {
  return {
    _id: d.id,
    id: d.id,
    name: d.name,
    intro: d.intro,
    type: 'dataset',
    vectorModel: { model: d.vector_model },
    vectorDimensions: d.vector_dimensions,
    agentModel: d.agent_model ? { model: d.agent_model } : null,
    ocr: d.ocr,
    collectionCount: d.collection_count,
    dataCount: d.data_count,
    createTime: new Date(Number(d.created_at)).toISOString(),
    updateTime: new Date(Number(d.updated_at)).toISOString(),
  };
}

export function publicCollection(c: CollectionRow & { data_amount?: number; training_amount?: number; error_amount?: number }): PublicCollection {
  return {
    _id: c.id,
    id: c.id,
    datasetId: c.dataset_id,
    name: c.name,
    type: c.type,
    rawLink: c.type === 'link' ? c.source : undefined,
    fileName: c.type === 'file' ? c.source : undefined,
    trainingType: c.training_type,
    chunkSize: c.chunk_size,
    chunkSplitter: c.chunk_splitter,
    metadata: JSON.parse(c.metadata),
    dataAmount: c.data_amount,
    trainingAmount: c.training_amount,
    errorAmount: c.error_amount,
    syncSchedule: c.sync_schedule,
    syncedAt: c.synced_at === null ? null : new Date(Number(c.synced_at)).toISOString(),
    readError: c.read_error,
    ocr: ocrSummary(c.ocr_pages),
    createTime: new Date(Number(c.created_at)).toISOString(),
    updateTime: new Date(Number(c.updated_at)).toISOString(),
  };
}

/** A collection's OCR pages (collections.ocr_pages) with their mean confidence. */
function ocrSummary(json: string | null): PublicCollection['ocr'] {
  if (!json) return null;
  const pages = JSON.parse(json) as NonNullable<PublicCollection['ocr']>['pages'];
  const read = pages.map((p) => p.confidence).filter((c): c is number => c !== null);
  return { pages, confidence: read.length ? Math.round(read.reduce((a, b) => a + b, 0) / read.length) : null };
}

export function publicData(d: DataRow & { indexes?: { id: number; text: string; is_default: boolean }[] }): PublicData {
  return {
    _id: d.id,
    id: d.id,
    datasetId: d.dataset_id,
    collectionId: d.collection_id,
    q: d.q,
    a: d.a,
    chunkIndex: d.chunk_index,
    titlePath: JSON.parse(d.title_path),
    indexes: d.indexes?.map((i) => ({ dataId: String(i.id), defaultIndex: i.is_default, text: i.text })),
    updateTime: new Date(Number(d.updated_at)).toISOString(),
  };
}

/** General keys or a session, checked before the body is read. */
export const datasetsPlugin: FastifyPluginAsync<{ datasets: DatasetsService; auth: RequestAuth; linkAllowPrivate: boolean }> = async (
  scope,
  { datasets, auth, linkAllowPrivate },
) => {
  const app = scope.withTypeProvider<ZodTypeProvider>();
  app.addHook(
    'onRequest',
    authenticated((req) => auth.general(req)),
  );

  app.post(
    '/api/core/dataset/create',
    { schema: { body: createDataset, response: { 200: envelopeOf(z.string().describe("The new dataset's id")) } } },
    async (req) => ok(await datasets.createDataset(req.caller, req.body)),
  );
  app.post('/api/core/dataset/list', { schema: { body: listDatasets, response: { 200: envelopeOf(z.array(publicDatasetSchema)) } } }, async (req) =>
    ok((await datasets.listDatasets(req.caller, req.body.searchKey)).map(publicDataset)),
  );
  app.get('/api/core/dataset/detail', { schema: { querystring: idQuery, response: { 200: envelopeOf(publicDatasetSchema) } } }, async (req) =>
    ok(publicDataset(await datasets.dataset(req.caller, req.query.id))),
  );
  app.put('/api/core/dataset/update', { schema: { body: updateDataset, response: done } }, async (req) => {
    await datasets.updateDataset(req.caller, req.body);
    return ok(null);
  });
  app.delete('/api/core/dataset/delete', { schema: { querystring: idQuery, response: done } }, async (req) => {
    await datasets.deleteDataset(req.caller, req.query.id);
    return ok(null);
  });

  app.post('/api/core/dataset/collection/create/text', { schema: { body: createText, response: { 200: envelopeOf(collectionCreated) } } }, async (req) => {
    const r = await datasets.createTextCollection(req.caller, req.body);
    return ok({ collectionId: r.collectionId, results: { insertLen: r.insertLen } });
  });
  app.post('/api/core/dataset/collection/create/link', { schema: { body: createLink, response: { 200: envelopeOf(collectionCreated) } } }, async (req) => {
    const r = await datasets.createLinkCollection(req.caller, req.body.link, req.body, linkAllowPrivate);
    return ok({ collectionId: r.collectionId, results: { insertLen: r.insertLen } });
  });
  app.post(
    '/api/core/dataset/collection/create/website',
    { schema: { body: createWebsite, response: { 200: envelopeOf(websiteImportedSchema) } } },
    async (req) => {
      const { datasetId, url, maxPages, maxDepth, ...settings } = req.body;
      return ok(await datasets.createWebsiteCollections(req.caller, { datasetId, url, maxPages, maxDepth, settings }, linkAllowPrivate));
    },
  );
  app.post('/api/core/dataset/collection/sync', { schema: { body: syncCollection, response: { 200: envelopeOf(syncResultSchema) } } }, async (req) =>
    ok(await datasets.syncCollection(req.caller, req.body.collectionId, linkAllowPrivate)),
  );
  app.put('/api/core/dataset/collection/update', { schema: { body: updateCollection, response: done } }, async (req) => {
    await datasets.updateCollection(req.caller, req.body);
    return ok(null);
  });
  // Files (create/localFile and resumable uploads): uploads/routes.ts.
  app.post('/api/core/dataset/collection/listV2', { schema: { body: listCollections, response: { 200: envelopeOf(collectionPage) } } }, async (req) => {
    const q = req.body;
    const { rows, total } = await datasets.listCollections(req.caller, q.datasetId, q.offset, q.pageSize, q.searchText);
    return ok({ list: rows.map(publicCollection), total });
  });
  app.get('/api/core/dataset/collection/detail', { schema: { querystring: idQuery, response: { 200: envelopeOf(publicCollectionSchema) } } }, async (req) =>
    ok(publicCollection(await datasets.collection(req.caller, req.query.id))),
  );
  app.delete('/api/core/dataset/collection/delete', { schema: { querystring: idQuery, response: done } }, async (req) => {
    await datasets.deleteCollection(req.caller, req.query.id);
    return ok(null);
  });

  app.post('/api/core/dataset/data/pushData', { schema: { body: pushData, response: { 200: envelopeOf(pushed) } } }, async (req) =>
    ok(await datasets.pushData(req.caller, req.body.collectionId, req.body.data, req.body.trainingType)),
  );
  app.post('/api/core/dataset/data/v2/list', { schema: { body: listData, response: { 200: envelopeOf(dataPage) } } }, async (req) => {
    const q = req.body;
    const { rows, total } = await datasets.listData(req.caller, q.collectionId, q.offset, q.pageSize, q.searchText);
    return ok({ list: rows.map(publicData), total });
  });
  app.get('/api/core/dataset/data/detail', { schema: { querystring: idQuery, response: { 200: envelopeOf(publicDataSchema) } } }, async (req) =>
    ok(publicData(await datasets.dataItem(req.caller, req.query.id))),
  );
  app.put('/api/core/dataset/data/update', { schema: { body: updateData, response: done } }, async (req) => {
    const body = req.body;
    // Either name is optional in the schema (FastGPT sends dataId, older clients id): one is required (parseInput throws the 400).
    const dataId = body.dataId ?? body.id ?? parseInput(dataIdRequired, {}).dataId;
    await datasets.updateData(req.caller, dataId, body);
    return ok(null);
  });
  app.delete('/api/core/dataset/data/delete', { schema: { querystring: idQuery, response: done } }, async (req) => {
    await datasets.deleteData(req.caller, req.query.id);
    return ok(null);
  });
};
