// An application as an MCP server (POST /api/mcp/app/:appId, Streamable
// HTTP): the route's path, the JSON-RPC messages the API document shows, and
// the tools' input and output schemas, which tools/list sends as JSON Schema.
import { z } from 'zod';
import { id } from './common.js';
import { searchScoreSchema } from './search.js';

export const mcpAppParams = z.object({ appId: id });

/** One JSON-RPC 2.0 message, as the document shows it: the SDK reads the rest (an unknown method is its JSON-RPC error). */
const jsonRpcMessage = z.looseObject({
  jsonrpc: z.literal('2.0'),
  id: z.union([z.string(), z.number()]).optional().describe('Absent for a notification (answered 202, no body)'),
  method: z.string().optional().describe('initialize, tools/list, tools/call, ping, notifications/initialized, …'),
  params: z.record(z.string(), z.unknown()).optional(),
});
export const mcpRequestBody = z.union([jsonRpcMessage, z.array(jsonRpcMessage).min(1).max(100)]);

const jsonRpcAnswer = z.looseObject({
  jsonrpc: z.literal('2.0'),
  id: z.union([z.string(), z.number(), z.null()]),
  result: z.record(z.string(), z.unknown()).optional(),
  error: z.object({ code: z.number().int(), message: z.string(), data: z.unknown().optional() }).optional(),
});
export const mcpAnswerSchema = z.union([jsonRpcAnswer, z.array(jsonRpcAnswer)]);

/** The `ask` tool's arguments: one chat turn of the application. */
export const mcpAskInput = z.object({
  question: z.string().trim().min(1).describe('The question, as a user would ask it in the chat'),
  chatId: id.optional().describe('A chat to continue and store this turn in (its earlier turns are the history); without one, nothing is stored'),
});
export type McpAskInput = z.input<typeof mcpAskInput>;

/** A quote the answer was given, from the application's knowledge bases. */
export const mcpCitationSchema = z.object({
  id: z.string().describe('The data item'),
  datasetId: z.string(),
  collectionId: z.string(),
  sourceName: z.string().describe('The document (collection) the quote is from'),
  text: z.string().describe('The quote: its question/text, and its answer where it has one'),
});
export type McpCitation = z.infer<typeof mcpCitationSchema>;

export const mcpAskOutput = z.object({
  answer: z.string(),
  citations: z.array(mcpCitationSchema).describe('The quotes the answering model was given, best first'),
  chatId: z.string().optional().describe('The chat the turn is stored in'),
  stopped: z.boolean().optional().describe('The answer was stopped by its asker (POST /api/core/chat/item/stop): what was made so far'),
  requestId: z.string().describe("The platform's request id (the logs', and the gateway's calls are <requestId>-<n>)"),
});
export type McpAskOutput = z.infer<typeof mcpAskOutput>;

/** The `search` tool's arguments: the application's knowledge bases, searched with its settings. */
export const mcpSearchInput = z.object({
  query: z.string().trim().min(1).describe('What to search for'),
});
export type McpSearchInput = z.input<typeof mcpSearchInput>;

export const mcpSearchOutput = z.object({
  quotes: z.array(
    mcpCitationSchema.extend({
      score: z.array(searchScoreSchema.pick({ type: true, value: true })).describe('Its score in each ranking (embedding, fullText, reRank, rrf)'),
    }),
  ),
  requestId: z.string(),
});
export type McpSearchOutput = z.infer<typeof mcpSearchOutput>;
