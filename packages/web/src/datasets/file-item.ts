// One file of an import as the page follows it, apart from FileImport.tsx so
// that FileRow.tsx, which FileImport renders, can name it without importing it back.
import type { UploadEstimate } from '../api';
import type { chunkBody } from './ChunkOptions';

export type Phase = 'hashing' | 'waiting' | 'uploading' | 'estimating' | 'confirm' | 'importing' | 'uploaded' | 'already' | 'failed' | 'skipped' | 'cancelled';

export interface FileItem {
  key: number;
  name: string;
  size: number;
  /** The file dropped or chosen; none for an upload back after a reload (its bytes are all on the platform). */
  file?: File;
  phase: Phase;
  loaded: number;
  settings: ReturnType<typeof chunkBody>;
  sha256?: string;
  /** An unfinished upload of this content to continue, and where the platform's bytes ended. */
  resumeId?: string;
  resumedFrom?: number;
  /** Every byte is in: a retry only estimates and imports it. */
  uploadId?: string;
  /** What importing it would cost, once every byte is in, and when this page got it (Date.now()). */
  estimate?: UploadEstimate;
  estimateReceivedAt?: number;
  /** The user said to import it (a large one): a retry does not ask again. */
  confirmed?: boolean;
  /** A second copy of content already in the dataset, asked for. */
  allowDuplicate?: boolean;
  error?: unknown;
  collectionId?: string;
  /** The collection an earlier import of this content made. */
  existing?: { id: string; name: string };
}
