// Checks of a service's API documents (/openapi.json, /docs) that the
// platform's and the gateway's tests share. The routes to compare with are
// recorded by the test itself (an onRoute hook on every Fastify instance, see
// recordRoutes), not taken from the document generator.
import { Validator } from '@seriousme/openapi-schema-validator';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { expect } from 'vitest';

export interface RecordedRoute {
  method: string;
  url: string;
}

/** Wraps Fastify's factory so that every route of every instance is recorded (for vi.mock('fastify')). */
export function recordingFastify<M extends { default: (...args: any[]) => any }>(mod: M, routes: RecordedRoute[]): M {
  const factory = (...args: any[]) => {
    const app = mod.default(...args);
    app.addHook('onRoute', (r: { method: string | string[]; url: string }) => {
      for (const method of [r.method].flat()) routes.push({ method, url: r.url });
    });
    return app;
  };
  return { ...mod, default: Object.assign(factory, mod.default), fastify: Object.assign(factory, mod.default) };
}

/** Fastify's path syntax in OpenAPI's: `:id` -> `{id}`, a trailing `*` -> `{*}` (as @fastify/swagger writes them). */
export function openApiPath(url: string): string {
  return url.replace(/:([A-Za-z0-9_]+)/g, '{$1}').replace(/\*$/, '{*}');
}

export type OpenApiDocument = { openapi: string; paths: Record<string, Record<string, any>>; components: Record<string, any> };

/** "METHOD path" of every operation in the document. */
export function operations(doc: OpenApiDocument): Set<string> {
  const out = new Set<string>();
  for (const [path, item] of Object.entries(doc.paths)) {
    for (const method of Object.keys(item)) out.add(`${method.toUpperCase()} ${path}`);
  }
  return out;
}

/**
 * The routes that must be in the document: all recorded ones but a HEAD that
 * Fastify adds beside each GET (the same handler) and what `notApi` says is
 * not API (web pages, static files, the docs page itself).
 */
export function apiRoutes(routes: RecordedRoute[], notApi: (url: string) => boolean): Set<string> {
  const gets = new Set(routes.filter((r) => r.method === 'GET').map((r) => r.url));
  return new Set(routes.filter((r) => !(r.method === 'HEAD' && gets.has(r.url)) && !notApi(r.url)).map((r) => `${r.method} ${openApiPath(r.url)}`));
}

/** The document is OpenAPI 3.1 (its own schema), and every schema in it compiles as JSON Schema 2020-12. */
export async function expectValidDocument(doc: OpenApiDocument): Promise<void> {
  expect(doc.openapi).toBe('3.1.0');
  const validator = new Validator();
  const result = await validator.validate(structuredClone(doc) as never);
  expect(result.errors ?? [], JSON.stringify(result.errors)).toEqual([]);
  expect(result.valid).toBe(true);
  expect(validator.version).toBe('3.1');
  const ajv = bodyValidator(doc);
  for (const [path, item] of Object.entries(doc.paths)) {
    for (const [method, op] of Object.entries(item)) {
      for (const media of Object.values<any>(op.requestBody?.content ?? {})) expect(() => ajv.compile(media.schema), `${method} ${path}`).not.toThrow();
      for (const p of op.parameters ?? []) expect(() => ajv.compile(p.schema), `${method} ${path} ${p.name}`).not.toThrow();
    }
  }
}

/** Ajv for the document's schemas (formats and OpenAPI's annotations such as contentSchema are not checked). */
function bodyValidator(doc: OpenApiDocument) {
  const ajv = new Ajv2020({ strict: false, validateFormats: false });
  ajv.addSchema({ $id: 'doc', components: doc.components });
  return ajv;
}

/** The JSON body schema of an operation, compiled. */
export function bodySchema(doc: OpenApiDocument, method: string, path: string) {
  const schema = doc.paths[path]?.[method]?.requestBody?.content?.['application/json']?.schema;
  expect(schema, `${method} ${path} has a JSON body schema`).toBeDefined();
  return bodyValidator(doc).compile(schema);
}

/**
 * /docs: an HTML page whose scripts, styles and icons all come from the
 * service itself (each fetched: 200), with no http(s):// address in it, and a
 * Content-Security-Policy that lets it load and call nothing else.
 */
export async function expectOfflineDocsPage(baseUrl: string): Promise<void> {
  const page = await fetch(`${baseUrl}/docs`);
  expect(page.status).toBe(200);
  expect(page.headers.get('content-type')).toMatch(/^text\/html/);
  const csp = page.headers.get('content-security-policy') ?? '';
  expect(csp).toContain("default-src 'self'");
  expect(csp).toContain("connect-src 'self'");
  const html = await page.text();
  expect(html).not.toMatch(/https?:\/\//);
  const assets = [...html.matchAll(/(?:src|href)="([^"]+)"/g)].map((m) => m[1]!);
  expect(assets.filter((a) => a.endsWith('.js')).length).toBeGreaterThanOrEqual(3);
  expect(assets.filter((a) => a.endsWith('.css')).length).toBeGreaterThanOrEqual(1);
  for (const asset of assets) {
    expect(asset, 'served by the service itself').toMatch(/^\/docs\//);
    const r = await fetch(`${baseUrl}${asset}`);
    expect(r.status, asset).toBe(200);
    expect((await r.arrayBuffer()).byteLength, asset).toBeGreaterThan(0);
  }
  // What the page loads its document from is this service's.
  const init = await (await fetch(`${baseUrl}/docs/static/swagger-initializer.js`)).text();
  expect(init).toContain("resolveUrl('./json')");
  expect(init).toContain('validatorUrl: null');
}
