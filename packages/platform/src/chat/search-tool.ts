// The application's knowledge-base search offered to the model as a tool
// (`search.asTool`): the model searches when it chooses, for the query it
// writes, any number of times, instead of the question being searched before
// it answers. The tool runs beside the team's tools: a ToolRunner that answers
// its own tool and hands every other to the team's sources.
import type { ToolCallResult, ToolRunner, ToolSpec } from '../tools/runner.js';
import type { QuoteItem } from './prompt.js';

export const KNOWLEDGE_BASE_TOOL: ToolSpec = {
  sourceId: 'knowledge-base',
  sourceName: 'Knowledge base',
  name: 'search_knowledge_base',
  description: "Searches the application's knowledge bases and returns the passages that match, each with its source. Use it for any question they may answer.",
  inputSchema: {
    type: 'object',
    properties: { query: { type: 'string', description: 'What to look for: a question or keywords, in the language of the documents' } },
    required: ['query'],
  },
};

/** The quotes as the model reads them: numbered, each with its source. */
export function quotesText(quotes: QuoteItem[]): string {
  if (quotes.length === 0) return 'Nothing in the knowledge base matches this query.';
  return quotes.map((q, i) => `[${i + 1}] ${q.sourceName}\n${q.q}${q.a ? `\n${q.a}` : ''}`).join('\n\n');
}

/** A runner that answers the knowledge-base tool with `search` and hands the others to `team` (none: they fail, said so). */
export function withSearchTool(team: ToolRunner | undefined, search: (query: string) => Promise<QuoteItem[]>): ToolRunner {
  return {
    resolve: (teamId, refs) => (team ? team.resolve(teamId, refs) : Promise.resolve({ tools: [], missing: refs.map((r) => `${r.sourceId}/${r.name}`) })),
    async call(teamId, tool, args, signal): Promise<ToolCallResult> {
      if (tool.sourceId !== KNOWLEDGE_BASE_TOOL.sourceId) {
        if (team) return team.call(teamId, tool, args, signal);
        return { ok: false, text: 'no tool sources here', ms: 0, error: 'no tool sources here' };
      }
      const started = performance.now();
      const query = typeof (args as { query?: unknown })?.query === 'string' ? (args as { query: string }).query.trim() : '';
      const ms = () => Math.round(performance.now() - started);
      if (!query) return { ok: false, text: "the argument 'query' is required", ms: 0, error: "the argument 'query' is required" };
      try {
        return { ok: true, text: quotesText(await search(query)), ms: ms() };
      } catch (err) {
        // Reported to the model like any tool's failure: the answer says the search failed.
        const message = (err as Error).message;
        return { ok: false, text: `the search failed: ${message}`, ms: ms(), error: message };
      }
    },
  };
}
