// Request bodies and query strings through zod, with a 400 that names the field
// and says plainly what it needs.
import { refusedField } from '@kbchat/shared';
import type { z } from 'zod';
import { errors } from './errors.js';

export function parseInput<T extends z.ZodType>(schema: T, input: unknown): z.infer<T> {
  const r = schema.safeParse(input ?? {});
  if (r.success) return r.data;
  const { field, need } = refusedField(r.error.issues[0]!, input ?? {}, 'body');
  return (() => {
    throw errors.badField(field, need);
  })();
}
