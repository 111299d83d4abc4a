// The web app (packages/web, built into its dist/ by `npm ci`) at the
// platform's root: index.html at / and at every page of the app (the browser
// routes within it), share.html at /chat/share (the public page of a share
// link), hashed assets under /assets/ cached for a year; a 503 that says how
// to build it where it was not built (@kbchat/shared/web-app, which the
// gateway's console uses too).
import { serveWebApp } from '@kbchat/shared/web-app';
import type { FastifyInstance } from 'fastify';

/** The app's own pages (its router's top-level paths): each is index.html. */
export const APP_PAGES = ['/', '/datasets', '/apps', '/chat', '/keys', '/models', '/team'];
export const SHARE_PAGE = '/chat/share';

export function webAppRoutes(app: FastifyInstance, dir: string): void {
  serveWebApp(
    app,
    dir,
    [
      { html: 'index.html', paths: APP_PAGES },
      { html: 'share.html', paths: [SHARE_PAGE], exact: true },
    ],
    { title: 'kbchat', note: 'The API answers under /api.' },
  );
}
