// A service's OpenAPI 3.1 document, generated from the zod schemas its routes
// declare in their options (`schema: { body, querystring, params, response }`), served at
// /openapi.json, with Swagger UI at /docs (its files come from the
// @fastify/swagger-ui package: nothing is fetched from elsewhere, and the page's
// Content-Security-Policy lets it fetch nothing but this service).
//
// @fastify/swagger collects the routes (onRoute) and fastify-type-provider-zod's
// transform turns each zod schema into JSON Schema 2020-12, the dialect of
// OpenAPI 3.1. No schema is compiled here (noValidation): each service sets
// the validator compiler that turns the same zod objects into its own 400s
// (the platform's http/validate.ts; the gateway's admin/input.ts for /api).
// The gateway's relay routes keep noValidation: their bodies are parsed by hand
// in front of Fastify, for speed. Authentication runs in onRequest hooks, so a
// request with no key is a 401 before its body is read.
//
// Register this before any route (routes declared before the plugin loads are
// not seen: declare them in app.after() or a plugin registered after this).
// The reference carries @fastify/swagger's route schema fields (summary, tags, security, hide) to the services' types.
/// <reference types="@fastify/swagger" preserve="true" />
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import type { FastifyInstance } from 'fastify';
import { createJsonSchemaTransform } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { answerSerializerCompiler } from './answer-check.js';

export const DOCS_PATH = '/docs';
export const DOCUMENT_PATH = '/openapi.json';

/** What a service says about itself; the paths come from its routes (plus `paths`, for routes Fastify never serves). */
export interface ApiDocsOptions {
  title: string;
  version: string;
  description: string;
  securitySchemes: Record<string, Record<string, unknown>>;
  /** The security of every operation that does not declare its own (`schema.security`, `[]` for an open route). */
  security: Record<string, string[]>[];
  /** The body of every error answer. */
  errorBody: z.ZodType;
  /** Path items added as they are (the gateway's relay POSTs, answered in front of Fastify). */
  paths?: Record<string, Record<string, unknown>>;
  /** The tag of an operation, from its path (groups the page). */
  tagOf: (url: string) => string;
  /** Where a service answers one shape (the platform's envelope): its name in components, and the paths that answer it. */
  success?: { name: string; description: string; body: z.ZodType; at: (url: string) => boolean };
}

/** Every route's schemas go to the document; a service compiles them with its own validator compiler (see above). */
const noValidation = () => () => true;

type Operation = { tags?: string[]; responses?: Record<string, unknown> };
/** What @fastify/swagger says of a 200 that no schema describes. */
const DEFAULT_RESPONSE = 'Default Response';

/** An answer's zod schema as JSON Schema 2020-12 (the document is built once, and cached by @fastify/swagger). */
const answerSchema = (body: z.ZodType) => z.toJSONSchema(body, { target: 'draft-2020-12', io: 'output', unrepresentable: 'any' });

export function registerApiDocs(app: FastifyInstance, opts: ApiDocsOptions): void {
  app.setValidatorCompiler(noValidation);
  // Declared answers are checked against their schemas (answer-check.ts).
  app.setSerializerCompiler(answerSerializerCompiler({ log: app.log }));
  const zodTransform = createJsonSchemaTransform({ skipList: [] });
  void app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: { title: opts.title, version: opts.version, description: opts.description },
      components: {
        securitySchemes: opts.securitySchemes as never,
        schemas: {
          Error: answerSchema(opts.errorBody) as never,
          ...(opts.success ? { [opts.success.name]: answerSchema(opts.success.body) as never } : {}),
        },
        responses: {
          Error: {
            description: 'An error: 4xx for the request (the message names the field), 5xx for the service or an upstream',
            headers: { 'x-request-id': { description: 'The request id, as the logs have it', schema: { type: 'string' } } },
            content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } },
          },
        },
      },
      security: opts.security,
      paths: structuredClone(opts.paths ?? {}) as never,
    },
    transform: (doc) => {
      const out = zodTransform(doc as never) as { schema?: Record<string, unknown>; url: string };
      const schema = { ...out.schema };
      if (!schema.hide) schema.tags ??= [opts.tagOf(out.url)];
      return { schema, url: out.url } as never;
    },
    // Every operation can fail: the service's error envelope, by reference; and the success
    // envelope where the service has one and the route declares no answer of its own.
    transformObject: (doc) => {
      const document = (doc as { openapiObject: { paths?: Record<string, Record<string, Operation>> } }).openapiObject;
      const { success } = opts;
      const successAnswer = success && {
        description: success.description,
        content: { 'application/json': { schema: { $ref: `#/components/schemas/${success.name}` } } },
      };
      for (const [url, item] of Object.entries(document.paths ?? {})) {
        for (const operation of Object.values(item)) {
          const answer = operation.responses?.['200'] as { description?: string; content?: unknown } | undefined;
          const undeclared = answer?.description === DEFAULT_RESPONSE && !answer.content;
          // A declared answer (200, 201…) keeps its schema, described as the service describes its answers (where it answers that shape).
          const description = success?.at(url) ? success.description : 'The answer';
          const declared = Object.fromEntries(
            Object.entries(operation.responses ?? {})
              .filter(
                ([status, a]) =>
                  status.startsWith('2') && (a as { content?: unknown }).content && (a as { description?: string }).description === DEFAULT_RESPONSE,
              )
              .map(([status, a]) => [status, { ...(a as object), description: status === '201' ? `Created: ${description.toLowerCase()}` : description }]),
          );
          const ok = successAnswer && undeclared && success.at(url) ? { 200: successAnswer } : declared;
          operation.responses = {
            ...operation.responses,
            ...ok,
            '4XX': { $ref: '#/components/responses/Error' },
            '5XX': { $ref: '#/components/responses/Error' },
          };
        }
      }
      return document as never;
    },
  });
  void app.register(swaggerUi, {
    routePrefix: DOCS_PATH,
    uiConfig: { deepLinking: true, docExpansion: 'none', tryItOutEnabled: false },
    theme: { title: `${opts.title}: API` },
    // The page may load and call nothing but this service.
    staticCSP:
      "default-src 'self'; img-src 'self' data:; script-src 'self'; style-src 'self' 'unsafe-inline'; connect-src 'self'; font-src 'self' data:; object-src 'none'; frame-ancestors 'self'; base-uri 'self'",
  });
  void app.register(async (scope) => {
    scope.get(DOCUMENT_PATH, { schema: { summary: 'This document (OpenAPI 3.1)', security: [], tags: ['documents'] } }, async () => app.swagger());
  });
}
