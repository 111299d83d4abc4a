// Anthropic's Messages request, as the gateway's POST /v1/messages takes it.
import { z } from 'zod';

const block = z.looseObject({ type: z.string() });
/** Anthropic's Messages request as the gateway's /v1/messages takes it (unknown fields pass). */
export const anthropicRequestSchema = z.looseObject({
  model: z.string().min(1, 'must be a non-empty string').max(200),
  max_tokens: z.number({ error: 'is required (an integer of at least 1)' }).int().min(1),
  messages: z.array(z.looseObject({ role: z.enum(['user', 'assistant']), content: z.union([z.string(), z.array(block)]) })).min(1, 'must be a non-empty array'),
  system: z.union([z.string(), z.array(block)]).optional(),
  stream: z.boolean().optional(),
  temperature: z.number().min(0).max(1).optional(),
  top_p: z.number().optional(),
  stop_sequences: z.array(z.string()).optional(),
  tools: z.array(z.looseObject({ name: z.string(), input_schema: z.looseObject({}).optional() })).optional(),
  tool_choice: z.looseObject({ type: z.enum(['auto', 'any', 'tool', 'none']), name: z.string().optional() }).optional(),
  metadata: z.looseObject({ user_id: z.string().optional() }).optional(),
});
export type AnthropicRequest = z.infer<typeof anthropicRequestSchema>;
