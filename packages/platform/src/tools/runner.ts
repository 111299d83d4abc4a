// What the chat takes from tool sources: the tools an application names, and
// a way to call one. The chat knows nothing of MCP or OpenAPI; ToolSources
// (service.ts) implements this over the team's stored sources.

/** A tool as the model is offered it, with the source it comes from. */
export interface ToolSpec {
  sourceId: string;
  sourceName: string;
  name: string;
  description: string;
  inputSchema: Record<string, unknown>;
}

export interface ToolCallResult {
  ok: boolean;
  /** What the model reads: the result (cut to a few thousand characters, said so), or the failure in words. */
  text: string;
  ms: number;
  error?: string;
}

export interface ToolRunner {
  /** The tools named, from the team's sources (as last listed); refs not found are returned in `missing` ("source/name"). */
  resolve(teamId: string, refs: { sourceId: string; name: string }[]): Promise<{ tools: ToolSpec[]; missing: string[] }>;
  /** Calls one tool; never throws for the tool's own failure or timeout (ok: false, error says what), only when `signal` aborts. */
  call(teamId: string, tool: ToolSpec, args: unknown, signal?: AbortSignal): Promise<ToolCallResult>;
}
