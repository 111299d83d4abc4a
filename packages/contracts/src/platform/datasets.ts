// /api/core/dataset/*: FastGPT's paths and shapes, general keys only.
import { z } from 'zod';
import { id, pageOf } from './common.js';

/** The most data items one pushData request takes. */
export const MAX_PUSH = 200;

export const createDatasetBody = z.object({
  name: z.string().trim().min(1).max(200),
  intro: z.string().max(5000).optional(),
  vectorModel: z.string().optional(),
  agentModel: z.string().optional(),
  type: z.literal('dataset').optional(),
  parentId: z.string().nullable().optional(),
  /** Read scans and images with OCR (default true). */
  ocr: z.boolean().optional(),
});
/** PUT /api/core/dataset/update: what changes (its vector model never does). */
export const updateDatasetBody = z.object({
  id,
  name: z.string().trim().min(1).max(200).optional(),
  intro: z.string().max(5000).optional(),
  ocr: z.boolean().optional(),
});
export type UpdateDatasetBody = z.input<typeof updateDatasetBody>;
/** POST /api/core/dataset/collection/sync: a link collection read again (FastGPT's). */
export const syncCollectionBody = z.object({ collectionId: id });
/** The answer: the page had not changed, or the collection has its new text (FastGPT's strings). */
export const syncResultSchema = z.enum(['sameRaw', 'success']);
export const SYNC_SCHEDULES = ['off', 'daily', 'weekly'] as const;
/** PUT /api/core/dataset/collection/update: its name, and a link's scheduled sync. */
export const updateCollectionBody = z.object({
  id,
  name: z.string().trim().min(1).max(200).optional(),
  syncSchedule: z.enum(SYNC_SCHEDULES).optional(),
});
export type UpdateCollectionBody = z.input<typeof updateCollectionBody>;
export const chunkSettings = {
  trainingType: z.enum(['chunk', 'qa']).default('chunk'),
  chunkSize: z.number().int().min(16).max(32_000).optional(),
  chunkSplitter: z.string().max(100).optional(),
  qaPrompt: z.string().max(10_000).optional(),
  metadata: z.record(z.string(), z.unknown()).optional(),
};
export const createTextCollectionBody = z.object({
  datasetId: id,
  name: z.string().trim().min(1).max(500),
  text: z.string().min(1).max(20_000_000),
  ...chunkSettings,
});
export const createLinkCollectionBody = z.object({
  datasetId: id,
  link: z.string().min(1).max(4000),
  name: z.string().trim().max(500).optional(),
  ...chunkSettings,
});
/** POST /api/core/dataset/collection/create/website: a site's pages from a start address, a collection each. */
export const MAX_SITE_PAGES = 200;
export const createWebsiteCollectionsBody = z.object({
  datasetId: id,
  url: z.string().min(1).max(4000),
  /** Pages read at most, the start page included. */
  maxPages: z.number().int().min(1).max(MAX_SITE_PAGES).default(20),
  /** Links followed at most from the start page. */
  maxDepth: z.number().int().min(0).max(5).default(2),
  ...chunkSettings,
});
export type CreateWebsiteCollectionsBody = z.input<typeof createWebsiteCollectionsBody>;
/** The pages made collections, and the ones skipped with the reason. */
export const websiteImportedSchema = z.object({
  collections: z.array(z.object({ collectionId: z.string(), url: z.string(), name: z.string(), insertLen: z.number() })),
  skipped: z.array(z.object({ url: z.string(), reason: z.string() })),
});
export type WebsiteImported = z.infer<typeof websiteImportedSchema>;
export const listCollectionsBody = z.object({
  datasetId: id,
  offset: z.number().int().min(0).default(0),
  pageSize: z.number().int().min(1).max(500).default(30),
  searchText: z.string().max(200).optional(),
});
export const pushDataBody = z.object({
  collectionId: id,
  data: z
    .array(
      z.object({
        q: z.string().max(100_000),
        a: z.string().max(100_000).optional(),
        indexes: z
          .array(z.object({ text: z.string().max(100_000) }))
          .max(20)
          .optional(),
      }),
    )
    .min(1)
    .max(MAX_PUSH),
  trainingType: z.enum(['chunk', 'qa']).optional(),
});
export const listDataBody = z.object({
  collectionId: id,
  offset: z.number().int().min(0).default(0),
  pageSize: z.number().int().min(1).max(500).default(30),
  searchText: z.string().max(200).optional(),
});
export const updateDataBody = z.object({
  dataId: id.optional(),
  id: id.optional(),
  q: z.string().max(100_000).optional(),
  a: z.string().max(100_000).optional(),
  indexes: z
    .array(z.object({ text: z.string().max(100_000) }))
    .max(20)
    .optional(),
});
/** ?id= of a dataset, collection or data item. */
export const idQuery = z.object({ id });
export const listDatasetsBody = z.object({ parentId: z.string().nullable().optional(), searchKey: z.string().max(200).optional() });
/** What an update that names no data item is refused with. */
export const dataIdRequired = z.object({ dataId: id });

