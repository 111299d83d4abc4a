// An application's tools for MCP clients: `ask`, one chat turn run exactly as
// the chat endpoint runs it (chat/turn.ts: history, storing with a chatId,
// costs), and, where the application has knowledge bases, `search`, the
// search its chat's search step makes. No HTTP here: routes.ts authenticates
// and hands the request to the SDK's transport, with a server made here.
import { createRequire } from 'node:module';
import {
  mcpAskInput,
  mcpAskOutput,
  mcpSearchInput,
  mcpSearchOutput,
  type McpAskOutput,
  type McpCitation,
  type McpSearchOutput,
  type SearchResultItem,
} from '@kbchat/contracts';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { App } from '../apps/service.js';
import type { StepRecord } from '../chat/records.js';
import { beginChatTurn, type AppCaller, type TurnDeps, type TurnLog } from '../chat/turn.js';
import type { PlatformError } from '../http/errors.js';
import { appSearchRequest } from '../search/app-search.js';
import type { SearchService } from '../search/service.js';

const { version } = createRequire(import.meta.url)('../../package.json') as { version: string };

export interface AppMcpDeps extends TurnDeps {
  search: SearchService;
  /** CHAT_ON_DISCONNECT=stop: a stored turn's answer stops when its client leaves, as the chat endpoint's does. */
  stopOnDisconnect: boolean;
}

/** What a tool call needs of the HTTP request it came in. */
export interface McpCallContext {
  requestId: string;
  /** An error as the platform reports it (chat/routes.ts chatError). */
  toError(err: unknown): PlatformError;
  log: TurnLog;
  /** Aborted when the client goes away before its answer. */
  gone: AbortSignal;
}

export class AppMcpService {
  constructor(private readonly deps: AppMcpDeps) {}

  /** The application's MCP server for one request: the transport is stateless, so a server lives as long as its request. */
  server(caller: AppCaller, app: App, ctx: McpCallContext): McpServer {
    const server = new McpServer({ name: 'kbchat', title: app.name, version }, app.intro ? { instructions: app.intro } : undefined);
    server.registerTool(
      'ask',
      {
        title: `Ask ${app.name}`,
        description:
          `Ask the application "${app.name}" a question: one turn of its chat, answered by its model` +
          (app.settings.datasets.length ? ' from its knowledge bases, with the quotes it was given as citations' : '') +
          '. With a chatId the turn is stored in that chat, whose earlier turns are the history.',
        inputSchema: mcpAskInput,
        outputSchema: mcpAskOutput,
        // A chatId stores the turn: not read-only.
        annotations: { readOnlyHint: false, destructiveHint: false, openWorldHint: false },
      },
      (args) => this.ask(caller, app, args, ctx),
    );
    if (app.settings.datasets.length) {
      server.registerTool(
        'search',
        {
          title: `Search ${app.name}'s knowledge bases`,
          description: `Search the knowledge bases of "${app.name}" as its chat does (its search mode, similarity, limit and rerank), without an answer: the quotes found, best first.`,
          inputSchema: mcpSearchInput,
          outputSchema: mcpSearchOutput,
          annotations: { readOnlyHint: true, openWorldHint: false },
        },
        (args) => this.search(caller, app, args.query, ctx),
      );
    }
    return server;
  }

  /**
   * The answer is the first text content (what an agent reads and shows);
   * the citations are a second text content, for a client or model that reads
   * only content, and both are structuredContent (typed by the tool's
   * outputSchema) for programs. Any failure is a tool error with the request id.
   */
  async ask(caller: AppCaller, app: App, args: { question: string; chatId?: string }, ctx: McpCallContext): Promise<CallToolResult> {
    try {
      const turn = await beginChatTurn(this.deps, {
        caller,
        app,
        question: args.question,
        chatId: args.chatId,
        messages: [],
        stream: false,
        requestId: ctx.requestId,
        toError: ctx.toError,
        log: ctx.log,
      });
      ctx.gone.addEventListener('abort', () => turn.clientGone(this.deps.stopOnDisconnect), { once: true });
      const outcome = await turn.run();
      if (outcome.status === 'failed') return toolError(outcome.error, ctx.requestId);
      const answer: McpAskOutput =
        outcome.status === 'done'
          ? { answer: outcome.result.content, citations: citationsOf(outcome.result.responseData), requestId: ctx.requestId }
          : { answer: outcome.content, citations: [], stopped: true, requestId: ctx.requestId };
      if (args.chatId) answer.chatId = args.chatId;
      const content: CallToolResult['content'] = [{ type: 'text', text: answer.answer }];
      if (answer.citations.length) content.push({ type: 'text', text: citationsText(answer.citations) });
      return { content, structuredContent: answer };
    } catch (err) {
      return toolError(ctx.toError(err), ctx.requestId);
    }
  }

  /** The query as given: query extension rewrites a chat's question from its history, and an agent writes its own query. */
  async search(caller: AppCaller, app: App, query: string, ctx: McpCallContext): Promise<CallToolResult> {
    try {
      const search = this.deps.search.forRequest(ctx.requestId);
      const r = await search.search(caller, appSearchRequest(app.settings.search, app.settings.datasets, query));
      const found: McpSearchOutput = {
        quotes: r.list.map((q) => ({ ...citation(q), score: q.score.map((s) => ({ type: s.type, value: s.value })) })),
        requestId: ctx.requestId,
      };
      const text = found.quotes.length ? citationsText(found.quotes) : `Nothing found for "${query}".`;
      return { content: [{ type: 'text', text }], structuredContent: found };
    } catch (err) {
      return toolError(ctx.toError(err), ctx.requestId);
    }
  }
}

/** A tool error: the model or the client reads why, and the request id leads to the logs and the gateway's calls. */
function toolError(e: PlatformError, requestId: string): CallToolResult {
  return { isError: true, content: [{ type: 'text', text: `${e.message} (${e.statusText}, request id ${requestId})` }] };
}

function citation(q: SearchResultItem): McpCitation {
  return { id: q.id, datasetId: q.datasetId, collectionId: q.collectionId, sourceName: q.sourceName, text: q.a ? `${q.q}\n${q.a}` : q.q };
}

/** The quotes the answering model was given: the dataset search step's list (none when no search ran). */
function citationsOf(records: StepRecord[]): McpCitation[] {
  return records.filter((r) => r.moduleType === 'datasetSearchNode').flatMap((r) => ((r.quoteList as SearchResultItem[] | undefined) ?? []).map(citation));
}

function citationsText(quotes: McpCitation[]): string {
  return ['Sources:', ...quotes.map((q, i) => `[${i + 1}] ${q.sourceName}: ${q.text}`)].join('\n');
}
