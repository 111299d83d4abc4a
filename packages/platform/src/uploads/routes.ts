// Uploads into datasets: the whole file in one multipart request (FastGPT's
// create/localFile), or resumable over tus (creation, HEAD, PATCH, DELETE at
// TUS_PATH) and then made a collection by create/upload. Every request is
// authenticated and its upload checked to be the team's before the tus server
// sees it; anything refused here is the platform's envelope naming the field.
import {
  datasetIdQuery as datasetQuery,
  envelopeOf,
  estimateUploadBody as estimateUpload,
  fileImportSettings as fileSettings,
  idQuery,
  importUploadBody as fromUpload,
  localFileForm,
  MAX_FILE_BYTES,
  tusUploadMetadata as tusMetadata,
  unfinishedUploadSchema,
  uploadCheckBody as check,
  uploadCheckSchema,
  uploadEstimateSchema,
  uploadIdParams as uploadParams,
  uploadImportedSchema,
  type UploadImported,
} from '@kbchat/contracts';
import { Metadata } from '@tus/utils';
import type { FastifyPluginAsync } from 'fastify';
import type { RequestAuth } from '../accounts/request-auth.js';
import { done, ok } from '../datasets/routes.js';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { authenticated } from '../http/caller.js';
import { errors, PlatformError } from '../http/errors.js';
import { parseInput } from '../http/validate.js';
import type { ImportResult, UploadsService } from './service.js';
import { TUS_PATH, type TusUploads } from './tus.js';

export type { UnfinishedUpload } from '@kbchat/contracts';

const mib = MAX_FILE_BYTES / 1048576;

/** What a file import answers: FastGPT's shape, plus whether the collection was there already. */
export const imported = (r: ImportResult) =>
  ok<UploadImported>({ collectionId: r.collectionId, results: { insertLen: r.insertLen }, alreadyImported: r.alreadyImported });
export type { UploadCheck, UploadEstimate, UploadImported } from '@kbchat/contracts';

/** create/localFile's form schema is the document's only: the handler reads the parts itself. */
const documentedOnly = () => () => true;
const importAnswer = { 200: envelopeOf(uploadImportedSchema) };

