// Uploads wired for the platform: the tus byte store under <data-dir>/uploads,
// the service, and the hourly sweep of expired and orphaned uploads.
import { join } from 'node:path';
import type { DatasetsService } from '../datasets/service.js';
import type { IndexingEstimates } from '../indexing/estimate.js';
import type { PlatformDb } from '../store/database.js';
import { UploadsService } from './service.js';
import { UploadsStore } from './store.js';
import { TusUploads } from './tus.js';

export { uploadMigrations } from './migration.js';
export { uploadsPlugin } from './routes.js';

const SWEEP_MS = 60 * 60 * 1000;

export interface Uploads {
  service: UploadsService;
  tus: TusUploads;
  close(): void;
}

/** `estimates`: what an upload's estimate reads the indexing rates with, and from how long an import counts as large. */
export function createUploads(
  db: PlatformDb,
  datasets: DatasetsService,
  dataDir: string,
  onError: (err: unknown) => void,
  estimates?: { indexing: IndexingEstimates; confirmAboveSeconds: number },
): Uploads {
  const tus = new TusUploads(join(dataDir, 'uploads'));
  const service = new UploadsService(new UploadsStore(db), datasets, tus, estimates);
  const sweep = () => void service.sweep().catch(onError);
  sweep();
  const timer = setInterval(sweep, SWEEP_MS);
  timer.unref();
  return { service, tus, close: () => clearInterval(timer) };
}
