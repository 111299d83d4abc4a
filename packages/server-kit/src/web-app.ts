// A built single-page web app (packages/web's dist/) served by a service: each
// HTML entry at its pages (the browser routes within them), with no-cache so
// that a rebuild is picked up, and the hashed assets under /assets/ cached for
// a year. Where the build or an entry is missing, those pages answer 503 with
// how to build it, instead of a 404. The app's icon (public/favicon.svg in the
// build) answers at /favicon.svg, which the entries link, and at /favicon.ico,
// which browsers ask for on their own: a 404 there is a console error on
// every page. Used by the platform (its app) and the gateway (its console),
// through buildServiceApp's `webApp`.
import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import fastifyStatic from '@fastify/static';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';

/** The package whose build the services serve; its package.json exports its dist/. */
const WEB_PACKAGE = '@kbchat/web';

/**
 * The web app's build folder (dist/ of @kbchat/web), found through the package
 * as the service at `from` (its import.meta.url), which declares the
 * dependency, resolves it: not through the folders' layout.
 */
export function webAppDist(from: string | URL): string {
  return join(dirname(createRequire(from).resolve(`${WEB_PACKAGE}/package.json`)), 'dist');
}

export interface WebAppEntry {
  /** The HTML file in the dist folder, e.g. index.html. */
  html: string;
  /** The paths that answer it: '/' exactly; any other path also with its sub-paths (`/x` and `/x/*`). */
  paths: string[];
  /** Exact paths only, no sub-paths (a page inside another entry's tree, e.g. /chat/share). */
  exact?: boolean;
  /**
   * Headers of the page for this request (the share page's frame-ancestors,
   * from its link). Without it a page may be framed by its own origin only
   * (SAME_ORIGIN_FRAMES): no other site can lay it under a decoy (clickjacking).
   */
  headers?: (req: FastifyRequest) => Promise<Record<string, string>>;
}

export const SAME_ORIGIN_FRAMES = { 'content-security-policy': "frame-ancestors 'self'" };

export interface WebAppOptions {
  /** The title of the 503 note. */
  title: string;
  /** What else the service answers, said in the 503 note, e.g. "The API answers under /api." */
  note?: string;
}

/** The Fastify paths of an entry's pages. */
export function pagePaths(entry: WebAppEntry): string[] {
  return entry.paths.flatMap((path) => (path === '/' || entry.exact ? [path] : [path, `${path}/*`]));
}

/** Pages, not API: kept out of a service's API document (openapi.ts). */
const HIDDEN = { schema: { hide: true } };

export function serveWebApp(app: FastifyInstance, dir: string, entries: WebAppEntry[], opts: WebAppOptions): void {
  const missing = entries.map((e) => join(dir, e.html)).find((file) => !existsSync(file));
  if (missing) {
    const notBuilt =
      `<!doctype html><meta charset="utf-8"><title>${escapeHtml(opts.title)}</title>` +
      `<p>The web app is not built (no ${escapeHtml(missing)}). Run <code>npm run build -w packages/web</code> (npm ci does it), then restart.` +
      `${opts.note ? ` ${escapeHtml(opts.note)}` : ''}</p>`;
    for (const path of entries.flatMap(pagePaths))
      app.get(path, HIDDEN, async (_req, reply) => reply.code(503).type('text/html; charset=utf-8').send(notBuilt));
    return;
  }
  // Read once: they are small, and a rebuild comes with a restart.
  const html = (file: Buffer, headers: WebAppEntry['headers']) => async (req: FastifyRequest, reply: FastifyReply) => {
    reply.headers(headers ? await headers(req) : SAME_ORIGIN_FRAMES);
    return reply.type('text/html; charset=utf-8').header('cache-control', 'no-cache').send(file);
  };
  // An exact path is more specific than another entry's `/x/*`, so find-my-way takes it first.
  for (const entry of entries) {
    const page = html(readFileSync(join(dir, entry.html)), entry.headers);
    for (const path of pagePaths(entry)) app.get(path, HIDDEN, page);
  }
  void app.register(fastifyStatic, { root: join(dir, 'assets'), prefix: '/assets/', immutable: true, maxAge: '365d', decorateReply: false, index: false });
  const iconFile = join(dir, ICON);
  if (existsSync(iconFile)) {
    const icon = readFileSync(iconFile);
    const answer = async (_req: unknown, reply: FastifyReply) => reply.type('image/svg+xml').header('cache-control', 'public, max-age=86400').send(icon);
    for (const path of ICON_PATHS) app.get(path, HIDDEN, answer);
  }
}

/** The app's icon in the build (Vite copies packages/web/public/ to the dist root). */
const ICON = 'favicon.svg';
/** Where it answers: what the HTML entries link, and what browsers ask for without a link (an SVG served as such; browsers read it by its type). */
export const ICON_PATHS = ['/favicon.svg', '/favicon.ico'];

function escapeHtml(s: string): string {
  return s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

/**
 * A browser's page address that is not valid percent-encoding
 * (/datasets/%E0%A4%A): Fastify refuses it before any route matches
 * (FST_ERR_BAD_URL). A service's `frameworkErrors` offers it here first: a
 * page navigation (GET, HTML accepted, outside `apiPrefixes`) gets a short
 * page that says so and links to the app, not the API's JSON; true when it
 * answered.
 */
export function answerBadPageAddress(
  err: { code?: string },
  req: FastifyRequest,
  reply: FastifyReply,
  opts: { title: string; apiPrefixes: string[] },
): boolean {
  if (err.code !== 'FST_ERR_BAD_URL' || req.method !== 'GET' || !String(req.headers.accept ?? '').includes('text/html')) return false;
  if (opts.apiPrefixes.some((prefix) => req.url.startsWith(prefix))) return false;
  const page =
    `<!doctype html><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>${escapeHtml(opts.title)}</title>` +
    `<main style="font-family: system-ui, sans-serif; max-width: 40rem; margin: 3rem auto; padding: 0 1rem">` +
    `<h1>This address is not valid</h1><p><code style="overflow-wrap: anywhere">${escapeHtml(req.url)}</code> holds a % that does not start a valid escape (a special character copied in part?).</p>` +
    `<p><a href="/">Open ${escapeHtml(opts.title)}</a></p></main>`;
  void reply.code(400).type('text/html; charset=utf-8').header('cache-control', 'no-cache').send(page);
  return true;
}
