// The web app (packages/web, built into its dist/ by `npm ci`) at the
// platform's root: index.html at / and at every page of the app (the browser
// routes within them), share.html at /chat/share (the public page of a share
// link), hashed assets under /assets/ cached for a year; a 503 that says how
// to build it where it was not built (@kbchat/server-kit serves it, as it
// does the gateway's console).
import type { ServiceAppOptions } from '@kbchat/server-kit';
import type { FastifyRequest } from 'fastify';

/** The app's own pages (its router's top-level paths): each is index.html. */
export const APP_PAGES = ['/', '/datasets', '/apps', '/tools', '/chat', '/keys', '/models', '/team'];
export const SHARE_PAGE = '/chat/share';

/** The sites that may frame a share link's page (empty: any), for its Content-Security-Policy. */
export type ShareFrameOrigins = (shareId: string) => Promise<string[]>;

/**
 * The share page's frame-ancestors: the link's allowed origins (and the
 * platform itself, for the web app's preview). A link with none, or an
 * unknown link (the page then says so itself), may be framed anywhere.
 */
async function sharePageHeaders(req: FastifyRequest, origins: ShareFrameOrigins): Promise<Record<string, string>> {
  // The page reads the first shareId of its address (URLSearchParams.get): so does this, also when the query repeats it.
  const raw = (req.query as Record<string, unknown> | undefined)?.shareId;
  const shareId = Array.isArray(raw) ? raw[0] : raw;
  if (typeof shareId !== 'string' || !shareId) return {};
  let allowed: string[];
  try {
    allowed = await origins(shareId);
  } catch {
    // The link's rule could not be read: closed, not open.
    return { 'content-security-policy': "frame-ancestors 'self'" };
  }
  return allowed.length ? { 'content-security-policy': `frame-ancestors 'self' ${allowed.join(' ')}` } : {};
}

/** The pages of the build in `dir`, for the base (buildServiceApp) to serve. */
export function platformWebApp(dir: string, shareFrameOrigins: ShareFrameOrigins): NonNullable<ServiceAppOptions['webApp']> {
  return {
    dir,
    entries: [
      { html: 'index.html', paths: APP_PAGES },
      { html: 'share.html', paths: [SHARE_PAGE], exact: true, headers: (req) => sharePageHeaders(req, shareFrameOrigins) },
    ],
    title: 'kbchat',
    note: 'The API answers under /api.',
  };
}
