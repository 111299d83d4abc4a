// Uploads: one row per file sent to a dataset (uploads/migration.ts).
import type { Generated } from 'kysely';

export interface UploadsTable {
  id: string;
  team_id: string;
  dataset_id: string;
  file_name: string;
  file_type: string | null;
  /** bigint: a number on both of the platform's stores (store/database.ts). */
  size: number;
  /** Declared by the client, then the server's own over the bytes it received. */
  sha256: string | null;
  idempotency_key: string | null;
  /** Set once imported. */
  collection_id: string | null;
  /** True when the collection was an earlier import of the same content. */
  reused: Generated<boolean>;
  created_at: number;
  /** Unfinished uploads only: their bytes are removed after this. */
  expires_at: number | null;
  /** A finished upload's last estimate and its settings (JSON, service.ts's StoredEstimate); null before one. */
  estimate: string | null;
}

export interface UploadsTables {
  uploads: UploadsTable;
}
