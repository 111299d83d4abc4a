// GET /embed.js: the script an operator puts on their own site to open a
// share link's chat in a corner bubble (packages/web/src/embed/, built into
// the web app's dist/). Any origin loads it (a <script> needs no CORS); it is
// revalidated by its ETag (a hash of its bytes) so that a rebuild reaches
// every site within minutes, and costs a 304 otherwise.
import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import { errors } from './errors.js';

export const EMBED_SCRIPT = 'embed.js';

export function embedScriptRoute(app: FastifyInstance, webDir: string): void {
  const file = join(webDir, EMBED_SCRIPT);
  // Read once: it is small, and a rebuild comes with a restart.
  const body = existsSync(file) ? readFileSync(file) : undefined;
  const etag = body && `"${createHash('sha256').update(body).digest('base64url').slice(0, 27)}"`;
  app.get('/embed.js', { schema: { hide: true } }, async (req, reply) => {
    if (!body) throw errors.notFound(`${file} (build the web app: npm run build -w packages/web)`);
    reply
      .header('etag', etag)
      .header('cache-control', 'public, max-age=300')
      .header('access-control-allow-origin', '*')
      .header('cross-origin-resource-policy', 'cross-origin');
    if (req.headers['if-none-match'] === etag) return reply.code(304).send();
    return reply.type('text/javascript; charset=utf-8').send(body);
  });
}
