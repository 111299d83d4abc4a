// Uploads into datasets: create/localFile (multipart), and resumable tus
// uploads that create/upload makes a collection of.
import { z } from 'zod';
import { id } from './common.js';
import { chunkSettings, collectionCreatedSchema } from './datasets.js';

/** Largest upload (the readers' own limit). */
export const MAX_FILE_BYTES = 50 * 1024 * 1024;
const mib = MAX_FILE_BYTES / 1048576;

const sha256 = z.string().regex(/^[0-9a-f]{64}$/, 'a SHA-256 as 64 lowercase hex digits');
/** Asking for a second collection of content already in the dataset (else the first is answered). */
const allowDuplicate = z.boolean().optional();
/** create/localFile's `data` part. */
export const fileImportSettings = z.object({
  datasetId: id,
  name: z.string().trim().max(500).optional(),
  sha256: sha256.optional(),
  idempotencyKey: z.string().min(8).max(128).optional(),
  allowDuplicate,
  ...chunkSettings,
});
export const importUploadBody = z.object({ uploadId: id, name: z.string().trim().max(500).optional(), allowDuplicate, ...chunkSettings });
// qaPrompt is not needed to estimate: it is kept with the estimate, for the import after a reload.
export const estimateUploadBody = z.object({
  uploadId: id,
  trainingType: chunkSettings.trainingType,
  chunkSize: chunkSettings.chunkSize,
  chunkSplitter: chunkSettings.chunkSplitter,
  qaPrompt: chunkSettings.qaPrompt,
});
export const uploadCheckBody = z.object({ datasetId: id, sha256, size: z.number().int().min(0) });
/** A tus creation's Upload-Metadata. */
export const tusUploadMetadata = z.object({
  datasetId: id,
  filename: z.string().trim().min(1).max(500),
  filetype: z.string().max(200).optional(),
  sha256: sha256.optional(),
});
export const datasetIdQuery = z.object({ datasetId: id });
export const uploadIdParams = z.object({ uploadId: id });
/** create/localFile's form, for the API document (the handler reads the parts itself, and `data` with fileImportSettings). */
export const localFileForm = z.object({
  file: z.string().meta({ format: 'binary', description: `The file, at most ${mib} MiB` }),
  data: z.string().meta({
    description: 'The settings as JSON text',
    contentMediaType: 'application/json',
    contentSchema: z.toJSONSchema(fileImportSettings, { io: 'input' }),
  }),
});

export type FileImportSettings = z.input<typeof fileImportSettings>;
export type ImportUploadBody = z.input<typeof importUploadBody>;
export type EstimateUploadBody = z.input<typeof estimateUploadBody>;
export type UploadCheckBody = z.input<typeof uploadCheckBody>;

/** What importing an upload would cost, asked before importing it (the web app asks the user when `large`). */
export const uploadEstimateSchema = z.object({
  /** Chunks the import would make: the same reader and chunker, on these bytes. */
  chunks: z.number(),
  trainingType: z.enum(['chunk', 'qa']),
  /** The rate of the dataset's model (chunks a second), and where it came from: measured by the workers' indexing, or a probe (one timed call). */
  chunksPerSecond: z.number().nullable(),
  rateSource: z.enum(['measured', 'probe']).nullable(),
  /** When that rate was measured (ISO), and how long before this answer (seconds, by the platform's clock). */
  rateMeasuredAt: z.string().nullable(),
  rateAgeSeconds: z.number().nullable(),
  /** The rate is a probe this estimate made on this file's own chunks (else an earlier measurement, of other work). */
  rateFromThisFile: z.boolean(),
  /** Why there is no rate: the probe's failure (the model did not answer), else null. */
  rateError: z.string().nullable(),
  /** Chunks already waiting to be indexed (of any dataset), which go first. */
  queuedAhead: z.number(),
  /** Seconds to index this file's chunks at that rate; null without a rate. */
  seconds: z.number().nullable(),
  /** Seconds until the last of them is indexed, after what is queued before them. */
  secondsWithQueue: z.number().nullable(),
  /** Worth asking before importing: `seconds` reaches confirmAboveSeconds, or (no rate) over NEVER_LARGE_CHUNKS chunks. */
  large: z.boolean(),
  confirmAboveSeconds: z.number(),
});
export type UploadEstimate = z.infer<typeof uploadEstimateSchema>;

/** The settings an estimate was made with, kept with it for the import that follows. */
export const estimateSettingsSchema = z.object({
  trainingType: z.enum(['chunk', 'qa']),
  chunkSize: z.number().optional(),
  chunkSplitter: z.string().optional(),
  qaPrompt: z.string().optional(),
});

/** An upload not imported yet: some of its bytes (to resume), or all of them (to import or discard). */
export const unfinishedUploadSchema = z.object({
  uploadId: z.string(),
  fileName: z.string(),
  size: z.number(),
  offset: z.number(),
  sha256: z.string().nullable(),
  createTime: z.string(),
  expireTime: z.string(),
  /** Every byte is in: nothing to resume; it waits to be imported (after its estimate, the user's word) or discarded. */
  complete: z.boolean(),
  /** A complete upload's last estimate (rateAgeSeconds as of this answer), and the settings it was made with; null before one. */
  estimate: uploadEstimateSchema.nullable(),
  settings: estimateSettingsSchema.nullable(),
});
export type UnfinishedUpload = z.infer<typeof unfinishedUploadSchema>;

/** Before sending a file: is its content in the dataset already, or partly uploaded (to resume)? */
export const uploadCheckSchema = z.object({
  imported: z.object({ collectionId: z.string(), name: z.string(), createTime: z.string() }).nullable(),
  unfinished: unfinishedUploadSchema.nullable(),
});
export type UploadCheck = z.infer<typeof uploadCheckSchema>;

/** What a file import answers: FastGPT's shape, plus whether the collection was there already. */
export const uploadImportedSchema = collectionCreatedSchema.extend({ alreadyImported: z.boolean() });
export type UploadImported = z.infer<typeof uploadImportedSchema>;
