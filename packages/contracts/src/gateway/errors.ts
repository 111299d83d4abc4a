// The gateway's errors: OpenAI's envelope, on the relay and the admin API alike.
import { z } from 'zod';

/** OpenAI's error envelope, which every gateway error is. */
export const openAIErrorSchema = z.object({
  error: z.object({
    message: z.string().describe('What went wrong, ending with (request id: …)'),
    type: z.string().describe('invalid_request_error, authentication_error, upstream_error, …'),
    code: z.string().nullable().describe('A stable machine code: invalid_field, invalid_api_key, insufficient_user_quota, model_not_found, …'),
    param: z.string().nullable().describe('The field at fault, where one is'),
  }),
});
export type OpenAIError = z.infer<typeof openAIErrorSchema>;
