// One file to POST /api/core/dataset/collection/create/localFile with
// XMLHttpRequest, for its upload progress (fetch has none), carrying the
// session's CSRF header like every change.
import { ApiError, csrfHeader } from '../api';

export interface UploadSettings {
  datasetId: string;
  trainingType: 'chunk' | 'qa';
  chunkSize?: number;
  chunkSplitter?: string;
  qaPrompt?: string;
  /** Kept with the collection: fileSize lets a second drop of the same file be noticed. */
  metadata?: Record<string, unknown>;
}

export interface Upload {
  done: Promise<{ collectionId: string; insertLen: number }>;
  abort(): void;
}

export function uploadFile(file: File, settings: UploadSettings, onProgress: (loaded: number, total: number) => void): Upload {
  const xhr = new XMLHttpRequest();
  const done = new Promise<{ collectionId: string; insertLen: number }>((resolve, reject) => {
    xhr.open('POST', '/api/core/dataset/collection/create/localFile');
    for (const [k, v] of Object.entries(csrfHeader())) xhr.setRequestHeader(k, v);
    xhr.upload.onprogress = (e) => onProgress(e.loaded, e.lengthComputable ? e.total : file.size);
    xhr.onload = () => {
      let body: { data?: { collectionId: string; results?: { insertLen: number } }; message?: string } | undefined;
      try {
        body = JSON.parse(xhr.responseText);
      } catch {
        body = undefined;
      }
      if (xhr.status < 200 || xhr.status >= 300 || !body?.data) {
        reject(new ApiError(xhr.status, body?.message || `${xhr.status} ${xhr.statusText}`));
        return;
      }
      resolve({ collectionId: body.data.collectionId, insertLen: body.data.results?.insertLen ?? 0 });
    };
    // No answer at all (network down, the platform stopped): status 0, said as such where shown.
    xhr.onerror = () => reject(new ApiError(0, ''));
    xhr.onabort = () => reject(new ApiError(0, 'aborted'));
    const form = new FormData();
    form.append('data', JSON.stringify(settings));
    form.append('file', file, file.name);
    xhr.send(form);
  });
  return { done, abort: () => xhr.abort() };
}