/** General keys or a session, checked before the body is read (a file's bytes included). */
export const uploadsPlugin: FastifyPluginAsync<{ uploads: UploadsService; tus: TusUploads; auth: RequestAuth }> = async (scope, { uploads, tus, auth }) => {
  const app = scope.withTypeProvider<ZodTypeProvider>();
  app.addHook(
    'onRequest',
    authenticated((req) => auth.general(req)),
  );

  // multipart: `file` and `data` (the settings as a JSON string), as FastGPT's clients send them.
  app.post(
    '/api/core/dataset/collection/create/localFile',
    { schema: { body: localFileForm, consumes: ['multipart/form-data'], response: importAnswer }, validatorCompiler: documentedOnly },
    async (req) => {
      const who = req.caller;
      if (!req.isMultipart()) throw errors.badField('file', 'send multipart/form-data with a file field and a data field (JSON settings)');
      let file: { data: Uint8Array; filename: string; mimeType?: string } | undefined;
      let settings: unknown;
      for await (const part of req.parts({ limits: { fileSize: MAX_FILE_BYTES, files: 1 } })) {
        if (part.type === 'file') {
          const data = await part.toBuffer();
          if (part.file.truncated) throw errors.tooLarge(`Invalid 'file': ${part.filename} is larger than ${mib} MiB`);
          file = { data, filename: part.filename || 'upload', mimeType: part.mimetype };
        } else if (part.fieldname === 'data') {
          try {
            settings = JSON.parse(String(part.value));
          } catch (err) {
            throw errors.badField('data', `not JSON: ${(err as Error).message}`);
          }
        }
      }
      if (!file) throw errors.badField('file', 'no file in the upload');
      return imported(await uploads.importFile(who, file, parseInput(fileSettings, settings)));
    },
  );

  app.post('/api/core/dataset/collection/upload/check', { schema: { body: check, response: { 200: envelopeOf(uploadCheckSchema) } } }, async (req) => {
    const body = req.body;
    return ok(await uploads.check(req.caller, body.datasetId, body.sha256, body.size));
  });
  app.get(
    '/api/core/dataset/collection/upload/list',
    { schema: { querystring: datasetQuery, response: { 200: envelopeOf(z.array(unfinishedUploadSchema)) } } },
    async (req) => ok(await uploads.listUnfinished(req.caller, req.query.datasetId)),
  );
  app.delete('/api/core/dataset/collection/upload/delete', { schema: { querystring: idQuery, response: done } }, async (req) => {
    await uploads.discard(req.caller, req.query.id);
    return ok(null);
  });
  // Before create/upload, optionally: how many chunks and about how long to index (nothing is written; a file the import would refuse is refused and discarded here).
  app.post(
    '/api/core/dataset/collection/upload/estimate',
    { schema: { body: estimateUpload, response: { 200: envelopeOf(uploadEstimateSchema) } } },
    async (req) => {
      const { uploadId, ...settings } = req.body;
      return ok(await uploads.estimate(req.caller, uploadId, settings));
    },
  );
  app.post('/api/core/dataset/collection/create/upload', { schema: { body: fromUpload, response: importAnswer } }, async (req) => {
    const { uploadId, ...settings } = req.body;
    return imported(await uploads.finish(req.caller, uploadId, settings));
  });

  // tus: the bytes pass through untouched (the tus server reads the request itself).
  app.addContentTypeParser('application/offset+octet-stream', (_req, _payload, done) => done(null, undefined));
  app.post(
    TUS_PATH,
    {
      schema: {
        description:
          'tus creation: Upload-Length (bytes) and Upload-Metadata (datasetId, filename, filetype, sha256) in the headers; answers 201 with Location',
      },
    },
    async (req, reply) => {
      const who = req.caller;
      const length = req.headers['upload-length'];
      if (typeof length !== 'string' || !/^\d{1,15}$/.test(length))
        throw errors.badField('Upload-Length', "the file's size in bytes is required (deferred lengths are not accepted)");
      if (Number(length) > MAX_FILE_BYTES)
        throw new PlatformError(413, 'too_large', `Invalid 'Upload-Length': ${length} bytes is more than the ${mib} MiB a file may have`);
      let metadata: Record<string, string | null>;
      try {
        metadata = Metadata.parse(String(req.headers['upload-metadata'] ?? ''));
      } catch (err) {
        throw errors.badField('Upload-Metadata', `not tus metadata (key base64value, …): ${(err as Error).message}`);
      }
      const meta = parseInput(tusMetadata, Object.fromEntries(Object.entries(metadata).map(([k, v]) => [k, v ?? undefined])));
      const uploadId = await uploads.begin(who, {
        datasetId: meta.datasetId,
        fileName: meta.filename,
        fileType: meta.filetype,
        size: Number(length),
        sha256: meta.sha256,
      });
      reply.hijack();
      await tus.handle(req.raw, reply.raw, uploadId).catch((err) => req.log.error({ err }, 'tus creation failed'));
      if (reply.raw.statusCode !== 201) await uploads.discard(who, uploadId).catch(() => undefined);
    },
  );
  app.route({
    method: ['HEAD', 'PATCH', 'DELETE'],
    url: `${TUS_PATH}/:uploadId`,
    schema: { params: uploadParams, summary: 'tus: HEAD for the offset, PATCH to send bytes (application/offset+octet-stream), DELETE to discard' },
    handler: async (req, reply) => {
      const who = req.caller;
      const { uploadId } = req.params;
      const row = await uploads.upload(who, uploadId);
      if (row.collection_id) throw errors.conflict(`Upload ${uploadId} is imported already (collection ${row.collection_id})`);
      if (req.method === 'DELETE') {
        await uploads.discard(who, uploadId);
        return reply.code(204).header('tus-resumable', '1.0.0').send();
      }
      reply.hijack();
      await tus.handle(req.raw, reply.raw).catch((err) => req.log.error({ err }, 'tus request failed'));
    },
  });
};
