// A team's tool sources (tools/migration.ts).

/** How an OpenAPI operation is called: its method, path and where each argument goes. */
export interface OperationPlan {
  method: string;
  /** The path as the document writes it, with {name} for path parameters. */
  path: string;
  params: { name: string; in: 'path' | 'query' | 'header'; required: boolean }[];
  /** The argument that carries the JSON body (absent: the operation takes none). */
  bodyArg?: string;
  bodyRequired?: boolean;
}

/** A tool as last listed (tools, JSON). */
export interface StoredTool {
  name: string;
  description: string;
  inputSchema: Record<string, unknown>;
  /** An OpenAPI source's operation. */
  operation?: OperationPlan;
}

export interface ToolSourcesTable {
  id: string;
  team_id: string;
  type: 'mcp' | 'openapi';
  name: string;
  /** An MCP server's address, or where an OpenAPI document was fetched from. */
  url: string | null;
  /** A pasted OpenAPI document (a fetched one is fetched again on refresh). */
  document: string | null;
  /** Where an OpenAPI source's operations are called. */
  base_url: string | null;
  /** The MCP transport that worked: streamableHttp or sse. */
  transport: string | null;
  /** The headers sent with every request, as a JSON object sealed by the SecretBox; null: none. */
  headers_sealed: string | null;
  /** What the headers show: [{name, hint}] as JSON. */
  header_hints: string;
  /** The tools as last listed: StoredTool[] as JSON. */
  tools: string;
  listed_at: number;
  created_at: number;
  updated_at: number;
}

export interface ToolsTables {
  tool_sources: ToolSourcesTable;
}
