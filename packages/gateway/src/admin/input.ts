// Input checks shared by the admin routes: JSON bodies through zod, query and
// path parameters by hand. Every problem is a 400 that names the field.
import { MAX_INT32, MAX_UNITS } from '@kbchat/contracts';
import { issuePath, refusedField } from '@kbchat/shared';
import type { FastifySchemaCompiler } from 'fastify';
import type { z } from 'zod';
import { errors } from '../errors.js';

export { MAX_INT32, MAX_UNITS };

/** The path of the first string holding a NUL character, which no store can keep in a text column. */
function nulField(value: unknown, path: PropertyKey[] = []): PropertyKey[] | undefined {
  if (typeof value === 'string') return value.includes('\u0000') ? path : undefined;
  if (value === null || typeof value !== 'object') return undefined;
  for (const [k, v] of Object.entries(value)) {
    const found = nulField(v, [...path, Array.isArray(value) ? Number(k) : k]);
    if (found) return found;
  }
  return undefined;
}

/** Parses a JSON body; a missing body counts as `{}` so that the first missing field is named. */
export function parseBody<T>(schema: z.ZodType<T>, value: unknown): T {
  const nul = nulField(value);
  if (nul) {
    const field = issuePath(nul) || '(body)';
    throw errors.badField(field, `Invalid '${field}': must not contain NUL characters`);
  }
  const r = schema.safeParse(value === undefined || value === null ? {} : value);
  if (r.success) return r.data;
  const { field, need } = refusedField(r.error.issues[0]!, value);
  throw errors.badField(field, `Invalid '${field}': ${need}`);
}

/**
 * The admin API's Fastify validator (set on the /api scope): a route's body
 * schema, checked as parseBody checks it, as Fastify's { value } | { error }.
 * Fastify sends the error (a GatewayError) to the error handler as it is.
 */
export const adminValidatorCompiler: FastifySchemaCompiler<z.ZodType> =
  ({ schema }) =>
  (data) => {
    try {
      return { value: parseBody(schema, data) };
    } catch (err) {
      return { error: err as Error };
    }
  };

/** For a route whose body schema is the API document's only: its handler parses the body itself. */
export const documentedOnly = () => () => true;

export interface IntOptions {
  min?: number;
  max?: number;
}

/** An optional integer query parameter; undefined when absent or empty. */
export function queryInt(raw: unknown, name: string, opts: IntOptions = {}): number | undefined {
  if (raw === undefined || raw === '') return undefined;
  if (typeof raw !== 'string' || !/^-?\d+$/.test(raw)) throw errors.badField(name, `Invalid '${name}': must be an integer`);
  const n = Number(raw);
  const min = opts.min ?? Number.MIN_SAFE_INTEGER;
  const max = opts.max ?? Number.MAX_SAFE_INTEGER;
  if (!Number.isSafeInteger(n) || n < min || n > max) {
    throw errors.badField(name, `Invalid '${name}': must be an integer from ${min} to ${max}`);
  }
  return n;
}

/** An optional string query parameter. */
export function queryString(raw: unknown, name: string): string | undefined {
  if (raw === undefined || raw === '') return undefined;
  if (typeof raw !== 'string') throw errors.badField(name, `Invalid '${name}': give it once, as a string`);
  if (raw.includes('\u0000')) throw errors.badField(name, `Invalid '${name}': must not contain NUL characters`);
  return raw;
}

/** `?q=`, a name search of a list (users, tokens): up to 100 characters, trimmed; undefined when empty. */
export function searchOf(raw: unknown): string | undefined {
  const s = queryString(raw, 'q')?.trim();
  if (s && s.length > 100) throw errors.badField('q', `Invalid 'q': at most 100 characters (got ${s.length})`);
  return s || undefined;
}

/** An optional time as epoch milliseconds or an ISO 8601 date / date-time. */
export function queryTime(raw: unknown, name: string): number | undefined {
  const s = queryString(raw, name);
  if (s === undefined) return undefined;
  if (/^\d+$/.test(s)) return queryInt(s, name, { min: 0 });
  const t = /^\d{4}-\d{2}-\d{2}/.test(s) ? Date.parse(s) : NaN;
  if (Number.isNaN(t) || t < 0) throw errors.badField(name, `Invalid '${name}': epoch milliseconds or an ISO 8601 time`);
  return t;
}

/** A numeric id from the path. */
export function pathId(raw: unknown, name = 'id'): number {
  const id = queryInt(raw, name, { min: 1, max: MAX_INT32 });
  if (id === undefined) throw errors.badField(name, `Invalid '${name}': required`);
  return id;
}

/** offset & limit of a list request. */
export function paging(query: Record<string, unknown>, maxLimit = 500, defaultLimit = 50): { offset: number; limit: number } {
  return {
    offset: queryInt(query.offset, 'offset', { min: 0, max: MAX_INT32 }) ?? 0,
    limit: queryInt(query.limit, 'limit', { min: 1, max: maxLimit }) ?? defaultLimit,
  };
}

/** Query object of a request (Fastify types it as unknown). */
export function queryOf(req: { query: unknown }): Record<string, unknown> {
  return (req.query ?? {}) as Record<string, unknown>;
}
