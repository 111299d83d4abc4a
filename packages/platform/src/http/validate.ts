// Request bodies, query strings and path parameters through zod, with a 400
// that names the field and says plainly what it needs.
//
// zodValidatorCompiler is the platform's Fastify validator (set once at the
// root, buildPlatformApp, over the document helper's noValidation): it runs the
// zod schema a route declares (`schema: { body, querystring, params }`, the
// same schema the API document is made from) and answers Fastify's
// { value } | { error }. Fastify puts `value` (zod's output: defaults filled,
// transforms applied) in req.body/query/params, and sends an Error through the
// error handler as it is (it only adds statusCode 400 and a code where absent;
// fastify/lib/validation.js), so the 400 is errors.badField's envelope.
import { refusedField } from '@kbchat/shared';
import type { FastifySchemaCompiler } from 'fastify';
import type { z } from 'zod';
import { errors } from './errors.js';

/** The badField error of an input the schema refuses (its first issue). */
function refusal(error: z.ZodError, input: unknown) {
  const { field, need } = refusedField(error.issues[0]!, input, 'body');
  return errors.badField(field, need);
}

/** An absent part (no body, no query) is validated as {}: a schema with only optional fields accepts it. */
export const zodValidatorCompiler: FastifySchemaCompiler<z.ZodType> =
  ({ schema }) =>
  (data) => {
    const input = data ?? {};
    const r = schema.safeParse(input);
    return r.success ? { value: r.data } : { error: refusal(r.error, input) };
  };

/** For what is validated by hand: a part the route reads itself (tus metadata, a multipart field). */
export function parseInput<T extends z.ZodType>(schema: T, input: unknown): z.infer<T> {
  const r = schema.safeParse(input ?? {});
  if (r.success) return r.data;
  throw refusal(r.error, input ?? {});
}
