// What a provider is told about a channel and what it answers with: apart
// from types.ts so that wire.ts can use them without a cycle.

export type Endpoint = 'chat' | 'embeddings' | 'rerank';

export interface ChannelOptions {
  /** Send stream_options.include_usage upstream (off for upstreams that reject it). */
  streamUsage?: boolean;
  /** Azure OpenAI api-version; for Anthropic channels, the anthropic-version header. */
  apiVersion?: string;
  /** Per-model endpoint kind where the name does not tell (used by tests and /v1/models). */
  modelTypes?: Record<string, Endpoint>;
  /** Extra facts per model shown by /v1/models (local models: supports_tools, dimensions, description). */
  modelInfo?: Record<string, Record<string, unknown>>;
}

export interface UpstreamTarget {
  url: string;
  headers: Record<string, string>;
}
