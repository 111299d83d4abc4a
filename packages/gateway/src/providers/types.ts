// The one small interface every provider adapter implements. Adapters say
// where a request goes and with which headers; the relay does the rest for the
// providers that speak the OpenAI wire format. Those with their own (Anthropic,
// Gemini) also carry `wire`: pure translators to and from it (wire.ts).
import type { WireAdapter } from './wire.js';

export type { ChannelOptions, Endpoint, UpstreamTarget } from './channel.js';
import type { ChannelOptions, Endpoint, UpstreamTarget } from './channel.js';

export interface Provider {
  type: string;
  label: string;
  /** Where it lives when the operator names no base URL. */
  defaultBaseUrl?: string;
  keyRequired: boolean;
  streamUsageDefault: boolean;
  endpoints: readonly Endpoint[];
  target(endpoint: Endpoint, upstreamModel: string, channel: { baseUrl: string; key: string; options: ChannelOptions }): UpstreamTarget;
  /** Set for providers whose wire format is not OpenAI's: requests and answers go through it. */
  wire?: WireAdapter;
  /**
   * Its 4xx answers (other than 401/403/429) are about the request itself, in
   * the OpenAI envelope: the caller gets them as its own error, with the
   * provider's code, not as an upstream failure. Set for kbchat's own local
   * model server, whose limits are then the gateway's edge for those models.
   */
  requestErrorsAreCallers?: boolean;
  /**
   * The caller's X-Kbchat-Priority (bulk or interactive: the platform marks its
   * indexing calls bulk) goes with embeddings requests to it. Set for kbchat's
   * own local model server only, which picks its queue by it; a third party
   * gets no header of kbchat's.
   */
  relaysPriority?: boolean;
}

/** What kind of model a name is, when the channel does not say. */
export function endpointOfModel(model: string, options?: ChannelOptions): Endpoint {
  const declared = options?.modelTypes?.[model];
  if (declared) return declared;
  if (/rerank/i.test(model)) return 'rerank';
  if (/embed|bge-(small|base|large|m3)|e5-/i.test(model)) return 'embeddings';
  return 'chat';
}

export const endpointPath: Record<Endpoint, string> = {
  chat: '/chat/completions',
  embeddings: '/embeddings',
  rerank: '/rerank',
};

export function joinUrl(base: string, path: string): string {
  return base.replace(/\/+$/, '') + path;
}
