// Request bodies and query strings through zod, with a 400 that names the field.
import type { z } from 'zod';
import { errors } from './errors.js';

export function parseInput<T extends z.ZodType>(schema: T, input: unknown): z.infer<T> {
  const r = schema.safeParse(input ?? {});
  if (r.success) return r.data;
  const issue = r.error.issues[0]!;
  const field = issue.path.map((p) => (typeof p === 'number' ? `[${p}]` : `.${String(p)}`)).join('').replace(/^\./, '') || 'body';
  return (() => {
    throw errors.badField(field, issue.message);
  })();
}
