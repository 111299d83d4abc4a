// Public and internal types of the upstream simulator.

/** Options of startUpstreamSim(); each unset one falls back to its SIM_* env var, then to its default. */
export interface UpstreamSimOptions {
  /** TCP port; 0 (the default) picks a free one. */
  port?: number;
  /** Interface to listen on (default 127.0.0.1). */
  host?: string;
  /** When set, every /v1 request must carry "Authorization: Bearer <key>" (env SIM_API_KEY). */
  key?: string;
  /** Further keys it takes besides `key` (a key pool's good keys). */
  keys?: string[];
  /**
   * Keys it knows whose quota is used up: answered as each provider does
   * (OpenAI: 429 insufficient_quota; Gemini: 429 RESOURCE_EXHAUSTED; Anthropic:
   * 400 "Your credit balance is too low").
   */
  exhaustedKeys?: string[];
  /** Words in a chat answer (env SIM_TOKENS, default 20). */
  tokens?: number;
  /** Delay between streamed chunks (env SIM_TOKEN_DELAY_MS, default 0). */
  tokenDelayMs?: number;
  /** Delay per embeddings request (env SIM_EMBED_DELAY_MS, default 0). */
  embedDelayMs?: number;
  /** How long sim-slow waits before answering (env SIM_SLOW_MS, default 3000). */
  slowMs?: number;
  /** Requests a minute before 429 (env SIM_RPM, default 0 = unlimited). */
  rpm?: number;
  /** Retry-After (seconds) on those 429s (env SIM_RETRY_AFTER, default none). */
  retryAfterSeconds?: number;
}

/** What reached the simulator: counts of parsed requests plus the last bodies and auth presence. */
export interface SimStats {
  total: number;
  /** Requests per model name, exactly as sent (suffixes included). */
  byModel: Record<string, number>;
  /** Requests per URL path. */
  byPath: Record<string, number>;
  /** The last parsed request body, per model name as sent. */
  lastBody: Record<string, unknown>;
  /** The last counted request; `authorization` says whether the header was present (never its value). */
  lastRequest: {
    method: string;
    path: string;
    model: unknown;
    authorization: boolean;
    /** its X-Kbchat-Priority header, null when none came */ kbchatPriority: string | null;
  } | null;
}

/** A running simulator. */
export interface UpstreamSim {
  /** Base URL without /v1, e.g. http://127.0.0.1:4010. */
  url: string;
  port: number;
  /** A snapshot (copy) of the counters. */
  stats(): SimStats;
  /** Clears the counters, last bodies and sim-flaky counts (same as POST /sim/reset). */
  reset(): void;
  /** Stops listening and destroys every open socket (keep-alive, sim-hang), so callers end promptly. */
  close(): Promise<void>;
}

/** Options after defaults are applied. */
export interface SimConfig {
  key: string;
  /** Every key it takes (`key` and `keys`); empty: no key needed. */
  keys: string[];
  exhaustedKeys: string[];
  tokens: number;
  tokenDelayMs: number;
  embedDelayMs: number;
  slowMs: number;
  rpm: number;
  retryAfterSeconds: number;
}

// Request bodies are untrusted JSON: fields are typed loosely and checked where the reference checks them.
export interface ChatMessage {
  role?: unknown;
  content?: unknown;
}

export interface ChatFunction {
  name?: string;
  parameters?: { required?: string[] };
}

export interface ChatTool {
  function?: ChatFunction;
}

export interface ChatBody {
  model?: unknown;
  messages?: ChatMessage[];
  stream?: unknown;
  stream_options?: { include_usage?: unknown } | null;
  tools?: ChatTool[];
  tool_choice?: unknown;
  /** The legacy form of tools (OpenAI's `functions` + `function_call`). */
  functions?: ChatFunction[];
  function_call?: unknown;
  temperature?: unknown;
  max_tokens?: unknown;
}

export interface EmbeddingsBody {
  model?: unknown;
  input?: unknown;
  encoding_format?: unknown;
}

export interface RerankBody {
  model?: unknown;
  query?: unknown;
  documents?: unknown[];
  top_n?: number;
}
