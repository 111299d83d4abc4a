// The web app (packages/web, built into its dist/ by `npm ci`) at the
// platform's root: index.html at / and at every page of the app (the browser
// routes within it), share.html at /chat/share (the public page of a share
// link), hashed assets under /assets/ cached for a year. Where it was not
// built, those pages say so and how, instead of a 404.
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import fastifyStatic from '@fastify/static';
import type { FastifyInstance, FastifyReply } from 'fastify';

/** The app's own pages (its router's top-level paths): each is index.html. */
export const APP_PAGES = ['/', '/datasets', '/apps', '/chat', '/keys', '/models', '/team'];
export const SHARE_PAGE = '/chat/share';

export function webAppRoutes(app: FastifyInstance, dir: string): void {
  const indexFile = join(dir, 'index.html');
  const shareFile = join(dir, 'share.html');
  const pages = (path: string) => (path === '/' ? ['/'] : [path, `${path}/*`]);
  if (!existsSync(indexFile) || !existsSync(shareFile)) {
    const notBuilt = `<!doctype html><meta charset="utf-8"><title>kbchat</title><p>The web app is not built (no ${escapeHtml(indexFile)}). Run <code>npm run build -w packages/web</code> (npm ci does it), then restart. The API answers under /api.</p>`;
    for (const path of [...APP_PAGES.flatMap(pages), SHARE_PAGE]) app.get(path, async (_req, reply) => reply.code(503).type('text/html; charset=utf-8').send(notBuilt));
    return;
  }
  // Read once: they are small, and a rebuild comes with a restart.
  const html = (file: Buffer) => async (_req: unknown, reply: FastifyReply) => reply.type('text/html; charset=utf-8').header('cache-control', 'no-cache').send(file);
  const index = html(readFileSync(indexFile));
  for (const path of APP_PAGES.flatMap(pages)) app.get(path, index);
  // More specific than /chat/*, so find-my-way takes it first.
  app.get(SHARE_PAGE, html(readFileSync(shareFile)));
  void app.register(fastifyStatic, { root: join(dir, 'assets'), prefix: '/assets/', immutable: true, maxAge: '365d', decorateReply: false, index: false });
}

function escapeHtml(s: string): string {
  return s.replace(/[&<>"]/g, (c) => `&#${c.charCodeAt(0)};`);
}
