// The bytes of resumable uploads: a tus server (tus.io, protocol 1.0.0;
// @tus/server with @tus/file-store) over a folder of the platform's data dir.
// Routes authenticate and check ownership before a request reaches it; it
// only stores bytes at offsets. Which upload a creation makes is chosen by
// the route (its id is already a row of the team's), passed through `preset`.
import { createHash } from 'node:crypto';
import { readFile, stat } from 'node:fs/promises';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { join } from 'node:path';
import { FileStore } from '@tus/file-store';
import { Server } from '@tus/server';
import { MAX_FILE_BYTES, UPLOAD_EXPIRY_MS, type UploadBytes } from './service.js';

export const TUS_PATH = '/api/core/dataset/collection/upload/tus';

export class TusUploads implements UploadBytes {
  readonly server: Server;
  private readonly store: FileStore;
  /** The id a creation request makes, set by its route. */
  private readonly preset = new WeakMap<IncomingMessage, string>();

  constructor(readonly directory: string) {
    this.store = new FileStore({ directory, expirationPeriodInMilliseconds: UPLOAD_EXPIRY_MS });
    this.server = new Server({
      path: TUS_PATH,
      datastore: this.store,
      maxSize: MAX_FILE_BYTES,
      relativeLocation: true,
      // Same origin only: no Access-Control-Allow-Origin for anyone else.
      allowedOrigins: () => false,
      namingFunction: (req) => {
        const id = this.preset.get((req as { runtime?: { node?: { req: IncomingMessage } } }).runtime?.node?.req as IncomingMessage);
        if (!id) throw new Error('upload created without an id from its route');
        return id;
      },
    });
  }

  /** Hands a request to the tus server (which answers it); `createId` names the upload a POST makes. */
  async handle(req: IncomingMessage, res: ServerResponse, createId?: string): Promise<void> {
    if (createId) this.preset.set(req, createId);
    await this.server.handle(req, res);
  }

  async offset(id: string): Promise<number | undefined> {
    try {
      return (await this.store.getUpload(id)).offset;
    } catch {
      return undefined;
    }
  }

  async read(id: string): Promise<{ data: Buffer; sha256: string }> {
    const data = await readFile(join(this.directory, id));
    return { data, sha256: createHash('sha256').update(data).digest('hex') };
  }

  async remove(id: string): Promise<void> {
    await this.store.remove(id).catch(() => undefined);
  }

  /** Every upload on disk, with its age: for the sweep of bytes no row owns. */
  async stored(): Promise<{ id: string; ageMs: number }[]> {
    const ids = (await this.store.configstore.list?.()) ?? [];
    const now = Date.now();
    const out: { id: string; ageMs: number }[] = [];
    for (const id of ids) {
      const s = await stat(join(this.directory, `${id}.json`)).catch(() => undefined);
      if (s) out.push({ id, ageMs: now - s.mtimeMs });
    }
    return out;
  }
}
