// Files of the public folder (PUBLIC_DIR) served at /<name>: verification
// files such as /<file_name>.txt that a provider or domain check asks for.
// Flat names only: no folders, no dotfiles, nothing outside the folder.
import { readFile, stat } from 'node:fs/promises';
import { extname, join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import { errors } from './errors.js';

const SAFE_NAME = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,200}$/;
const TYPES: Record<string, string> = {
  '.txt': 'text/plain; charset=utf-8',
  '.html': 'text/html; charset=utf-8',
  '.json': 'application/json; charset=utf-8',
  '.xml': 'application/xml; charset=utf-8',
  '.png': 'image/png',
  '.jpg': 'image/jpeg',
  '.jpeg': 'image/jpeg',
  '.svg': 'image/svg+xml',
  '.ico': 'image/x-icon',
  '.css': 'text/css; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
};
const MAX_BYTES = 10 * 1024 * 1024;

export function publicFileRoutes(app: FastifyInstance, dir: string): void {
  // Not in the API document: the operator's files, not an API.
  app.get<{ Params: { name: string } }>('/:name', { schema: { hide: true } }, async (req, reply) => {
    const name = req.params.name;
    const notFound = errors.notFound(`GET /${name}`);
    if (!SAFE_NAME.test(name) || name.includes('..')) throw notFound;
    const path = join(dir, name);
    const info = await stat(path).catch(() => undefined);
    if (!info?.isFile() || info.size > MAX_BYTES) throw notFound;
    reply.type(TYPES[extname(name).toLowerCase()] ?? 'application/octet-stream');
    return readFile(path);
  });
}
