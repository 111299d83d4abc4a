// FastGPT's envelope, which the platform's management API answers with, and
// its error body.
import { z } from 'zod';

/** What every platform error answers; the chat endpoint adds OpenAI's `error` object beside it. */
export const errorBodySchema = z.object({
  code: z.number().int().describe('The HTTP status'),
  statusText: z.string().describe('A stable machine code: invalid_field, unauthorized, not_found, conflict, too_large, …'),
  message: z.string().describe("What went wrong; a bad field is named as Invalid '<field>': …"),
  data: z.null(),
  error: z
    .object({ message: z.string(), type: z.string(), code: z.string() })
    .optional()
    .describe('POST /api/v1/chat/completions only: the same, as OpenAI clients read it'),
});

/** What every management route answers (the platform's ok()), `data` being the route's own answer. */
export const envelopeSchema = z.object({
  code: z.literal(200),
  statusText: z.literal(''),
  message: z.string().describe('Empty, or the warnings of a settings change (accepted, but not working as asked)'),
  data: z.unknown().describe('The answer'),
});
export type PlatformErrorBody = z.infer<typeof errorBodySchema>;

/** The envelope of one route's answer: what its `schema.response[200]` declares. */
export const envelopeOf = <T extends z.ZodType>(data: T) => envelopeSchema.extend({ data });
