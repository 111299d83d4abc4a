// /api/core/tool/source/*: a team's tool sources: MCP servers (Streamable HTTP
// or the older HTTP+SSE) and HTTP APIs described by an OpenAPI 3 document. Each
// lists its tools when added and on refresh; an application names the tools it
// offers its model. Headers (an Authorization) are kept sealed and shown only
// as a hint ("Bearer …abcd").
import { z } from 'zod';
import { id } from './common.js';

export const toolSourceTypeSchema = z.enum(['mcp', 'openapi']);

const httpUrl = z
  .string()
  .trim()
  .max(2000)
  .refine((u) => /^https?:\/\/[^\s/?#]+([/?#]\S*)?$/i.test(u), 'an http:// or https:// address');

/** A header's name as HTTP allows it (a token). */
const headerName = z.string().regex(/^[!#$%&'*+.^_`|~0-9A-Za-z-]{1,100}$/, 'a header name (letters, digits and - only)');
const headerValue = z
  .string()
  .max(8000)
  .refine((v) => !/[\r\n\0]/.test(v), 'a header value on one line');
const headers = z
  .record(headerName, headerValue)
  .refine((h) => Object.keys(h).length <= 20, 'at most 20 headers')
  .describe('Sent with every request to the source (e.g. {"Authorization": "Bearer …"}); stored sealed, never shown whole');

export const createToolSourceBody = z
  .object({
    type: toolSourceTypeSchema,
    name: z.string().trim().min(1).max(200),
    /** An MCP server's address, or where to fetch an OpenAPI document. */
    url: httpUrl.optional(),
    /** An OpenAPI 3 document, pasted: JSON or YAML text, or the object. */
    document: z.union([z.string().min(1).max(2_000_000), z.record(z.string(), z.unknown())]).optional(),
    /** Where an OpenAPI source's operations are called; absent: the document's first server. */
    baseUrl: httpUrl.optional(),
    headers: headers.optional(),
  })
  .superRefine((b, ctx) => {
    if (b.type === 'mcp') {
      if (!b.url) ctx.addIssue({ code: 'custom', path: ['url'], message: "an MCP source needs the server's url" });
      if (b.document !== undefined) ctx.addIssue({ code: 'custom', path: ['document'], message: 'an MCP source has no document' });
      if (b.baseUrl !== undefined) ctx.addIssue({ code: 'custom', path: ['baseUrl'], message: 'an MCP source has no baseUrl' });
    } else if ((b.url === undefined) === (b.document === undefined)) {
      ctx.addIssue({ code: 'custom', path: ['document'], message: 'an OpenAPI source needs either the document or its url (one of them)' });
    }
  });
export type CreateToolSourceBody = z.input<typeof createToolSourceBody>;

export const toolSourceIdQuery = z.object({ id });
export const refreshToolSourceBody = z.object({ id });

export const publicToolSchema = z.object({
  name: z.string(),
  description: z.string(),
  /** JSON Schema of the arguments. */
  inputSchema: z.record(z.string(), z.unknown()),
});
export type PublicTool = z.infer<typeof publicToolSchema>;

export const publicToolSourceSchema = z.object({
  _id: z.string(),
  id: z.string(),
  type: toolSourceTypeSchema,
  name: z.string(),
  url: z.string().optional(),
  baseUrl: z.string().optional(),
  /** The MCP transport that reached the server. */
  transport: z.enum(['streamableHttp', 'sse']).optional(),
  /** The headers' names, each with a hint of its value ("Bearer …abcd"). */
  headers: z.array(z.object({ name: z.string(), hint: z.string() })),
  toolCount: z.number(),
  /** When the tools were last listed. */
  listTime: z.string(),
  createTime: z.string(),
  updateTime: z.string(),
});
export type PublicToolSource = z.infer<typeof publicToolSourceSchema>;

export const toolSourceDetailSchema = publicToolSourceSchema.extend({ tools: z.array(publicToolSchema) });
export type ToolSourceDetail = z.infer<typeof toolSourceDetailSchema>;