export type CreateDatasetBody = z.input<typeof createDatasetBody>;
export type CreateTextCollectionBody = z.input<typeof createTextCollectionBody>;
export type CreateLinkCollectionBody = z.input<typeof createLinkCollectionBody>;
export type ListCollectionsBody = z.input<typeof listCollectionsBody>;
export type PushDataBody = z.input<typeof pushDataBody>;
export type ListDataBody = z.input<typeof listDataBody>;
export type UpdateDataBody = z.input<typeof updateDataBody>;
export type ListDatasetsBody = z.input<typeof listDatasetsBody>;

export const publicDatasetSchema = z.object({
  _id: z.string(),
  id: z.string(),
  name: z.string(),
  intro: z.string(),
  type: z.literal('dataset'),
  vectorModel: z.object({ model: z.string() }),
  /** Learnt from the first vectors. */
  vectorDimensions: z.number().nullable(),
  agentModel: z.object({ model: z.string() }).nullable(),
  /** Scans (PDF pages without text) and images are read with OCR. */
  ocr: z.boolean(),
  collectionCount: z.number().optional(),
  dataCount: z.number().optional(),
  createTime: z.string(),
  updateTime: z.string(),
});
export type PublicDataset = z.infer<typeof publicDatasetSchema>;

export const publicCollectionSchema = z.object({
  _id: z.string(),
  id: z.string(),
  datasetId: z.string(),
  name: z.string(),
  /** text, file, link or data. */
  type: z.string(),
  rawLink: z.string().nullable().optional(),
  fileName: z.string().nullable().optional(),
  trainingType: z.string(),
  chunkSize: z.number(),
  chunkSplitter: z.string().nullable(),
  metadata: z.record(z.string(), z.any()),
  dataAmount: z.number().optional(),
  trainingAmount: z.number().optional(),
  errorAmount: z.number().optional(),
  /** A link's scheduled sync, and when it was last read (ISO; null: at its creation). */
  syncSchedule: z.enum(SYNC_SCHEDULES).optional(),
  syncedAt: z.string().nullable().optional(),
  /** Why the file could not be read, found after the upload was answered (a scan whose OCR failed). */
  readError: z.string().nullable().optional(),
  /** The pages read with OCR: each one's confidence (0–100; null where it could not be read), and their mean. */
  ocr: z
    .object({
      pages: z.array(z.object({ page: z.number(), confidence: z.number().nullable(), error: z.string().optional() })),
      confidence: z.number().nullable(),
    })
    .nullable()
    .optional(),
  createTime: z.string(),
  updateTime: z.string(),
});
export type PublicCollection = z.infer<typeof publicCollectionSchema>;

export const publicDataSchema = z.object({
  _id: z.string(),
  id: z.string(),
  datasetId: z.string(),
  collectionId: z.string(),
  q: z.string(),
  a: z.string(),
  chunkIndex: z.number(),
  /** The Markdown headings above the chunk. */
  titlePath: z.array(z.string()),
  indexes: z.array(z.object({ dataId: z.string(), defaultIndex: z.boolean(), text: z.string() })).optional(),
  updateTime: z.string(),
});
export type PublicData = z.infer<typeof publicDataSchema>;

export const collectionPageSchema = pageOf(publicCollectionSchema);
export const dataPageSchema = pageOf(publicDataSchema);

/** A collection made of a text or a link: FastGPT's shape, with the items it made. */
export const collectionCreatedSchema = z.object({ collectionId: z.string(), results: z.object({ insertLen: z.number() }) });
export type CollectionCreated = z.infer<typeof collectionCreatedSchema>;

/** pushData: the items stored. */
export const pushedDataSchema = z.object({ insertLen: z.number() });
