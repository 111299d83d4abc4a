// The web app (packages/web, built into its dist/ by `npm ci`) at the
// platform's root: index.html at / and at every page of the app (the browser
// routes within them), share.html at /chat/share (the public page of a share
// link), hashed assets under /assets/ cached for a year; a 503 that says how
// to build it where it was not built (@kbchat/server-kit serves it, as it
// does the gateway's console).
import type { ServiceAppOptions } from '@kbchat/server-kit';

/** The app's own pages (its router's top-level paths): each is index.html. */
export const APP_PAGES = ['/', '/datasets', '/apps', '/chat', '/keys', '/models', '/team'];
export const SHARE_PAGE = '/chat/share';

/** The pages of the build in `dir`, for the base (buildServiceApp) to serve. */
export function platformWebApp(dir: string): NonNullable<ServiceAppOptions['webApp']> {
  return {
    dir,
    entries: [
      { html: 'index.html', paths: APP_PAGES },
      { html: 'share.html', paths: [SHARE_PAGE], exact: true },
    ],
    title: 'kbchat',
    note: 'The API answers under /api.',
  };
}
