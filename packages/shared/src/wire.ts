// Parsing the OpenAI-style requests the gateway accepts, with a 400 problem
// that names the field. The schemas themselves are @kbchat/contracts' (and
// re-exported here for the packages that read them from shared).
import type { z } from 'zod';
import { refusedField } from './field-messages.js';

export {
  chatRequestSchema,
  embeddingsRequestSchema,
  rerankRequestSchema,
  type ChatRequest,
  type EmbeddingsRequest,
  type RerankRequest,
} from '@kbchat/contracts/openai';

export interface FieldProblem {
  field: string;
  message: string;
}

/** Parses with a schema; on failure returns the first problem, naming the field. */
export function parseWith<T>(schema: z.ZodType<T>, value: unknown): { ok: true; value: T } | { ok: false; problem: FieldProblem } {
  const r = schema.safeParse(value);
  if (r.success) return { ok: true, value: r.data };
  const { field, need } = refusedField(r.error.issues[0]!, value);
  return { ok: false, problem: { field, message: `Invalid '${field}': ${need}` } };
}
