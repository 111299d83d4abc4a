// The web app (packages/web, built into its dist/ by `npm ci`) at the
// platform's root: index.html at /, hashed assets under /assets/ cached for a
// year. Where it was not built, / says so and how, instead of a 404.
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import fastifyStatic from '@fastify/static';
import type { FastifyInstance } from 'fastify';

export function webAppRoutes(app: FastifyInstance, dir: string): void {
  const indexFile = join(dir, 'index.html');
  if (!existsSync(indexFile)) {
    app.get('/', async (_req, reply) =>
      reply
        .code(503)
        .type('text/html; charset=utf-8')
        .send(`<!doctype html><meta charset="utf-8"><title>kbchat</title><p>The web app is not built (no ${escapeHtml(indexFile)}). Run <code>npm run build -w packages/web</code> (npm ci does it), then restart. The API answers under /api.</p>`),
    );
    return;
  }
  // Read once: it is small, and a rebuild comes with a restart.
  const index = readFileSync(indexFile);
  app.get('/', async (_req, reply) => reply.type('text/html; charset=utf-8').header('cache-control', 'no-cache').send(index));
  void app.register(fastifyStatic, { root: join(dir, 'assets'), prefix: '/assets/', immutable: true, maxAge: '365d', decorateReply: false, index: false });
}

function escapeHtml(s: string): string {
  return s.replace(/[&<>"]/g, (c) => `&#${c.charCodeAt(0)};`);
}
