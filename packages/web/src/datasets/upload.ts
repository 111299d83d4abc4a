// Files into a dataset without importing one twice, resumable: the file's
// SHA-256 (crypto.subtle) is asked about first (already imported? partly
// uploaded before?), its bytes go over tus (tus-js-client: a dropped
// connection is retried from the bytes the platform has), and the finished
// upload becomes a collection with the chunking settings. Every call carries
// the session's CSRF header like every change.
import type { EstimateUploadBody, ImportUploadBody, UploadCheckBody } from '@kbchat/contracts';
import { Upload as TusUpload, type HttpResponse } from 'tus-js-client';
import { api, ApiError, csrfHeader, withQuery, type UnfinishedUpload, type UploadCheck, type UploadEstimate, type UploadImported } from '../api';

const TUS_ENDPOINT = '/api/core/dataset/collection/upload/tus';

export interface UploadSettings {
  trainingType: 'chunk' | 'qa';
  chunkSize?: number;
  chunkSplitter?: string;
  qaPrompt?: string;
}

/**
 * The file's SHA-256 in hex, or undefined where the page has no crypto.subtle
 * (plain http on an address other than localhost): the platform then hashes
 * the bytes itself, and only the check before sending is skipped.
 */
export async function hashFile(file: File): Promise<string | undefined> {
  if (!globalThis.crypto?.subtle) return undefined;
  const digest = await crypto.subtle.digest('SHA-256', await file.arrayBuffer());
  return [...new Uint8Array(digest)].map((b) => b.toString(16).padStart(2, '0')).join('');
}

export const checkFile = (datasetId: string, sha256: string, size: number) =>
  api<UploadCheck>('/api/core/dataset/collection/upload/check', { json: { datasetId, sha256, size } satisfies UploadCheckBody });
export const unfinishedUploads = (datasetId: string) => api<UnfinishedUpload[]>(withQuery('/api/core/dataset/collection/upload/list', { datasetId }));
export const discardUpload = (id: string) => api<null>(withQuery('/api/core/dataset/collection/upload/delete', { id }), { method: 'DELETE' });
/** How many chunks the finished upload makes and about how long they take to index; nothing is imported (the platform keeps the answer and the settings, for after a reload). */
export const estimateUpload = (uploadId: string, settings: UploadSettings) =>
  api<UploadEstimate>('/api/core/dataset/collection/upload/estimate', {
    json: {
      uploadId,
      trainingType: settings.trainingType,
      chunkSize: settings.chunkSize,
      chunkSplitter: settings.chunkSplitter,
      qaPrompt: settings.qaPrompt,
    } satisfies EstimateUploadBody,
  });
/** The finished upload into a collection; a repeat (the answer was lost) answers the same collection. */
export const importUpload = (uploadId: string, settings: UploadSettings, allowDuplicate: boolean) =>
  api<UploadImported>('/api/core/dataset/collection/create/upload', {
    json: { uploadId, ...settings, ...(allowDuplicate ? { allowDuplicate } : {}) } satisfies ImportUploadBody,
  });

export interface Upload {
  /** The upload's id once every byte is in. */
  done: Promise<string>;
  abort(): void;
}

export interface UploadEvents {
  onProgress(loaded: number, total: number): void;
  /** The platform had this many bytes already (a resumed upload, or a retry after a dropped connection). */
  onResumed(offset: number): void;
}

/** Sends the file's bytes over tus: a new upload, or the rest of `resumeId`. */
export function sendFile(file: File, target: { datasetId: string; sha256?: string; resumeId?: string }, events: UploadEvents): Upload {
  let tus: TusUpload;
  const done = new Promise<string>((resolve, reject) => {
    tus = new TusUpload(file, {
      endpoint: TUS_ENDPOINT,
      uploadUrl: target.resumeId ? `${TUS_ENDPOINT}/${encodeURIComponent(target.resumeId)}` : undefined,
      metadata: { datasetId: target.datasetId, filename: file.name, filetype: file.type, ...(target.sha256 ? { sha256: target.sha256 } : {}) },
      headers: csrfHeader(),
      // Resuming is found by content on the platform (check), not from this browser's storage.
      storeFingerprintForResuming: false,
      retryDelays: [0, 1000, 3000, 5000, 10_000],
      onProgress: (loaded, total) => events.onProgress(loaded, total),
      onAfterResponse: (req, res) => {
        const offset = Number(res.getHeader('Upload-Offset'));
        if (req.getMethod() === 'HEAD' && offset > 0) events.onResumed(offset);
      },
      onSuccess: () => resolve(decodeURIComponent(tus.url!.split('/').pop()!)),
      onError: (err) => reject(asApiError(err)),
    });
    tus.start();
  });
  return { done, abort: () => void tus.abort() };
}

/** The platform's envelope message from a tus failure; status 0 when nothing answered. */
function asApiError(err: Error & { originalResponse?: HttpResponse | null }): ApiError {
  const res = err.originalResponse;
  if (!res) return new ApiError(0, '');
  let message: string;
  let code: string | undefined;
  try {
    const body = JSON.parse(res.getBody()) as { message?: string; statusText?: string };
    message = body.message ?? '';
    code = body.statusText || undefined;
  } catch {
    message = res.getBody();
  }
  return new ApiError(res.getStatus(), message || `${res.getStatus()}`, code);
}
