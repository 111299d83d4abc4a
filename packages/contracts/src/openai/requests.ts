// Wire schemas for the OpenAI-style requests the gateway accepts. They check
// only what the gateway itself relies on and pass every other field through
// untouched (looseObject), so new OpenAI fields keep working without a release.
import { z } from 'zod';

// Model names end up in log columns and URLs: printable, and not absurdly long.
const modelName = z
  .string()
  .min(1, 'must be a non-empty string')
  .max(200, 'must be at most 200 characters')
  // eslint-disable-next-line no-control-regex -- the control characters are what it refuses
  .regex(/^[^\u0000-\u001f\u007f]+$/, 'must not contain control characters');

const role = z.enum(['system', 'developer', 'user', 'assistant', 'tool', 'function']);

const chatMessage = z.looseObject({
  role,
  content: z.union([z.string(), z.array(z.looseObject({ type: z.string() })), z.null()]).optional(),
  tool_calls: z.array(z.looseObject({ id: z.string().optional(), type: z.string().optional() })).optional(),
  tool_call_id: z.string().optional(),
  name: z.string().optional(),
});

export const chatRequestSchema = z.looseObject({
  model: modelName,
  messages: z.array(chatMessage).min(1, 'must be a non-empty array'),
  stream: z.boolean().optional(),
  stream_options: z.looseObject({ include_usage: z.boolean().optional() }).nullable().optional(),
  max_tokens: z.number().int().positive().nullable().optional(),
  max_completion_tokens: z.number().int().positive().nullable().optional(),
  temperature: z.number().min(0).max(2).nullable().optional(),
  n: z.number().int().min(1).max(128).nullable().optional(),
  tools: z.array(z.looseObject({ type: z.string(), function: z.looseObject({ name: z.string() }).optional() })).optional(),
  tool_choice: z.union([z.string(), z.looseObject({ type: z.string() })]).optional(),
});
export type ChatRequest = z.infer<typeof chatRequestSchema>;

export const embeddingsRequestSchema = z.looseObject({
  model: modelName,
  input: z.union([
    z.string().min(1, 'must not be empty'),
    z.array(z.string().min(1, 'must not be empty')).min(1, 'must be a non-empty array').max(2048, 'has more than 2048 items'),
    z.array(z.number().int()).min(1),
    z.array(z.array(z.number().int()).min(1)).min(1).max(2048),
  ]),
  encoding_format: z.enum(['float', 'base64']).optional(),
  dimensions: z.number().int().positive().optional(),
});
export type EmbeddingsRequest = z.infer<typeof embeddingsRequestSchema>;

export const rerankRequestSchema = z.looseObject({
  model: modelName,
  query: z.string().min(1, 'must be a non-empty string'),
  documents: z.array(z.union([z.string(), z.looseObject({ text: z.string() })])).min(1, 'must be a non-empty array'),
  top_n: z.number().int().positive().optional(),
});
export type RerankRequest = z.infer<typeof rerankRequestSchema>;
